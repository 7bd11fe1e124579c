/**
 * Model-based tests of the run machine with `xstate/graph`: the machine is traversed with the
 * outcomes each of its ports can have (a planner's results, a batch check, a tool's result, a
 * policy review, a backoff's end), a restore of its `steps` actor, and the answers an app can
 * send, and every path found is replayed on a real actor of the machine whose real `steps` actor
 * calls stub ports that settle with the outcome the path chose. Coverage is read from the real actor's `@xstate.microstep` inspection
 * events: every state node and every transition (`always` ones included) must be taken.
 */
import { describe, expect, it } from 'vitest';
import {
  type AnyActorRef,
  type AnyStateNode,
  type AnyTransitionDefinition,
  createActor,
  type InspectionEvent,
  type SnapshotFrom,
  waitFor,
} from 'xstate';
import { type AdjacencyMap, getAdjacencyMap, getShortestPaths, type StatePath } from 'xstate/graph';
import { z } from 'zod';
import { noPolicies } from '../policies/policy-runner.ts';
import type { Planner } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { NO_EFFECTS } from '../run/policy-effects.ts';
import { validateCalls } from '../runtime/steps/validate-batch.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { inDoubtCallsToReview } from './in-doubt-outcomes.ts';
import type { PendingCall, RunContext, RunInput } from './run-context.ts';
import { type RunMachineEvent, runMachine, validateCallsAction } from './run-machine.ts';
import type { ValidateBatchOutput } from './run-ports.ts';
import { runSteps } from './run-steps.ts';

const catalog = new ToolCatalog([
  defineTool({
    id: 'util.echo',
    description: 'Echo',
    input: z.object({ text: z.string() }),
    execute: async (i) => i,
  }),
  // Runs while other calls of its batch wait for approval (docs/policies.md §Mixed batches).
  defineTool({
    id: 'util.first',
    description: 'Runs ahead of an approval',
    input: z.object({}),
    approvals: { runUnapproved: 'parallel' },
    execute: async () => ({ ok: true }),
  }),
  defineTool({
    id: 'ops.guarded',
    description: 'Needs approval',
    input: z.object({}),
    requiresConfirmation: true,
    execute: async () => ({ ok: true }),
  }),
  // No `execute`: the app runs it, the run awaits it (awaiting.externalTools).
  defineTool({ id: 'app.mail', description: 'Sent by the app', input: z.object({}) }),
]);
const unusedPlanner: Planner = {
  planStart: () => Promise.reject(new Error('stubbed')),
  planResume: () => Promise.reject(new Error('stubbed')),
};
const deps = { catalog, planner: unusedPlanner, policies: noPolicies, plugins: [], finalizeGraceMs: 0 };

/** The requests in flight, by port (`plan`, `validate`, `review`, `sleep`) or `tool.<toolCallId>`. */
const stubs = new Map<string, { resolve: (output: unknown) => void; reject: (error: unknown) => void }>();
const stub =
  <T>(key: (input: T) => string) =>
  ({ input }: { input: T }) =>
    new Promise<never>((resolve, reject) => stubs.set(key(input), { resolve, reject } as never));

/**
 * The machine under test: the real machine definition with its real `validateCalls` action (the
 * tool boundary over a real catalog), stub actors, and a `consultsPolicies` guard read from the
 * run's labels, so one traversal can take either branch.
 */
const machine = runMachine.provide({
  actors: {
    runSteps: runSteps({
      plan: stub(() => 'plan'),
      validateBatch: stub(() => 'validate'),
      executeTool: stub(({ call }) => `tool.${call.toolCallId}`),
      reviewResults: stub(() => 'review'),
      sleepUntil: stub(() => 'sleep'),
    }),
  },
  actions: { validateCalls: validateCallsAction((context) => validateCalls(deps, context, NO_EFFECTS)) },
  guards: {
    consultsPolicies: ({ context }) => context.labels.policies === 'on',
    reviewsResults: ({ context }) => context.labels.policies === 'on',
    inDoubtToReview: ({ context }) =>
      context.labels.policies === 'on' && inDoubtCallsToReview(context).length > 0,
  },
});
type Snapshot = SnapshotFrom<typeof machine>;

