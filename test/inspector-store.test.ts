import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InspectionStore, type InspectorMessage } from '../inspector/inspection-store.ts';
import { inspectorPlugin } from '../inspector/inspector-plugin.ts';
import { toGraphModel } from '../machines/diagram/graph-model.ts';
import { runMachine } from '../machines/run-machine.ts';
import { type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

const graph = toGraphModel(runMachine);
const edgeTo = (source: string, guard: string) =>
  graph.edges.find((edge) => edge.source === source && edge.guard === guard)!.id;

function clarifyingRuntime(secret = 'sk-live-123') {
  const inspector = inspectorPlugin({ serve: false });
  const planner = scriptedPlanner([
    { await: { clarification: { id: 'plan', question: 'Which plan?', missingFields: ['plan'] } } },
    { finalResponse: { text: 'Done: pro' } },
  ]);
  const runtime = createRuntime({
    agent: { id: 'support' },
    planner,
    plugins: [inspector],
    telemetry: false,
  });
  const run = runtime.start({
    runId: 'run-1',
    messages: [{ role: 'user', content: 'hi' }],
    labels: { apiKey: secret },
  });
  return { inspector, runtime, run };
}

const until = async (check: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('InspectionStore fed by the inspector plugin (native inspection events)', () => {
  it('tracks active states and matches the microstep just taken to its edge id', async () => {
    const { inspector, run } = clarifyingRuntime();
    await until(() => run.status === 'awaiting');
    const view = inspector.store.run('run-1')!;
    expect(view.source).toBe('native');
    expect(view.status).toBe('awaiting');
    expect(view.agentId).toBe('support');
    expect(view.activeStates).toEqual(['run', 'run.awaiting', 'run.awaiting.clarification']);
    expect(view.lastTransition).toMatchObject({
      edgeIds: [edgeTo('run.planning', 'planAwaitsClarification')],
      event: 'plan.done',
    });
  });

  it('lists a macrostep through transient states as a connected chain of edges', async () => {
    const { inspector, run } = clarifyingRuntime();
    await until(() => run.status === 'awaiting');
    const seen: string[][] = [];
    inspector.store.subscribe((message) => {
      const transition =
        message.type === 'run'
          ? message.run.lastTransition
          : message.type === 'update'
            ? message.changes.lastTransition
            : undefined;
      if (transition) seen.push(transition.edgeIds);
    });
    await run.provideClarification({ id: 'plan', answer: 'pro' });
    await run.result();
    const edges = new Map(graph.edges.map((edge) => [edge.id, edge]));
    const all = [...new Set(seen.flat())];
    for (const id of all) expect(edges.has(id)).toBe(true);
    expect(all[0]).toBe(edgeTo('run.awaiting.clarification', 'isClarificationAnswer'));
    for (const chain of seen) {
      for (let i = 1; i < chain.length; i++) {
        const before = edges.get(chain[i - 1]!)!;
        const source = edges.get(chain[i]!)!.source;
        expect(before.targets.some((target) => source === target || source.startsWith(`${target}.`))).toBe(
          true,
        );
      }
    }
    expect(inspector.store.run('run-1')).toMatchObject({
      status: 'completed',
      activeStates: ['run', 'run.completed'],
    });
  });

  it('keeps the RunEvents as the log, in order, sanitized', async () => {
    const { inspector, run } = clarifyingRuntime('sk-live-123');
    const events = firstValueFrom(run.events$.pipe(toArray()));
    await until(() => run.status === 'awaiting');
    await run.provideClarification({ id: 'plan', answer: 'pro' });
    const types = (await events).map((event) => event.type);
    const log = inspector.store.log('run-1');
    expect(log.map((entry) => entry.type)).toEqual(types);
    expect(log.every((entry) => entry.kind === 'run_event')).toBe(true);
    expect(log.map((entry) => entry.seq)).toEqual([...log.map((entry) => entry.seq)].sort((a, b) => a - b));
    expect(JSON.stringify(log)).not.toContain('sk-live-123');
    expect(JSON.stringify(inspector.store.run('run-1')!.context)).not.toContain('sk-live-123');
  });
});

describe('InspectionStore fed by @statelyai/inspect events', () => {
  const actor = (sessionId: string, runId: string) => ({
    type: '@xstate.actor',
    name: 'run',
    sessionId,
    rootId: sessionId,
    snapshot: { status: 'active', value: 'planning', context: { runId } },
  });
  const snapshot = (sessionId: string, runId: string, value: unknown, event: string) => ({
    type: '@xstate.snapshot',
    sessionId,
    rootId: sessionId,
    event: { type: event },
    snapshot: { status: 'active', value, context: { runId, password: 'p' } },
  });

  it('infers the transition taken from two snapshots and logs events and state changes', () => {
    const store = new InspectionStore({ graph });
    store.receiveStately(actor('x:0', 'r1'), 'ws1');
    store.receiveStately(
      {
        type: '@xstate.event',
        sessionId: 'x:0',
        rootId: 'x:0',
        event: { type: 'plan.done' },
      },
      'ws1',
    );
    store.receiveStately(snapshot('x:0', 'r1', { awaiting: 'clarification' }, 'plan.done'), 'ws1');
    const view = store.run('r1')!;
    expect(view).toMatchObject({ source: 'stately', status: 'awaiting', machineId: 'run' });
    expect(view.activeStates).toEqual(['run', 'run.awaiting', 'run.awaiting.clarification']);
    expect(view.lastTransition?.edgeIds).toEqual([edgeTo('run.planning', 'planAwaitsClarification')]);
    expect(view.context).toEqual({ runId: 'r1' });
    expect(store.log('r1').map((entry) => [entry.kind, entry.type])).toEqual([
      ['xstate_event', 'plan.done'],
      ['state', 'state_changed'],
    ]);
    expect(store.log('r1')[1]!.data).toEqual({ state: 'awaiting.clarification', previous: 'planning' });
  });

  it('follows always transitions through transient states', () => {
    const store = new InspectionStore({ graph });
    store.receiveStately(actor('x:0', 'r1'), 'ws1');
    store.receiveStately(snapshot('x:0', 'r1', { awaiting: 'backoff' }, 'x'), 'ws1');
    const done = graph.edges.find(
      (edge) => edge.source === 'run.awaiting.backoff' && edge.eventType === 'sleep.done',
    )!;
    store.receiveStately(snapshot('x:0', 'r1', 'planning', done.eventType), 'ws1');
    expect(store.run('r1')!.lastTransition?.edgeIds).toEqual([done.id]);
  });

  it('tells runs apart when actor systems reuse session ids', () => {
    const store = new InspectionStore({ graph });
    store.receiveStately(actor('x:0', 'first'), 'ws1');
    store.receiveStately(actor('x:0', 'second'), 'ws1');
    store.receiveStately(snapshot('x:0', 'second', 'validating', 'e'), 'ws1');
    expect(
      store
        .runs()
        .map((run) => run.runId)
        .sort(),
    ).toEqual(['first', 'second']);
    expect(store.run('first')!.activeStates).toEqual(['run', 'run.planning']);
    expect(store.run('second')!.activeStates).toEqual(['run', 'run.validating']);
  });

  it('ignores child actors and malformed messages', () => {
    const store = new InspectionStore({ graph });
    store.receiveStately({ ...actor('x:1', 'child'), rootId: 'x:0', parentId: 'x:0' }, 'ws1');
    for (const junk of [null, 42, 'text', { type: 1 }, { type: '@xstate.snapshot' }])
      store.receiveStately(junk, 'ws1');
    expect(store.runs()).toEqual([]);
  });
});

describe('InspectionStore bounds', () => {
  it('evicts the oldest finished run past maxRuns and tells listeners', () => {
    let clock = 0;
    const store = new InspectionStore({ graph, maxRuns: 2, now: () => ++clock });
    const messages: InspectorMessage[] = [];
    store.subscribe((message) => messages.push(message));
    store.recordRunEvent({ type: 'run_started', runId: 'a', at: 1, agentId: 'x', labels: {} });
    store.recordRunEvent({ type: 'run_started', runId: 'b', at: 2, agentId: 'x', labels: {} });
    store.recordRunEvent({ type: 'run_canceled', runId: 'b', at: 3 });
    store.recordRunEvent({ type: 'run_started', runId: 'c', at: 4, agentId: 'x', labels: {} });
    expect(store.runs().map((run) => run.runId)).toEqual(['c', 'a']);
    expect(messages).toContainEqual({ type: 'removed', key: 'b' });
  });

  it('keeps at most maxLog entries per run and counts the dropped ones', () => {
    const store = new InspectionStore({ graph, maxLog: 3 });
    for (let i = 0; i < 5; i++)
      store.recordRunEvent({ type: 'planner_note', runId: 'a', at: i, turnId: 't', note: `n${i}` });
    expect(store.log('a').map((entry) => (entry.data as { note: string }).note)).toEqual(['n2', 'n3', 'n4']);
    expect(store.run('a')!.dropped).toBe(2);
  });
});

describe('InspectionStore outcomes (issue 27 item 2)', () => {
  class QuotaExceededError extends Error {
    override name = 'QuotaExceededError';
  }
  const lookup = defineTool({
    id: 'crm.lookup',
    description: 'Looks a customer up',
    input: z.object({ email: z.string() }),
    execute: async ({ email }) => ({ email, plan: 'pro' }),
  });
  const call = { toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com' } }] };

  async function outcomeOf(steps: ScriptedStep[], options: { maxToolCalls?: number; cancel?: boolean } = {}) {
    const inspector = inspectorPlugin({ serve: false });
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner: scriptedPlanner(steps),
      tools: [lookup],
      plugins: [inspector],
      telemetry: false,
      ...(options.maxToolCalls ? { caps: { maxToolCalls: options.maxToolCalls } } : {}),
    });
    const run = runtime.start({ runId: 'r', messages: [{ role: 'user', content: 'hi' }] });
    if (options.cancel) {
      await until(() => run.status === 'awaiting');
      run.cancel('the customer hung up');
    }
    await run.result();
    await runtime.close();
    return inspector.store.summary('r')!.outcome;
  }

  it('a planner that throws: the error’s name, message and the step and turn it failed in', async () => {
    const outcome = await outcomeOf([
      call,
      async () => {
        throw new QuotaExceededError('model quota exceeded for today');
      },
    ]);
    expect(outcome).toEqual({
      kind: 'failed',
      errorName: 'QuotaExceededError',
      message: 'Planner failed: model quota exceeded for today',
      step: 'planning',
      turnId: 'r:t2',
      event: 'plan.error',
    });
  });

  it('a run capped by maxToolCalls: the cap and the step where it was reached; a canceled run: the reason', async () => {
    const capped = await outcomeOf([call, { finalResponse: { text: 'partial' } }], { maxToolCalls: 1 });
    expect(capped).toMatchObject({ kind: 'capped', message: 'tool_cap', step: 'executing' });
    const canceled = await outcomeOf(
      [{ await: { clarification: { id: 'q', question: 'Which plan?', missingFields: [] } } }],
      { cancel: true },
    );
    expect(canceled).toMatchObject({
      kind: 'canceled',
      message: 'the customer hung up',
      step: 'awaiting.clarification',
    });
    expect(await outcomeOf([{ finalResponse: { text: 'fine' } }])).toBeUndefined();
  });
});

/** A CRM lookup that always finds Ada on pro. */
const lookupTool = () =>
  defineTool({
    id: 'crm.lookup',
    description: 'Looks a customer up',
    input: z.object({ email: z.string() }),
    execute: async () => ({ plan: 'pro' }),
  });

describe('what the runs list shows of a run: session, tokens, when it ended', () => {
  it('sums the tokens its planner turns report, keeps its session and the time it ended', async () => {
    const inspector = inspectorPlugin({ serve: false });
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner: scriptedPlanner([
        {
          toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com' } }],
          usage: { inputTokens: 320, outputTokens: 18 },
        },
        { finalResponse: { text: 'Ada is on pro.' }, usage: { inputTokens: 410, outputTokens: 9 } },
      ]),
      tools: [lookupTool()],
      plugins: [inspector],
      telemetry: false,
    });
    const outcome = await runtime
      .start({ runId: 'counted', sessionId: 'thread-7', messages: [{ role: 'user', content: 'Ada?' }] })
      .result();
    expect(outcome.status).toBe('completed');
    const summary = inspector.store.summary('counted')!;
    expect(summary.tokens).toEqual({ input: 730, output: 27 });
    expect(summary.sessionId).toBe('thread-7');
    expect(summary.endedAt).toBeGreaterThanOrEqual(summary.startedAt);
    // The session is searchable as the page's box spells it.
    expect(inspector.store.page({ text: 'session=thread-7' }).runs.map((run) => run.runId)).toEqual([
      'counted',
    ]);
    expect(inspector.store.page({ text: 'session=thread-8' }).runs).toEqual([]);
    await runtime.close();
  });

  it("sums the money its planner turns report (planner_turn.cost) for the list, and keeps each turn's for the timeline", async () => {
    const inspector = inspectorPlugin({ serve: false });
    const cost = (amount: number, spent: number) => ({ currency: 'USD', amount, spent, limit: 0.05 });
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner: scriptedPlanner([
        {
          toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com' } }],
          usage: { inputTokens: 320, outputTokens: 18 },
          cost: cost(0.0012, 0.0012),
        },
        {
          finalResponse: { text: 'Ada is on pro.' },
          usage: { inputTokens: 410, outputTokens: 9 },
          cost: cost(0.0019, 0.0031),
        },
      ]),
      tools: [lookupTool()],
      plugins: [inspector],
      telemetry: false,
    });
    await runtime.start({ runId: 'priced', messages: [{ role: 'user', content: 'Ada?' }] }).result();
    const summary = inspector.store.summary('priced')!;
    expect(summary.cost?.currency).toBe('USD');
    expect(summary.cost?.amount).toBeCloseTo(0.0031, 10);
    const turns = inspector.store.log('priced').filter((entry) => entry.type === 'planner_turn');
    expect(turns.map((entry) => (entry.data as { cost?: unknown }).cost)).toEqual([
      cost(0.0012, 0.0012),
      cost(0.0019, 0.0031),
    ]);
    await runtime.close();
  });
});
