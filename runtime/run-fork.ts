/**
 * Forking a run from one of its steps (issue 27 item 4): `runtime.fork(runId, { atEvent, edit })`
 * starts a new run from the snapshot the parent had at that step, optionally with an edited tool
 * input or a clarification answer, under a new run id linked to its parent.
 *
 * | forked at (the parent's event `atEvent`)        | the new run starts                                                     |
 * |-------------------------------------------------|------------------------------------------------------------------------|
 * | `tool_call_scheduled` / `tool_result` of a call | from the `planning` step that proposed the call, its plan replayed with `edit.input` for that call: validated, admitted and run again |
 * | `await_clarification`                           | waiting for that clarification; `edit.answer` answers it at once         |
 * | any other event                                 | from the step the parent was in right after that event                  |
 *
 * Links: the child's labels `toolwarden.fork.parent`, `toolwarden.fork.at` and, when the parent
 * was traced, `toolwarden.fork.traceparent` (its `run_started` carries them; plugins read them in
 * `onRunStart`: the telemetry plugin links the fork's first `invoke_agent` span to the parent's
 * span by it), and a `run_forked` event in both runs' logs. Ids of turns and calls are the child's (`<child>:t2:c1`), so a forked call
 * never reuses the parent's idempotency key.
 *
 * The steps come from {@link StepHistory}: the snapshots the runtime persists at each step
 * boundary, kept in memory for the most recent runs (`forks: { maxRuns }`).
 *
 * ## Replay (issue 38 item 2)
 *
 * | `replay`          | after the fork point                                                                      |
 * |-------------------|-------------------------------------------------------------------------------------------|
 * | `live` (default)  | every planner turn and every call runs again (the fork's own `toolCallId`s)                 |
 * | `recorded`        | a call identical to the parent's (same tool, same canonical input, same turn and index) gets the parent's recorded result, not executed again; a planner turn sent the parent's inputs reuses its recorded answer (only when the fork keeps the parent's planner: no `planner` option); at the first difference the fork diverges and runs live from there. A parent's call with no recorded result (its outcome unknown) is never run again: the fork answers it `InDoubtError`, not executed |
 *
 * Rules of replay are runtime/replay-tape.ts'. A fork may run with another `planner`, `tools` or
 * `policies` (the cheap "same step, other model" comparison) and a `name` (label
 * `toolwarden.fork.name`). Its overrides and replay live in this runtime: a fork restored
 * elsewhere (after an eviction or a restart) continues live with the runtime's own.
 *
 * ## Preview
 *
 * `runtime.forkPreview(runId, options)` walks the fork with the pure step
 * (machines/run-transition.ts) instead of an actor: planner turns reused or asked, calls
 * replayed, and each call the fork would execute listed (`execute`), not executed: it is answered
 * with a stand-in success (`{ preview: 'not executed' }`), so the walk goes on. It is exact while
 * the planner does not read those results (a script, a model that decides from the request); past
 * the first stand-in, `exact` is false. The walk stops at a final state or a wait for an answer.
 * The planner is asked as the fork would ask it: a stateful one (`scriptedPlanner`) advances.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import type { InspectionEvent } from 'xstate';
import { createActor } from 'xstate';
import { recordToolCallsUpdate } from '../machines/run-actions.ts';
import { type RunContext, toolCallMeta } from '../machines/run-context.ts';
import type { RunMachine } from '../machines/run-machine.ts';
import type { RunMachineEvent } from '../machines/run-machine-types.ts';
import type { PlanActorInput, RunPort, RunPorts } from '../machines/run-ports.ts';
import { type PersistedRunSnapshot, runTransition } from '../machines/run-transition.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import type { Policy } from '../policies/define-policy.ts';
import type { Planner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { RunStore } from '../stores/run-store.ts';
import { FORK_AT_LABEL, FORK_PARENT_LABEL, FORK_TRACEPARENT_LABEL } from '../telemetry/attributes.ts';
import type { Tool } from '../tools/define-tool.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { DurableRuns } from './durable/durable-runs.ts';
import { unpackSnapshot } from './durable/snapshot-codec.ts';
import type { HostRun } from './host-run.ts';
import { positionOf, RecordedReplay, ReplayTape, replayedOutput } from './replay-tape.ts';
import type { RunHandle } from './run-handle.ts';
import type { PluginHooks } from './runtime-plugins.ts';
import { type Step, StepHistory } from './step-history.ts';
import { createPlanPort } from './steps/plan-step.ts';
import { createReviewResultsPort } from './steps/review-results.ts';
import { advertisedTools, type RunDeps } from './steps/run-deps.ts';
import { createValidateBatchPort } from './steps/validate-batch.ts';

/** What `runtime.fork` takes. */
export interface ForkOptions {
  /** The parent's event to fork at: its `seq` in the run's event log (`runtime.events(runId)`), 1 = `run_started`. */
  atEvent: number;
  /** A changed input for the call the event is about, or an answer to the clarification it asks. */
  edit?: { input: unknown } | { answer: string };
  /** The new run's id. Default: a random UUID. */
  runId?: string;
  /** `live` (default) runs every call again; `recorded` answers identical calls from the parent's record (see the module). */
  replay?: 'recorded' | 'live';
  /** Another planner for the fork (another model, prompt, script); its turns are always asked. */
  planner?: Planner;
  /** Other tools for the fork (the plugins' tools are kept). */
  tools?: Tool[];
  /** Another policy set for the fork (the plugins' policies are kept). */
  policies?: Policy[];
  /** A name for the fork, shown beside its parent: the label `toolwarden.fork.name` and `run_forked.name`. */
  name?: string;
}

