import { describe, expect, it } from 'vitest';
import { type AnyActorLogic, type AnyActorRef, createActor, type InspectionEvent, toPromise } from 'xstate';
import type { Message } from '../../run/message.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { chartFloorMachine } from './chart-floor.ts';
import { addTool, resettablePlanner } from './reference-loop.ts';

const STEPS = 3;

/** A state value as a dotted path: `{ validating: 'checking' }` → `validating.checking`. */
const path = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Object.entries(value as Record<string, unknown>)
        .map(([key, child]) => `${key}.${path(child)}`)
        .join(',');

/**
 * Runs `logic` to its end, watching it with XState's inspection API: the root's microsteps (the
 * state entered, the event that took it there: `''` for an `always` transition), the events
 * between the root and its children, the actors created, and each transcript the root's
 * context held, with its length when it was seen.
 */
async function inspectRun(logic: AnyActorLogic, input: unknown) {
  const microsteps: [string, string][] = [];
  const events: string[] = [];
  const actors: unknown[] = [];
  const transcripts: [readonly Message[], number][] = [];
  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.actor') actors.push(event.actorRef);
    if (event.type === '@xstate.event' && event.sourceRef && event.event.type !== 'xstate.init')
      events.push(event.event.type);
    if (event.type !== '@xstate.microstep' || event.actorRef !== root) return;
    const transitions = (event as unknown as { _transitions: { eventType: string }[] })._transitions;
    microsteps.push([
      path((event.snapshot as unknown as { value: unknown }).value),
      transitions.map((t) => t.eventType).join(','),
    ]);
    const messages = (event.snapshot as unknown as { context: { messages: readonly Message[] } }).context
      .messages;
    transcripts.push([messages, messages.length]);
  };
  const root: AnyActorRef = createActor(logic, { input, inspect });
  const done = toPromise(root);
  root.start();
  await done.catch(() => undefined);
  const snapshot = root.getSnapshot();
  return { microsteps, events, actors, transcripts, snapshot };
}

/** What one step of the chart takes: five of its seven microsteps are `always` transitions. */
const oneStep: [string, string][] = [
  ['validating.checking', 'plan.done'],
  ['admitting', ''],
  ['executing', ''],
  ['executing', 'tool.done'],
  ['resuming.checking', ''],
  ['routing', ''],
  ['planning', ''],
];

describe('the chart floor (bench yardstick)', () => {
  it('visits planning → validating.checking → admitting → executing → resuming.checking → routing each step, five hops by always', async () => {
    const { microsteps, snapshot } = await inspectRun(chartFloorMachine, { steps: STEPS });
    expect(microsteps).toEqual([
      ...Array.from({ length: STEPS }, () => oneStep).flat(),
      ['completed', 'plan.done'],
    ]);
    expect(microsteps.filter(([, event]) => event === '')).toHaveLength(5 * STEPS);
    expect(snapshot.output).toEqual({ text: 'done', messages: 2 * STEPS + 2 });
  });

  it('has one child actor for the whole run, asked by plan and tools events and answering by event', async () => {
    const { actors, events } = await inspectRun(chartFloorMachine, { steps: STEPS });
    expect(actors).toHaveLength(2);
    expect(events).toEqual([
      ...Array.from({ length: STEPS }, () => ['plan', 'plan.done', 'tools', 'tool.done']).flat(),
      'plan',
      'plan.done',
    ]);
  });

  it('appends to the transcript without changing an earlier one, with each call’s parsed args and the tool’s result', async () => {
    const { transcripts, snapshot } = await inspectRun(chartFloorMachine, { steps: STEPS });
    for (const [messages, length] of transcripts) expect(messages).toHaveLength(length);
    const messages = (snapshot as unknown as { context: { messages: Message[] } }).context.messages;
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      { sum: 2 },
      { sum: 3 },
      { sum: 4 },
    ]);
  });

  it('takes the same states, microsteps and events per step as the run machine without policies', async () => {
    const runtime = createRuntime({
      agent: { id: 'bench' },
      planner: resettablePlanner(STEPS),
      tools: [addTool],
      telemetry: false,
    });
    const machine = await inspectRun(runtime.machine, {
      runId: 'same-states',
      agent: { id: 'bench' },
      messages: [{ role: 'user', content: 'Add the numbers' }],
      caps: runtime.caps,
    });
    await runtime.close();
    const floor = await inspectRun(chartFloorMachine, { steps: STEPS });
    expect(machine.snapshot.value).toBe('completed');
    expect(floor.microsteps).toEqual(machine.microsteps);
    expect(floor.events).toEqual(machine.events);
    expect(floor.actors).toHaveLength(machine.actors.length);
  });
});