const PLAN = 'plan';
const FINAL = 'plan';
const VALIDATE = 'validate';
const REVIEW = 'review';

const done = (port: string, output: unknown) => ({ type: `${port}.done`, output }) as RunMachineEvent;
const failed = (port: string, error: string) => ({ type: `${port}.error`, error }) as RunMachineEvent;
const echo = (text: unknown) => ({ name: 'util.echo', input: { text } });

/** What a planner turn can give: every branch of `planning`'s onDone, and a failure. */
function planOutcomes(context: RunContext): RunMachineEvent[] {
  // A setting of its own: a mixed batch, one call running first while the other waits for approval.
  if (context.labels.pair === 'mixed') {
    const mixed = {
      toolCalls: [
        { name: 'util.first', input: {} },
        { name: 'ops.guarded', input: {} },
      ],
    };
    return [mixed, { finalResponse: { text: 'done' } }].map((result) => done(PLAN, { result }));
  }
  // The setting of its own: a batch of two, one call asking a person while the other ends.
  if (context.labels.pair === 'on') {
    return [{ toolCalls: [echo('a'), echo('b')] }, { finalResponse: { text: 'done' } }].map((result) =>
      done(PLAN, { result }),
    );
  }
  const results = [
    { toolCalls: [echo('hi')] },
    { toolCalls: [echo('costly')], usage: { inputTokens: 90, outputTokens: 20 } }, // past maxTotalTokens
    { toolCalls: [echo(42)] }, // rejected by the tool boundary
    { toolCalls: [{ name: 'ops.guarded', input: {} }] },
    { toolCalls: [{ name: 'app.mail', input: {} }] }, // an external tool's call: awaited
    { toolCalls: [echo('a'), echo('b'), echo('c'), echo('d')] }, // past maxToolCalls
    { toolCalls: [echo('a'), echo('b'), echo('c'), echo('d'), echo('e')] }, // past maxCallsPerBatch
    { await: { clarification: { id: 'q', question: 'Which?', missingFields: [] } } },
    { await: { externalTools: { id: 'x', calls: [{ name: 'app.lookup', toolCallId: 'x1', input: {} }] } } },
    { await: { confirmation: { id: 'c', prompt: 'Go?' } } },
    { finalResponse: { text: 'done' } },
    { declined: { reason: 'budget_exhausted' } }, // a wrapPlan hook did not take the turn
    {},
  ];
  return [
    done(PLAN, { timedOut: true }),
    done(PLAN, { result: { toolCalls: 'not a list' } }),
    ...results.map((result) => done(PLAN, { result })),
    failed(PLAN, 'planner down'),
  ];
}

function finalizeOutcomes(): RunMachineEvent[] {
  return [
    done(FINAL, { timedOut: true }),
    done(FINAL, { result: { finalResponse: { text: 'final' } } }),
    done(FINAL, { result: { toolCalls: [echo('more')] } }),
    failed(FINAL, 'planner down'),
  ];
}

/** What the policy-consulting batch check can decide. */
function validateOutcomes(context: RunContext): RunMachineEvent[] {
  const { pending } = context.batch;
  const as = (
    status: PendingCall['status'],
    effects: PolicyEffects = { decisions: [] },
  ): ValidateBatchOutput => ({
    pending: pending.map((call) => ({ ...call, status, preparedInput: {} })),
    results: pending.map((call) =>
      status === 'rejected'
        ? {
            name: call.name,
            toolCallId: call.toolCallId,
            executed: false,
            error: { name: 'ToolError', message: 'no', recoverable: true },
          }
        : null,
    ),
    hints: [],
    effects,
  });
  return [
    done(VALIDATE, as('admitted')),
    done(VALIDATE, as('rejected')),
    done(VALIDATE, as('confirm')),
    done(VALIDATE, as('admitted', { decisions: [], fail: { reason: 'blocked' } })),
    done(VALIDATE, as('admitted', { decisions: [], finalize: { reason: 'enough' } })),
    failed(VALIDATE, 'policy engine down'),
  ];
}

