import { describe, expect, it } from 'vitest';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { MAX_CONTEXT_KEYS } from '../machines/run-context.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { type RunEvent, RunEventSchema } from '../run/run-events.ts';
import { allEvents, call, done, echoTool, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Echo hi' }];

function simpleRun() {
  const planner = scriptedPlanner([
    { ...call('util.echo', { text: 'hi' }, 'c1'), notes: ['echoing first'] },
    done('It said hi.'),
  ]);
  return testRuntime({ planner, tools: [echoTool] });
}

const summary = (event: RunEvent) =>
  event.type === 'state_changed' ? `state_changed ${event.previous ?? '∅'} → ${event.state}` : event.type;

describe('events$', () => {
  it('gives a subscriber attaching right after start every event from run_started on', async () => {
    const run = simpleRun().start({ messages: prompt, labels: { tenant: 'acme' } });
    const seen: RunEvent[] = [];
    let completed = false;
    run.events$.subscribe({ next: (event) => seen.push(event), complete: () => (completed = true) });

    await run.result();
    const replayed = await allEvents(run);

    expect(seen[0]).toMatchObject({
      type: 'run_started',
      runId: run.runId,
      agentId: 'test-agent',
      labels: { tenant: 'acme' },
    });
    expect(seen).toEqual(replayed);
    expect(completed).toBe(true);
  });

  it('emits only events that pass RunEventSchema', async () => {
    const run = simpleRun().start({ messages: prompt });

    const events = await allEvents(run);

    for (const event of events) expect(RunEventSchema.safeParse(event).error).toBeUndefined();
    expect(events.every((event) => event.runId === run.runId && Number.isFinite(event.at))).toBe(true);
  });

  it('reports a simple run in this order', async () => {
    const run = simpleRun().start({ messages: prompt });

    const events = await allEvents(run);

    expect(events.map(summary)).toEqual([
      'run_started',
      'state_changed ∅ → planning',
      'planner_turn',
      'planner_note',
      'tool_call_scheduled',
      'state_changed planning → executing',
      'tool_result',
      'state_changed executing → planning',
      'planner_turn',
      'state_changed planning → completed',
      'run_completed',
    ]);
    expect(events.find((e) => e.type === 'tool_call_scheduled')).toMatchObject({
      toolCallId: `${run.runId}:t1:c1`,
      tool: 'util.echo',
      attempt: 1,
      turnId: `${run.runId}:t1`,
    });
    expect(events.find((e) => e.type === 'run_completed')).toMatchObject({
      finalResponse: { text: 'It said hi.' },
    });
  });

  it('shows the policy steps as states when the runtime has policies', async () => {
    const planner = scriptedPlanner([call('util.echo', { text: 'hi' }), done()]);
    const policyRunner = {
      onToolBatch: async () => ({ decisions: [] }),
      onResults: async () => ({ decisions: [] }),
    };
    const run = testRuntime({ planner, tools: [echoTool], policyRunner }).start({ messages: prompt });

    const states = (await allEvents(run)).flatMap((e) => (e.type === 'state_changed' ? [e.state] : []));

    expect(states).toEqual([
      'planning',
      'validating.policies',
      'executing',
      'resuming.policies',
      'planning',
      'completed',
    ]);
  });
});

describe('the inspect option', () => {
  it('reaches every actor (the run actor and its `steps` actor) and every request and answer between them', async () => {
    const inspected: InspectionEvent[] = [];
    const planner = scriptedPlanner([call('util.echo', { text: 'hi' }, 'c1'), done()]);
    const runtime = testRuntime({ planner, tools: [echoTool], inspect: (event) => inspected.push(event) });
    const run = runtime.start({ messages: prompt });

    await run.result();

    const root = run.actor;
    const created = inspected.filter((e) => e.type === '@xstate.actor').map((e) => e.actorRef as AnyActorRef);
    const children = created.filter((ref) => ref !== root);
    expect(created).toContain(root);
    expect(children.map((ref) => ref.id)).toEqual(['steps']);
    const steps = children[0]!;
    expect(steps._parent).toBe(root);
    const between = inspected
      .filter((e): e is InspectionEvent & { type: '@xstate.event' } => e.type === '@xstate.event')
      .filter((e) => e.event.type !== 'xstate.init' && (e.sourceRef === root || e.sourceRef === steps))
      .map((e) => ({
        from: e.sourceRef === root ? 'run' : 'steps',
        type: e.event.type,
        toolCallId:
          (e.event as { calls?: { call: { toolCallId: string } }[] }).calls?.[0]?.call.toolCallId ??
          (e.event as { output?: { result?: { toolCallId?: string } } }).output?.result?.toolCallId,
      }));
    // Each planner turn and the tool call is a request to `steps` and its answer, the call named.
    const toolCallId = `${run.runId}:t1:c1`;
    expect(between).toEqual([
      { from: 'run', type: 'plan', toolCallId: undefined },
      { from: 'steps', type: 'plan.done', toolCallId: undefined },
      { from: 'run', type: 'tools', toolCallId },
      { from: 'steps', type: 'tool.done', toolCallId },
      { from: 'run', type: 'plan', toolCallId: undefined },
      { from: 'steps', type: 'plan.done', toolCallId: undefined },
    ]);
    expect(inspected.some((e) => e.type === '@xstate.snapshot' && e.actorRef === steps)).toBe(true);
  });
});

describe('the run context', () => {
  it(`keeps at most ${MAX_CONTEXT_KEYS} top-level keys, so XState's assigns keep it a fast V8 object`, async () => {
    const run = simpleRun().start({ messages: prompt, sessionId: 's1' });

    await run.result();

    expect(Object.keys(run.context).length).toBeLessThanOrEqual(MAX_CONTEXT_KEYS);
  });
});