/** The label a named fork carries (`ForkOptions.name`). */
export const FORK_NAME_LABEL = 'toolwarden.fork.name';

/** One call in a {@link ForkPreview}: where it is (turn number, index in the batch) and what it is. */
export interface PreviewCall {
  turn: number;
  index: number;
  name: string;
  input: unknown;
  /** The parent's call whose record answers it (replayed, in doubt). */
  parentToolCallId?: string;
}

/** What a fork would do (`runtime.forkPreview`; see the module's §Preview). */
export interface ForkPreview {
  /** Calls answered from the parent's record, not executed. */
  replayed: PreviewCall[];
  /** Calls that would execute, in order. */
  execute: PreviewCall[];
  /** Calls the parent made whose outcome is unknown: never run again (answered `InDoubtError`). */
  inDoubt: PreviewCall[];
  /** Planner turns reused from the parent's record, and asked of the planner. */
  plannerTurns: { replayed: number; asked: number };
  /** The state the walk ended in: `completed`, `failed`, `awaiting.clarification`, … */
  endsIn: string;
  /** False once a call was answered with a stand-in: what follows is a forecast. */
  exact: boolean;
}

/** What a variant of the runtime's run machine changes (a fork's planner, tools, policies, replay). */
export interface RunVariant {
  planner?: Planner;
  tools?: Tool[];
  policies?: Policy[];
  /** Wraps the steps' ports: a fork's recorded replay answers from the parent's record. */
  wrapPorts?: (ports: Partial<RunPorts>, deps: RunDeps) => Partial<RunPorts>;
}

/** What forking needs of the runtime (a narrow view of its parts). */
export interface ForkParts {
  settings: { agent: RunInfo['agent'] };
  store: RunStore;
  durable: Pick<DurableRuns, 'flush'>;
  machine: RunMachine;
  /** The run machine of a {@link RunVariant}, with the steps' dependencies it was built over. */
  variant: (overrides: RunVariant) => { machine: RunMachine; deps: RunDeps };
  inspect: ((event: InspectionEvent) => void) | undefined;
  hooks: Pick<PluginHooks, 'notifyRunStart' | 'eachPlugin'>;
  host: HostRun;
}

/** Thrown when a run cannot be forked where asked (unknown run, step not kept, edit that does not fit). */
export class ForkError extends Error {
  override readonly name = 'ForkError';
}

/** The labels a forked run carries; named beside the span attributes that the telemetry plugin reads them into. */
export { FORK_AT_LABEL, FORK_PARENT_LABEL, FORK_TRACEPARENT_LABEL, StepHistory };

/** Where a fork starts: the snapshot under the child's id, and the answer to give it at once. */
interface ForkStart {
  childId: string;
  snapshot: Step['snapshot'];
  answer: { id: string; answer: string } | undefined;
}