/** A tool call's outcomes: success, a failed ToolResult, a crashed child. */
function toolOutcomes(context: RunContext, besides?: string): RunMachineEvent[] {
  const { pending, results } = context.batch;
  const index = pending.findIndex(
    (call, i) => call.status === 'admitted' && results[i] === null && call.toolCallId !== besides,
  );
  if (index < 0) return [];
  const call = pending[index]!;
  const base = { name: call.name, toolCallId: call.toolCallId, executed: true };
  return [
    done('tool', { index, result: { ...base, result: { ok: true } } }),
    done('tool', {
      index,
      result: { ...base, error: { name: 'ToolError', message: 'failed', recoverable: false } },
    }),
    { type: 'tool.error', index, toolCallId: call.toolCallId, error: 'wrapper threw' },
    // A restored call of a tool that may not run twice comes back in doubt (awaiting.inDoubt).
    done('tool', {
      index,
      result: {
        ...base,
        error: { name: 'ToolError', message: 'outcome unknown', recoverable: false },
        inDoubt: { cause: 'restored' },
      },
    }),
  ];
}

/** A running call's questions (`call.elicit`): a form, a yes/no question, and one from a call that ended. */
function elicitations(context: RunContext, ended?: string): RunMachineEvent[] {
  const { pending, results } = context.batch;
  const open = pending.find((call, i) => call.status === 'admitted' && results[i] === null);
  if (ended !== undefined) return [ask(ended, 'a.b', true)];
  if (open === undefined) return [];
  // The other kinds of question, only in their own small setting: each event here multiplies the paths.
  if (context.labels.pair !== 'on') return [ask(open.toolCallId, open.name, true)];
  return [
    ask(open.toolCallId, open.name, true),
    ask(open.toolCallId, open.name, false),
    ask('ended:t1:c9', open.name, true),
  ];
}

function ask(toolCallId: string, tool: string, fields: boolean): RunMachineEvent {
  return {
    type: 'call.elicit',
    elicitation: {
      id: `${toolCallId}:e1`,
      toolCallId,
      tool,
      request: {
        message: 'Sure?',
        ...(fields ? { requestedSchema: { properties: { n: { type: 'integer' } } } } : {}),
      },
    },
  };
}

function reviewOutcomes(): RunMachineEvent[] {
  const effects: PolicyEffects[] = [
    { decisions: [] },
    { decisions: [], fail: { reason: 'breaker' } },
    { decisions: [], finalize: { reason: 'enough' } },
    { decisions: [], awaitClarification: { id: 'p', question: 'Sure?', missingFields: [] } },
    { decisions: [], backoffMs: 1_000 },
  ];
  return [...effects.map((e) => done(REVIEW, e)), failed(REVIEW, 'policy engine down')];
}

/** What `onInDoubt` policies can decide about the calls in doubt (`settling`). */
function inDoubtReviewOutcomes(context: RunContext): RunMachineEvent[] {
  const every = (action: 'ask' | 'rerun' | 'tell_model') =>
    Object.fromEntries(
      inDoubtCallsToReview(context).map((call) => [call.toolCallId, { action, policy: 'p' }]),
    );
  const effects: PolicyEffects[] = [
    { decisions: [] },
    { decisions: [], inDoubt: every('rerun') },
    { decisions: [], inDoubt: every('tell_model') },
    { decisions: [], fail: { reason: 'unknown outcome' } },
    { decisions: [], finalize: { reason: 'unknown outcome' } },
  ];
  return [...effects.map((e) => done(REVIEW, e)), failed(REVIEW, 'policy engine down')];
}

