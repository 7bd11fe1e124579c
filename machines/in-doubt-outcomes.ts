/**
 * The run machine's in-doubt calls (issue 34 item 3, docs/durability.md §Effects): what the
 * actions around `awaiting.inDoubt` do, pure, as run-outcomes.ts does for the rest.
 *
 * | moment                                              | outcome                                                        |
 * |-----------------------------------------------------|----------------------------------------------------------------|
 * | a restored call comes back in doubt (`tool.done` with `result.inDoubt`) | kept as the call's result, a `tool_result` event with `inDoubt` |
 * | every call of the batch is settled, some in doubt, and a policy has `onInDoubt` | `settling`: the policies decide per call (docs/durability.md §Effects) |
 * | `settling`'s decision (`review.done`)               | `rerun`: no result, so `executing` runs it; `tell_model`: an `outcome_unknown` error result and hint; `ask`: stays in doubt; `finalize` / `fail` end the run |
 * | every call of the batch is settled, some in doubt (and decided on) | `awaiting.inDoubt`: `flow.awaiting = { kind: 'in_doubt', calls }`, `await_in_doubt` |
 * | `resolve.inDoubt`                                   | `done` / `failed`: the call's result, a `tool_result`; `not_done`: no result, so `executing` runs it |
 * | `cancel` while calls run (`canceling`)              | each running call is told to stop; one that returns within {@link CANCEL_GRACE_MS} is recorded with its result, one that never started as not run |
 * | … a call ends with an error, or not within the grace | its result is an in-doubt one (`cause: 'canceled'`), with its `tool_result` |
 *
 * @module
 */

import type { PolicyEffects } from '../run/policy-effects.ts';
import type { RunEvent } from '../run/run-events.ts';
import { inDoubtResult } from '../tools/call-in-doubt.ts';
import { type PolicyRetryHint, toPolicyRetryHint } from '../tools/retry-hint.ts';
import { type ToolResultJSON, toolResultToJSON } from '../tools/tool-result.ts';
import { appendHints } from './hint-window.ts';
import { callsToStart } from './run-actions.ts';
import { type BatchState, type InDoubtCall, type RunContext, toolCallMeta } from './run-context.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import {
  applyEffects,
  batchWith,
  decisionEvents,
  firstOpenResult,
  hintEvents,
  pairedResult,
  toolResultEvent,
  withFlow,
} from './run-updates.ts';

/** What an in-doubt action changes and emits (as run-outcomes.ts's RunOutcome). */
export interface InDoubtOutcome {
  update?: Partial<RunContext>;
  events: RunEvent[];
}

/** The calls of the batch whose result is an in-doubt one, in call order. */
export function inDoubtCallsOf(batch: Pick<BatchState, 'pending' | 'results'>): InDoubtCall[] {
  const calls: InDoubtCall[] = [];
  batch.results.forEach((result, index) => {
    if (!result?.inDoubt) return;
    const call = batch.pending[index]!;
    calls.push({
      toolCallId: call.toolCallId,
      name: call.name,
      input: call.preparedInput ?? {},
      ...(result.inDoubt.startedAt === undefined ? {} : { startedAt: result.inDoubt.startedAt }),
      cause: result.inDoubt.cause,
    });
  });
  return calls;
}

/**
 * Guard `callsInDoubt`: no call of the batch is left to run here (each has a result, or is the
 * app's, an external one) and some result is in doubt. Checked before the batch moves on, so an
 * in-doubt result is never folded into the transcript.
 */
export function callsInDoubt(batch: Pick<BatchState, 'pending' | 'results'>): boolean {
  // A call of the run's own left to run, the common case while a batch runs, answers at once:
  // the scan from the start after every result made a 10,000-call batch O(calls²) (issue 36 item 5).
  const open = firstOpenResult(batch.results);
  if (open < batch.results.length && !batch.pending[open]?.external) return false;
  let inDoubt = false;
  for (let index = 0; index < batch.results.length; index++) {
    const result = batch.results[index];
    if (result === null) {
      if (!batch.pending[index]?.external) return false;
    } else if (result?.inDoubt) inDoubt = true;
  }
  return inDoubt;
}