/** The fork's first snapshot (see the module's table). @throws ForkError */
async function forkStart(
  parts: ForkParts,
  history: StepHistory,
  parentId: string,
  options: ForkOptions,
): Promise<ForkStart> {
  const steps = history.steps(parentId);
  if (steps.length === 0) throw new ForkError(`Run ${parentId}: no steps kept here to fork from`);
  const [event] = await parts.store.readEvents(parentId, { afterSeq: options.atEvent - 1, limit: 1 });
  if (!event || event.seq !== options.atEvent)
    throw new ForkError(`Run ${parentId} has no event ${options.atEvent}`);
  const parentEvent = event.event as RunEvent;
  const childId = options.runId ?? randomUUID();
  const edit = options.edit;
  const toolCallId =
    parentEvent.type === 'tool_call_scheduled'
      ? parentEvent.toolCallId
      : parentEvent.type === 'tool_result'
        ? parentEvent.result.toolCallId
        : undefined;

  let snapshot: Step['snapshot'];
  let answer: { id: string; answer: string } | undefined;
  if (toolCallId !== undefined) {
    // The step that proposed the call (planning), its plan replayed with the edited input.
    const proposed = steps.findIndex((step) =>
      step.snapshot.context.batch.pending.some((call) => call.toolCallId === toolCallId),
    );
    const planning = steps
      .slice(0, Math.max(0, proposed))
      .findLast((step) => stateOf(step.snapshot.value) === 'planning');
    if (proposed < 0 || !planning)
      throw new ForkError(`Run ${parentId}: the step of call ${toolCallId} is not kept`);
    const calls = steps[proposed]!.snapshot.context.batch.pending.map((call) => ({
      name: call.name,
      ...(call.providerToolCallId === undefined ? {} : { toolCallId: call.providerToolCallId }),
      input: call.toolCallId === toolCallId && edit && 'input' in edit ? edit.input : call.input,
    }));
    const base = renamed(planning.snapshot, parentId, childId);
    const context = {
      ...base.context,
      ...recordToolCallsUpdate(base.context, {
        type: 'plan.done',
        output: { result: { toolCalls: calls } },
      } as never),
    };
    // The turn's tokens were spent by the parent's turn that proposed the call: the fork's plan is that one.
    const usage = steps[proposed]!.snapshot.context.flow.usage;
    snapshot = {
      ...base,
      value: { validating: 'checking' },
      context: { ...context, flow: { ...context.flow, ...(usage ? { usage } : {}) } },
    };
  } else {
    // A clarification is found by its id (the nearest such step), so events logged outside the
    // run's own steps (a `run_forked`) cannot shift it; any other event by the count of events.
    const asked = parentEvent.type === 'await_clarification' ? parentEvent.clarification.id : undefined;
    const waiting = steps.filter((step) => {
      const awaiting = step.snapshot.context.flow.awaiting;
      return awaiting?.kind === 'clarification' && awaiting.clarification.id === asked;
    });
    const nearest = waiting.sort(
      (a, b) => Math.abs(a.events - options.atEvent) - Math.abs(b.events - options.atEvent),
    )[0];
    const at = nearest ?? steps.find((step) => step.events >= options.atEvent) ?? steps.at(-1)!;
    snapshot = renamed(at.snapshot, parentId, childId);
    if (edit && 'answer' in edit) {
      const awaiting = snapshot.context.flow.awaiting;
      if (awaiting?.kind !== 'clarification')
        throw new ForkError(`Run ${parentId} awaits no clarification at event ${options.atEvent}`);
      answer = { id: awaiting.clarification.id, answer: edit.answer };
    }
  }
  if (edit && 'input' in edit && toolCallId === undefined)
    throw new ForkError(
      `Event ${options.atEvent} of run ${parentId} is no tool call: its input cannot be edited`,
    );
  const traceparent = snapshot.context.traceContext?.traceparent;
  const labels = {
    ...snapshot.context.labels,
    [FORK_PARENT_LABEL]: parentId,
    [FORK_AT_LABEL]: String(options.atEvent),
    ...(traceparent ? { [FORK_TRACEPARENT_LABEL]: traceparent } : {}),
    ...(options.name === undefined ? {} : { [FORK_NAME_LABEL]: options.name }),
  };
  const context: RunContext = { ...snapshot.context, labels, startedAt: Date.now(), traceContext: null };
  return {
    childId,
    snapshot: { ...snapshot, status: 'active', output: undefined, error: undefined, context },
    answer,
  };
}

/** The fork's run machine: the runtime's, or a variant with its overrides and its recorded replay. */
async function forkMachine(parts: ForkParts, parentId: string, options: ForkOptions) {
  const replay =
    options.replay === 'recorded'
      ? new RecordedReplay(await tapeOf(parts, parentId), options.planner === undefined)
      : undefined;
  if (!replay && !options.planner && !options.tools && !options.policies)
    return { machine: parts.machine, deps: undefined, replay };
  const { machine, deps } = parts.variant({
    planner: options.planner,
    tools: options.tools,
    policies: options.policies,
    wrapPorts: replay && ((ports, deps) => replayingPorts(ports, deps, replay)),
  });
  return { machine, deps, replay };
}