function answers(context: RunContext): RunMachineEvent[] {
  const awaiting = context.flow.awaiting;
  if (awaiting?.kind === 'clarification') {
    return [{ type: 'provide.clarification', id: awaiting.clarification.id, answer: 'yes' }];
  }
  if (awaiting?.kind === 'external_tools') {
    const [call] = awaiting.externalTools.calls;
    const result = (ok: boolean): ToolResultJSON => ({
      name: call?.name ?? 'app.lookup',
      toolCallId: call?.toolCallId ?? 'x1',
      executed: true,
      ...(ok ? { result: { id: 1 } } : { error: { name: 'ToolError', message: 'down', recoverable: false } }),
    });
    const id = awaiting.externalTools.id;
    return [true, false].map((ok) => ({ type: 'provide.toolResults', id, results: [result(ok)] }));
  }
  if (awaiting?.kind === 'confirmation') {
    return [true, false].map((approved) => ({ type: 'confirm', id: awaiting.confirmation.id, approved }));
  }
  if (awaiting?.kind === 'in_doubt') {
    const resolve = (resolution: { status: 'done'; output: unknown } | { status: 'not_done' }) => ({
      type: 'resolve.inDoubt' as const,
      resolutions: Object.fromEntries(awaiting.calls.map((call) => [call.toolCallId, resolution])),
    });
    return [resolve({ status: 'done', output: { ok: true } }), resolve({ status: 'not_done' })];
  }
  return [];
}

const TRACE_CONTEXT = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

/** Every event the run can receive in `snapshot`: its ports' outcomes, a restore, the app's answers, a trace context, cancel. */
function eventsFor(snapshot: Snapshot): RunMachineEvent[] {
  if (snapshot.status !== 'active') return [];
  const { context } = snapshot;
  const events: RunMachineEvent[] = [];
  if (snapshot.matches('planning')) events.push(...planOutcomes(context));
  if (snapshot.matches('finalizing')) events.push(...finalizeOutcomes());
  if (snapshot.matches({ validating: 'policies' })) events.push(...validateOutcomes(context));
  if (snapshot.matches('executing')) events.push(...toolOutcomes(context), ...elicitations(context));
  // A call that asked runs on: its outcomes, and those of the others, come while the run waits.
  if (snapshot.matches({ awaiting: 'elicitation' }) && context.labels.pair === 'on') {
    const awaiting = context.flow.awaiting;
    const asking =
      awaiting?.kind === 'clarification' || awaiting?.kind === 'confirmation'
        ? awaiting.elicitation
        : undefined;
    events.push(...toolOutcomes(context), ...toolOutcomes(context, asking?.toolCallId));
  }
  // A question that comes where the run cannot wait on it (its call ended): answered `cancel`.
  if (snapshot.matches('planning') && context.labels.pair === 'on') {
    events.push(...elicitations(context, 'ended:t1:c9'));
  }
  if (snapshot.matches({ resuming: 'policies' })) events.push(...reviewOutcomes());
  if (snapshot.matches({ settling: 'policies' })) events.push(...inDoubtReviewOutcomes(context));
  // A cancel while calls run: they end (or not) within the grace, and may still ask.
  if (snapshot.matches('canceling')) {
    // A return, a failure, a crash (an in-doubt result is a failure here): each way a call ends.
    events.push(...toolOutcomes(context).slice(0, 3), ...elicitations(context), { type: 'sleep.done' });
  }
  if (snapshot.matches({ awaiting: 'backoff' })) events.push({ type: 'sleep.done' });
  // A restored `steps` actor says so; the state requests its work again.
  if (events.length > 0) events.push({ type: 'steps.restored' });
  if (snapshot.matches('awaiting')) events.push(...answers(context));
  // The host stores a plugin's trace context when a segment opens (a working state; one suffices).
  if (snapshot.matches('planning')) events.push({ type: 'trace.context', traceContext: TRACE_CONTEXT });
  // A remembered approval can be revoked in any state (an unknown id changes nothing; one suffices).
  if (snapshot.matches('planning')) events.push({ type: 'approval.revoke', approvalId: 'none' });
  events.push({ type: 'cancel', reason: 'test' });
  return events;
}