/**
 * The calls in doubt that policies have not decided on (`flow.inDoubtReviewed`), once no call of
 * the batch is left to run: what `onInDoubt` is asked about (runtime/steps/review-results.ts).
 */
export function inDoubtCallsToReview(context: Pick<RunContext, 'batch' | 'flow'>): InDoubtCall[] {
  if (!callsInDoubt(context.batch)) return [];
  const reviewed = context.flow.inDoubtReviewed;
  const calls = inDoubtCallsOf(context.batch);
  return reviewed === undefined ? calls : calls.filter((call) => !reviewed.includes(call.toolCallId));
}

/**
 * `applyInDoubtReview` (`settling`, docs/durability.md §Effects): each call in doubt as the
 * policies decided. `rerun`: its result cleared, so `executing` runs it again under the same
 * idempotency key; `tell_model`: its result the error the planner reads, with a RetryHint of
 * reason `outcome_unknown` (as a tool declared `whenInDoubt: 'tell_model'` gets); `ask` (the
 * default): kept in doubt and marked decided, so the run waits in `awaiting.inDoubt`. The rest of
 * the effects (caps, tools, labels, memory, `finalize`, `fail`) apply as a review's do.
 */
export function inDoubtReviewOutcome(context: RunContext, effects: PolicyEffects): InDoubtOutcome {
  const results = context.batch.results.slice();
  const reviewed = new Set(context.flow.inDoubtReviewed ?? []);
  const events: RunEvent[] = [];
  const hints: PolicyRetryHint[] = [];
  const at = Date.now();
  for (const call of inDoubtCallsToReview(context)) {
    const index = context.batch.pending.findIndex((pending) => pending.toolCallId === call.toolCallId);
    const action = effects.inDoubt?.[call.toolCallId]?.action ?? 'ask';
    if (action === 'rerun') {
      results[index] = null;
      reviewed.delete(call.toolCallId);
    } else if (action === 'tell_model') {
      const told = inDoubtResult(
        { id: call.name, whenInDoubt: 'tell_model' },
        call,
        call.cause,
        call.startedAt,
      );
      const result = pairedResult(context.batch.pending[index], toolResultToJSON(told));
      results[index] = result;
      events.push(toolResultEvent(context, result));
      const hint = toPolicyRetryHint(
        told.retryHint!,
        toolCallMeta(context, context.batch.pending[index]!),
        at,
      );
      hints.push(hint);
      reviewed.delete(call.toolCallId);
    } else reviewed.add(call.toolCallId);
  }
  const applied = applyEffects(context, effects);
  const flow = (applied.flow ?? context.flow) as RunContext['flow'];
  return {
    update: {
      ...applied,
      ...(hints.length > 0 ? { hints: appendHints(context.hints, hints) } : {}),
      batch: batchWith(context.batch, {
        results,
        ...(hints.length > 0 ? { newHints: [...context.batch.newHints, ...hints] } : {}),
      }),
      flow: { ...flow, inDoubtReviewed: [...reviewed] },
    },
    events: [...decisionEvents(context, effects), ...events, ...hintEvents(context, hints)],
  };
}

/** `requestInDoubt`: the run waits for the calls in doubt to be resolved. */
export function enterInDoubtUpdate(context: RunContext): Partial<RunContext> {
  return withFlow(context, { awaiting: { kind: 'in_doubt', calls: inDoubtCallsOf(context.batch) } });
}

/** Guard `isInDoubtResolution`: the event resolves every call the run holds in doubt. */
export function isInDoubtResolution(context: RunContext, event: RunMachineEvent): boolean {
  const awaiting = context.flow.awaiting;
  if (event.type !== 'resolve.inDoubt' || awaiting?.kind !== 'in_doubt') return false;
  return awaiting.calls.every((call) => Object.hasOwn(event.resolutions, call.toolCallId));
}