/** The parent's record, from the store: its whole event log and its latest transcript. */
async function tapeOf(parts: ForkParts, parentId: string): Promise<ReplayTape> {
  await parts.durable.flush(parentId).catch(() => undefined);
  const stored = await parts.store.load(parentId);
  if (!stored) throw new ForkError(`Run ${parentId} is not in the store: nothing recorded to replay`);
  const events: RunEvent[] = [];
  for (let after = 0; ; ) {
    const page = await parts.store.readEvents(parentId, { afterSeq: after, limit: 1000 });
    for (const record of page) events.push(record.event as RunEvent);
    if (page.length < 1000) break;
    after = page.at(-1)!.seq;
  }
  const snapshot = unpackSnapshot(stored.snapshot) as { context?: RunContext } | undefined;
  return new ReplayTape(parentId, events, snapshot?.context?.messages ?? []);
}

/** The ports of a fork with recorded replay: planner turns and calls answered from the record while they match. */
function replayingPorts(ports: Partial<RunPorts>, deps: RunDeps, replay: RecordedReplay): Partial<RunPorts> {
  const plan = ports.plan!;
  const executeTool = ports.executeTool!;
  return {
    ...ports,
    plan: (task) => {
      const { context, kind } = task.input;
      return replay.plan(context, kind, advertisedNames(deps, context, kind)) ?? plan(task);
    },
    executeTool: (task) => {
      const { call, meta, index } = task.input;
      const turn = positionOf(meta.turnId)?.turn ?? -1;
      const decision = replay.call(turn, index, call.name, call.input);
      return decision.kind === 'live' ? executeTool(task) : replayedOutput(decision, call, meta, index);
    },
  };
}

function advertisedNames(deps: RunDeps, context: RunContext, kind: PlanActorInput['kind']): string[] {
  return kind === 'finalize' ? [] : advertisedTools(deps, context).map((tool) => tool.name);
}

/** `runtime.fork`: see the module's tables. */
export async function forkRun(
  parts: ForkParts,
  history: StepHistory,
  parentId: string,
  options: ForkOptions,
): Promise<RunHandle> {
  const { childId, snapshot, answer } = await forkStart(parts, history, parentId, options);
  const { machine } = await forkMachine(parts, parentId, options);
  const { context } = snapshot;
  const actor = createActor(machine, {
    snapshot: snapshot as never,
    inspect: parts.inspect,
    input: undefined as never,
  });
  const info: RunInfo = {
    runId: childId,
    agent: parts.settings.agent,
    sessionId: context.sessionId,
    labels: context.labels,
    traceContext: null,
  };
  parts.hooks.notifyRunStart(info, 'start');
  const child = parts.host(actor, undefined, 'start');

  // Both logs say so: the child where it came from, the parent where it went.
  const note = {
    at: Date.now(),
    parentRunId: parentId,
    childRunId: childId,
    atEvent: options.atEvent,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.replay === 'recorded' ? { replay: 'recorded' as const } : {}),
  };
  const edit = options.edit;
  const edited = edit === undefined ? undefined : 'input' in edit ? 'input' : 'answer';
  for (const runId of [childId, parentId]) {
    const forked = { type: 'run_forked', runId, ...note, ...(edited ? { edit: edited } : {}) } as RunEvent;
    await parts.durable.flush(runId).catch(() => undefined);
    await parts.store.appendEvents(runId, [{ event: forked, at: note.at }]);
    parts.hooks.eachPlugin('onEvent', (plugin) => plugin.onEvent?.(forked, { ...info, runId }));
  }
  if (answer) await child.provideClarification(answer);
  return child;
}

/** Most steps a preview walks before it gives up (a planner that never ends). */
const MAX_PREVIEW_STEPS = 100_000;