/** The abstract state: what the guards read, not the history (turn, transcript). */
function serializeState(snapshot: Snapshot): string {
  const c = snapshot.context;
  const e = c.flow.effects;
  return JSON.stringify([
    snapshot.value,
    snapshot.status,
    c.labels.policies,
    c.toolCalls,
    c.consecutiveFailures,
    Object.values(c.toolStats).map((s) => s.consecutiveFailures),
    Object.keys(c.disabledTools).sort(),
    c.batch.pending.map((p) => p.status),
    c.batch.results.map((r) => (r === null ? '-' : r.inDoubt ? 'd' : r.error ? 'e' : 'o')),
    c.flow.awaiting?.kind ?? null,
    c.flow.awaiting?.kind === 'confirmation' ? Boolean(c.flow.awaiting.toolCallIds) : null,
    c.flow.awaiting?.kind === 'clarification' || c.flow.awaiting?.kind === 'confirmation'
      ? Boolean(c.flow.awaiting.elicitation)
      : null,
    c.flow.callsRunning ?? false,
    c.flow.usage.inputTokens + c.flow.usage.outputTokens >=
      (c.caps.maxTotalTokens ?? Number.POSITIVE_INFINITY),
    e ? Object.keys(e).filter((k) => e[k as keyof typeof e] !== undefined) : null,
    c.flow.finalize?.reason ?? null,
    c.turn >= (c.caps.maxTurns ?? Number.POSITIVE_INFINITY),
    (c.flow.awaits ?? 0) >= (c.caps.maxAwaits ?? Number.POSITIVE_INFINITY),
    c.flow.inDoubtReviewed?.length ?? 0,
  ]);
}

const caps = {
  maxToolCalls: 3,
  maxConsecutiveFailedToolCalls: 2,
  maxRetriesPerTool: 5,
  timeBudgetMs: 3_600_000,
  maxTotalTokens: 100,
  maxCallsPerBatch: 4,
};
const input = (policies: 'on' | 'off', startedAt = Date.now()): RunInput => ({
  runId: 'graph-run',
  agent: { id: 'graph' },
  labels: { policies },
  messages: [{ role: 'user', content: 'go' }],
  caps,
  startedAt,
});

/** The machine is traversed in seven settings, each reaching what the others cannot. */
const settings = [
  { name: 'no policies', input: input('off') },
  { name: 'policies', input: input('on') },
  { name: 'time budget spent', input: input('off', Date.now() - 2 * 3_600_000) },
  { name: 'one turn', input: { ...input('off'), caps: { ...caps, maxTurns: 1 } } },
  { name: 'one await', input: { ...input('off'), caps: { ...caps, maxAwaits: 1 } } },
  { name: 'a batch of two', input: { ...input('off'), labels: { policies: 'off', pair: 'on' } } },
  { name: 'a mixed batch', input: { ...input('off'), labels: { policies: 'off', pair: 'mixed' } } },
];

interface Coverage {
  nodes: Set<string>;
  transitions: Set<AnyTransitionDefinition>;
  /** Ways out of `routing` that left the batch unreviewed (newResults or newHints kept). */
  unreviewed: Set<string>;
}

/** The stub whose settling makes `steps` send `event`; undefined for an event the test sends itself. */
function stubKey(event: RunMachineEvent): string | undefined {
  switch (event.type) {
    case 'plan.done':
    case 'plan.error':
      return 'plan';
    case 'validate.done':
    case 'validate.error':
      return 'validate';
    case 'review.done':
    case 'review.error':
      return 'review';
    case 'sleep.done':
      return 'sleep';
    case 'tool.done':
      return `tool.${event.output.result.toolCallId}`;
    case 'tool.error':
      return `tool.${event.toolCallId}`;
    default:
      return undefined;
  }
}

/**
 * The request `key` once it is in flight, or undefined after 1 s. The steps actor starts a batch's
 * calls in slices of CALL_SLICE_MS (4 ms) with a macrotask between them (issue 36 item 5), so on a
 * loaded machine a call can start a macrotask after its state was entered.
 */