/**
 * `applyInDoubtResolution`: `done` and `failed` become the calls' results (`executed: true`: the
 * effect happened, or was tried), `not_done` clears the result so `executing` runs the call
 * again, under the same idempotency key.
 */
export function inDoubtResolutionOutcome(context: RunContext, event: RunMachineEvent): InDoubtOutcome {
  if (event.type !== 'resolve.inDoubt') return { events: [] };
  const results = context.batch.results.slice();
  const events: RunEvent[] = [];
  results.forEach((result, index) => {
    if (!result?.inDoubt) return;
    const call = context.batch.pending[index]!;
    const resolution = event.resolutions[call.toolCallId];
    if (resolution === undefined) return;
    if (resolution.status === 'not_done') {
      results[index] = null;
      return;
    }
    const base = { name: call.name, toolCallId: call.toolCallId, executed: true };
    const settled: ToolResultJSON = pairedResult(
      call,
      resolution.status === 'done'
        ? { ...base, result: resolution.output }
        : { ...base, error: { name: 'ToolError', message: resolution.error.message, recoverable: false } },
    );
    results[index] = settled;
    events.push(toolResultEvent(context, settled));
  });
  return {
    update: {
      batch: batchWith(context.batch, { results }),
      // A call resolved `not_done` that comes back in doubt (another crash) is decided on anew.
      flow: withFlow(context, { awaiting: null, inDoubtReviewed: undefined }).flow,
    },
    events,
  };
}

/**
 * How long a canceled run waits for its running calls to end, ms, once their signals aborted
 * (`canceling`): a tool that honours its signal, or was about to return, has its result recorded
 * instead of being in doubt. Bounded, so a tool that ignores its signal holds `run.result()` no
 * longer than this. As Temporal's `WAIT_CANCELLATION_COMPLETED` waits for a canceled activity,
 * with a limit.
 */
export const CANCEL_GRACE_MS = 1_000;

/**
 * Guard `callReturned` (`canceling`): the call's result is one the tool returned, or the call
 * never started (`executed: false`); an error after the abort may hide an effect.
 */
export function callReturned(event: RunMachineEvent): boolean {
  if (event.type !== 'tool.done') return false;
  const { result } = event.output;
  return result.error === undefined || result.executed === false;
}

/** `recordCanceledCall`: a call that ended with an error (or crashed) after the cancel is in doubt. */
export function canceledCallOutcome(context: RunContext, event: RunMachineEvent): InDoubtOutcome {
  const index =
    event.type === 'tool.done' ? event.output.index : event.type === 'tool.error' ? event.index : -1;
  const call = context.batch.pending[index];
  if (!call || context.batch.results[index] !== null) return { events: [] };
  const result = pairedResult(
    call,
    toolResultToJSON(inDoubtResult({ id: call.name }, call, 'canceled', context.flow.callsStartedAt)),
  );
  const results = context.batch.results.slice();
  results[index] = result;
  return {
    update: { batch: batchWith(context.batch, { results }) },
    events: [toolResultEvent(context, result)],
  };
}

/** Guard `callsEnded` (`canceling`): no call of the batch is running or queued here any more. */
export function callsEnded(batch: Pick<BatchState, 'pending' | 'results'>): boolean {
  return callsToStart(batch).length === 0;
}

/**
 * `recordCallsInDoubt` (the cancel's grace ran out, or the run was restored while canceling): the calls started and not finished may have
 * had their effect; their record says so (`inDoubt`, cause `canceled`) instead of nothing.
 */
export function canceledCallsOutcome(context: RunContext): InDoubtOutcome {
  const unfinished = callsToStart(context.batch);
  if (unfinished.length === 0) return { events: [] };
  const results = context.batch.results.slice();
  const events: RunEvent[] = [];
  for (const { call, index } of unfinished) {
    const result = pairedResult(
      call,
      toolResultToJSON(inDoubtResult({ id: call.name }, call, 'canceled', context.flow.callsStartedAt)),
    );
    results[index] = result;
    events.push(toolResultEvent(context, result));
  }
  return { update: { batch: batchWith(context.batch, { results }) }, events };
}