/** `runtime.forkPreview`: the fork walked with the pure step (see the module's §Preview). */
export async function previewFork(
  parts: ForkParts,
  history: StepHistory,
  parentId: string,
  options: ForkOptions,
): Promise<ForkPreview> {
  const { snapshot: start, answer } = await forkStart(parts, history, parentId, options);
  const replay =
    options.replay === 'recorded'
      ? new RecordedReplay(await tapeOf(parts, parentId), options.planner === undefined)
      : undefined;
  const { machine, deps } = parts.variant({
    planner: options.planner,
    tools: options.tools,
    policies: options.policies,
  });
  // The preview's own ports: no plugin sees its turns (no spans, no write-ahead), no tool runs.
  const quiet = { ...deps, plugins: [] };
  const plan = createPlanPort(quiet);
  const validate = createValidateBatchPort(quiet);
  const review = createReviewResultsPort(quiet);
  const preview: ForkPreview = {
    replayed: [],
    execute: [],
    inDoubt: [],
    plannerTurns: { replayed: 0, asked: 0 },
    endsIn: '',
    exact: true,
  };
  let snapshot = start as unknown as PersistedRunSnapshot;
  // A fork at a clarification with an answer gets it at once, as `fork` gives it; any other
  // starts as a restored run does, asking again for the work of its state.
  const waitsForAnswer = answer !== undefined && snapshot.context.flow.awaiting?.kind === 'clarification';
  let [next, effects] = runTransition(
    machine,
    snapshot,
    waitsForAnswer ? { type: 'provide.clarification', ...answer } : { type: 'steps.restored' },
  );
  const queue: RunMachineEvent[] = [];
  for (let step = 0; step < MAX_PREVIEW_STEPS; step++) {
    snapshot = next;
    const context = snapshot.context;
    for (const effect of effects) {
      switch (effect.type) {
        case 'plan': {
          const reused = replay?.plan(context, effect.kind, advertisedNames(deps, context, effect.kind));
          if (reused) preview.plannerTurns.replayed++;
          else preview.plannerTurns.asked++;
          queue.push(
            reused
              ? { type: 'plan.done', output: reused }
              : await portAnswer(plan, 'plan', { kind: effect.kind, context }),
          );
          break;
        }
        case 'validate':
          queue.push(await portAnswer(validate, 'validate', { context }));
          break;
        case 'review':
          queue.push(await portAnswer(review, 'review', { context }));
          break;
        case 'sleep':
          queue.push({ type: 'sleep.done' });
          break;
        case 'execute_tools':
          for (const call of effect.calls) {
            const pending = context.batch.pending[call.index]!;
            const at = { turn: context.turn, index: call.index, name: call.name, input: call.input };
            const decision = replay
              ? replay.call(context.turn, call.index, call.name, pending.input)
              : { kind: 'live' as const };
            const meta = toolCallMeta(context, pending);
            if (decision.kind === 'live') {
              preview.execute.push(at);
              preview.exact = false;
              queue.push({ type: 'tool.done', output: { index: call.index, result: standIn(pending) } });
              continue;
            }
            (decision.kind === 'replay' ? preview.replayed : preview.inDoubt).push({
              ...at,
              parentToolCallId: decision.recorded.toolCallId,
            });
            queue.push({ type: 'tool.done', output: replayedOutput(decision, pending, meta, call.index) });
          }
          break;
        case 'await':
          if (answer && effect.kind === 'clarification' && effect.id === answer.id)
            queue.push({ type: 'provide.clarification', ...answer });
          break;
        case 'emit':
          break;
      }
    }
    const event = queue.shift();
    if (snapshot.status !== 'active' || event === undefined) break;
    [next, effects] = runTransition(machine, snapshot, event);
  }
  preview.endsIn = stateOf(snapshot.value);
  return preview;
}

/** A port's answer, as the `steps` actor would send it: `<kind>.done` with its output, or `<kind>.error`. */
async function portAnswer<I>(
  port: RunPort<I, unknown>,
  kind: 'plan' | 'validate' | 'review',
  input: I,
): Promise<RunMachineEvent> {
  try {
    const output = await port({ input, controller: new AbortController() });
    return { type: `${kind}.done`, output } as RunMachineEvent;
  } catch (error) {
    return { type: `${kind}.error`, error } as RunMachineEvent;
  }
}

/** What a preview answers a call it would execute with: a success, so the walk goes on. */
function standIn(call: { name: string; toolCallId: string }): ToolResultJSON {
  return {
    name: call.name,
    toolCallId: call.toolCallId,
    executed: false,
    result: { preview: 'not executed' },
  };
}

/** The state a snapshot is in, as `planning` or `awaiting.clarification`. */
function stateOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value as Record<string, unknown>)[0] ?? [];
  return inner === undefined ? String(key) : `${key}.${stateOf(inner)}`;
}

/** A deep copy of a step's snapshot with the parent's id replaced by the child's, in every id. */
function renamed(snapshot: Step['snapshot'], parentId: string, childId: string): Step['snapshot'] {
  const text = JSON.stringify(snapshot)
    .split(JSON.stringify(parentId))
    .join(JSON.stringify(childId))
    .split(`"${jsonInner(parentId)}:`)
    .join(`"${jsonInner(childId)}:`);
  return JSON.parse(text);
}

function jsonInner(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