async function inFlight(key: string) {
  const deadline = Date.now() + 1_000;
  while (!stubs.has(key) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  return stubs.get(key);
}

/** Replays `path` on a real actor with stub ports, checking each step's state; records coverage. */
async function replay(path: StatePath<Snapshot, RunMachineEvent>, runInput: RunInput, coverage: Coverage) {
  stubs.clear();
  const record = (event: InspectionEvent) => {
    // Only the run actor's own microsteps (its children have their own).
    if ((event.actorRef as AnyActorRef).sessionId !== event.rootId) return;
    if (event.type === '@xstate.microstep') {
      const { batch } = (event.snapshot as Snapshot).context;
      for (const t of (event as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) {
        coverage.transitions.add(t);
        // Whatever way a run leaves `routing`, the batch it routed is never reviewed again.
        if (t.source.id === 'run.routing' && (batch.newResults.length > 0 || batch.newHints.length > 0))
          coverage.unreviewed.add(`routing → ${t.target?.map((n) => n.id).join(',')}`);
      }
    }
    if (event.type === '@xstate.microstep' || event.type === '@xstate.snapshot') {
      for (const node of (event.snapshot as Snapshot)._nodes) coverage.nodes.add(node.id);
    }
  };
  const actor = createActor(machine, { input: runInput, inspect: record });
  actor.start();
  for (const step of path.steps) {
    const event = step.event as RunMachineEvent & { output?: unknown; error?: unknown };
    const key = stubKey(event);
    if (key !== undefined) {
      const request = stubs.get(key) ?? (await inFlight(key));
      if (!request)
        throw new Error(`no request ${key} is in flight in ${JSON.stringify(actor.getSnapshot().value)}`);
      stubs.delete(key);
      if (event.type.endsWith('.error')) request.reject(event.error);
      else request.resolve(event.output);
    } else if ((event.type as string) !== 'xstate.init') {
      actor.send(event);
    }
    const expected = serializeState(step.state);
    await waitFor(actor, (snapshot) => serializeState(snapshot) === expected, { timeout: 1_000 });
  }
  actor.stop();
}

function allNodes(node: AnyStateNode): AnyStateNode[] {
  return [node, ...Object.values(node.states).flatMap(allNodes)];
}

function allTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  return [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
}

describe('the run machine, model-based (xstate/graph)', () => {
  it('reaches every state node and takes every transition on a real actor, along the model’s paths', async () => {
    const coverage: Coverage = { nodes: new Set(), transitions: new Set(), unreviewed: new Set() };
    const counts = { abstractStates: 0, edges: 0, paths: 0 };
    for (const setting of settings) {
      const options = { input: setting.input, events: eventsFor, serializeState, limit: 20_000 };
      const adjacency: AdjacencyMap<Snapshot, RunMachineEvent> = getAdjacencyMap(
        machine as never,
        options as never,
      );
      // Shortest paths reach every (abstract) state; each edge is the path to its source plus one event.
      const toState = new Map(
        getShortestPaths(machine, options).map((path) => [serializeState(path.state), path]),
      );
      counts.abstractStates += toState.size;
      for (const [source, { transitions }] of Object.entries(adjacency)) {
        const prefix = toState.get(source);
        if (!prefix) throw new Error(`no path to ${source}`);
        const edges = Object.values(transitions) as { event: RunMachineEvent; state: Snapshot }[];
        for (const { event, state } of edges) {
          counts.edges += 1;
          counts.paths += 1;
          await replay(
            { ...prefix, steps: [...prefix.steps, { event, state }], state },
            setting.input,
            coverage,
          );
        }
      }
    }

    const nodes = allNodes(machine.root).map((node) => node.id);
    const transitions = allNodes(machine.root).flatMap(allTransitions);
    const missedNodes = nodes.filter((id) => !coverage.nodes.has(id));
    const missedTransitions = transitions
      .filter((t) => !coverage.transitions.has(t))
      .map(
        (t) =>
          `${t.source.id} ${t.eventType || '(always)'} → ${t.target?.map((n) => n.id).join(',') ?? '(self)'}`,
      );

    console.log(
      `run machine graph coverage: ${nodes.length - missedNodes.length}/${nodes.length} state nodes, ` +
        `${transitions.length - missedTransitions.length}/${transitions.length} transitions; ` +
        `${counts.abstractStates} abstract states, ${counts.edges} edges replayed as paths on a real actor`,
    );
    expect(missedNodes).toEqual([]);
    expect(missedTransitions).toEqual([]);
    expect([...coverage.unreviewed]).toEqual([]);
  }, 300_000); // ~8,500 paths replayed: 25–60 s on a loaded 2-core machine
});
