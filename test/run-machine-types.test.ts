import {
  type AwaitConfirmationEvent,
  type RunCompletedEvent,
  type RunContext,
  type RunEvent,
  RunEventSchema,
  type RunMachine,
  type RunMachineEvent,
  type RunStateValue,
  runMachine,
} from 'toolwarden';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type Actor, createActor, type InspectionEvent, type SnapshotFrom } from 'xstate';
import type { RunInput } from '../machines/run-context.ts';
import { runSteps } from '../machines/run-steps.ts';

/**
 * `runMachine` and `RunEventSchema` are declared with written types (issue 28 item 4: each was
 * over 5 KB of inlined XState / zod inference in dist/*.d.ts). An app using them keeps the typing
 * XState and zod gave: these checks are compiled by `tsc` (test/ is in tsconfig.json), and the
 * machine is run through `createActor` with `inspect` as an app would.
 */
const input: RunInput = {
  runId: 'typed-run',
  agent: { id: 'typed' },
  messages: [{ role: 'user', content: 'hi' }],
  caps: { maxToolCalls: 3, maxConsecutiveFailedToolCalls: 2, maxRetriesPerTool: 2, timeBudgetMs: 60_000 },
};

describe('runMachine typing (as an app uses it)', () => {
  it('types the actor, its snapshot, its events and what it emits', () => {
    expectTypeOf(runMachine).toEqualTypeOf<RunMachine>();
    const actor = createActor(runMachine, { input });
    expectTypeOf(actor).toEqualTypeOf<Actor<RunMachine>>();
    const snapshot = actor.getSnapshot();
    expectTypeOf(snapshot).toEqualTypeOf<SnapshotFrom<RunMachine>>();
    expectTypeOf(snapshot.context).toEqualTypeOf<RunContext>();
    expectTypeOf(snapshot.value).toEqualTypeOf<RunStateValue>();
    expectTypeOf(snapshot.matches).toBeCallableWith('completed');
    expectTypeOf(snapshot.matches).toBeCallableWith({ awaiting: 'backoff' });
    // @ts-expect-error: not a state of the run machine
    snapshot.matches({ awaiting: 'nowhere' });
    expectTypeOf(actor.send).parameter(0).toEqualTypeOf<RunMachineEvent>();
    // @ts-expect-error: not an event of the run machine
    actor.send({ type: 'provide.nothing' });
    actor.on('run_completed', (event) => expectTypeOf(event).toExtend<RunCompletedEvent>());
    actor.on('await_confirmation', (event) =>
      expectTypeOf(event.confirmation.question).toEqualTypeOf<string | undefined>(),
    );
    actor.on('*', (event) => expectTypeOf(event).toEqualTypeOf<RunEvent>());
    // @ts-expect-error: the machine emits no such event
    actor.on('run_exploded', () => {});
  });

  it('types provide(): the guards, actions and actors the machine has, and no others', () => {
    const provided = runMachine.provide({
      guards: { consultsPolicies: () => false, reviewsResults: ({ context }) => context.turn > 1 },
      actions: { finalizeWith: (_, params) => expectTypeOf(params).toEqualTypeOf<{ reason: string }>() },
      actors: { runSteps: runSteps() },
    });
    expectTypeOf(provided).toEqualTypeOf<RunMachine>();
    // @ts-expect-error: no such guard
    runMachine.provide({ guards: { isWeekend: () => true } });
    // @ts-expect-error: no such action
    runMachine.provide({ actions: { launch: () => {} } });
  });

  it('runs through createActor with inspect, emitting events RunEventSchema accepts', async () => {
    const machine = runMachine.provide({
      actors: {
        runSteps: runSteps({ plan: async () => ({ result: { finalResponse: { text: 'typed' } } }) }),
      },
      guards: { consultsPolicies: () => false, reviewsResults: () => false },
    });
    const inspected: InspectionEvent['type'][] = [];
    const actor = createActor(machine, { input, inspect: (event) => inspected.push(event.type) });
    const emitted: RunEvent[] = [];
    actor.on('*', (event) => emitted.push(RunEventSchema.parse(event)));
    actor.start();
    await new Promise<void>((resolve) => actor.subscribe({ complete: resolve }));
    const snapshot = actor.getSnapshot();
    expect(snapshot.value).toBe('completed');
    expect(snapshot.context.flow.finalResponse?.text).toBe('typed');
    expect(emitted.map((event) => event.type)).toEqual(['planner_turn', 'run_completed']);
    expect(inspected).toContain('@xstate.snapshot');
  });
});

describe('RunEventSchema typing', () => {
  it('parses to RunEvent, narrowed by type', () => {
    const event = RunEventSchema.parse({
      type: 'await_confirmation',
      runId: 'r',
      at: 1,
      confirmation: { id: 'c', prompt: 'Go?', question: 'Go?' },
    });
    expectTypeOf(event).toEqualTypeOf<RunEvent>();
    expect(event.type).toBe('await_confirmation');
    if (event.type === 'await_confirmation') expectTypeOf(event).toEqualTypeOf<AwaitConfirmationEvent>();
    expectTypeOf(RunEventSchema.safeParse({}).data).toEqualTypeOf<RunEvent | undefined>();
    expect(RunEventSchema.safeParse({ type: 'run_completed', runId: 'r', at: 1 }).success).toBe(false);
  });
});
