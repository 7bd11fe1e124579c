import { tightenCaps } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import { type AwaitClarification, AwaitClarificationSchema } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import type { RunEvent } from '../run/run-events.ts';
import { clippedRefusedInput } from '../tools/preview-value.ts';
import type { PolicyRetryHint, RetryHint } from '../tools/retry-hint.ts';
import type { ToolErrorJSON } from '../tools/tool-error.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { appendHints } from './hint-window.ts';
import {
  type BatchState,
  type FlowState,
  NO_CALLS,
  type PendingCall,
  type RunContext,
  type ToolStats,
  turnId,
} from './run-context.ts';
import type { ValidateBatchOutput } from './run-ports.ts';

/**
 * The run machine's context updates and the events they emit, as pure functions of the context,
 * so the machine's actions stay one line each. Every update keeps {@link RunContext}'s shape
 * (the machine's bookkeeping in `batch` and `flow`).
 *
 * On the hot path, an object built by a spread gets no members it did not copy: Node 20's V8
 * takes ~0.5 µs for each member added after a spread (`{ ...a, added }`, measured), against
 * ~30 ns for the spread itself or for replacing members it copied. New members go first
 * (`{ added, ...a }`, when `a` cannot hold them) or through `Object.assign`. And an object that
 * is rebuilt from the one before every step (the batch, a tool's stats) is not spread at all:
 * `{ ...a, replaced }` where `a` was itself made by that spread costs ~350 ns (measured; ~20 ns
 * when `a` was not), so those are literals (`batchWith`) or `Object.assign` copies (~100 ns).
 */

export const now = () => Date.now();

/** A non-recoverable error in its JSON form, as `flow.error` and `run_failed` hold it. */
export function runError(message: string, name = 'RunError'): ToolErrorJSON {
  return { name, message, recoverable: false };
}

/** `flow` with `patch` applied. */
export function withFlow(context: RunContext, patch: Partial<FlowState>): Pick<RunContext, 'flow'> {
  return { flow: { ...context.flow, ...patch } };
}

/**
 * `batch` with `changes`, built member by member. Not `{ ...batch, ...changes }`: Node 20's V8
 * takes ~350 ns to spread an object that was itself made by a spread and replace some of its
 * members (measured; the batch is rebuilt from the one before 4-5 times a step), against ~10 ns
 * for this literal, whose one shape every batch shares.
 */
export function batchWith(batch: BatchState, changes: Omit<Partial<BatchState>, 'restrictedTo'>): BatchState {
  return turnBatch(batch, changes, batch.restrictedTo);
}

/** `batch` with `changes`, planned under `restrictedTo` (cleared when undefined): see {@link batchWith}. */
function turnBatch(
  batch: BatchState,
  changes: Omit<Partial<BatchState>, 'restrictedTo'>,
  restrictedTo: string[] | undefined,
): BatchState {
  return {
    pending: changes.pending ?? batch.pending,
    results: changes.results ?? batch.results,
    lastResults: changes.lastResults ?? batch.lastResults,
    newResults: changes.newResults ?? batch.newResults,
    newHints: changes.newHints ?? batch.newHints,
    restrictedTo,
  };
}

/**
 * A planner turn's outcome, recorded in one update: what the turn consumed (the restriction,
 * the last batch's results, the answers) is cleared, and `batch` / `flow` get the turn's own
 * changes.
 */
export function turnRecorded(
  context: RunContext,
  batch: Partial<BatchState>,
  flow?: Partial<FlowState>,
): Pick<RunContext, 'restrictTo' | 'batch' | 'flow'> {
  return {
    restrictTo: null,
    batch: turnBatch(
      context.batch,
      { pending: batch.pending, results: batch.results, lastResults: NO_CALLS },
      context.restrictTo ?? undefined,
    ),
    // The same `flow` when the turn changes nothing in it (a turn of tool calls, after one that
    // had no answer): a store keeps its copy of an unchanged member instead of copying it again.
    flow:
      flow === undefined && context.flow.answer === null
        ? context.flow
        : { ...context.flow, answer: null, ...flow },
  };
}

/**
 * When the run's time budget ends, epoch ms: `timeBudgetMs` after its start, plus the time it
 * spent awaiting answers (`FlowState.awaitedMs`), which is not the run's to spend.
 */
export function deadlineAt(
  context: Pick<RunContext, 'startedAt' | 'caps'> & { flow?: Pick<FlowState, 'awaitedMs'> },
): number {
  return context.startedAt + context.caps.timeBudgetMs + (context.flow?.awaitedMs ?? 0);
}

/**
 * Folds one finished batch, in call order, into the transcript (a tool message per result:
 * the result, or `{ error, retryHint }`), the failure counters and the per-tool stats. The
 * results become the next `planResume`'s `toolResults` and what the policies review.
 */
export function foldResults(context: RunContext, results: ToolResultJSON[]): Partial<RunContext> {
  const messages: Message[] = context.messages.slice();
  // Object.assign, not a spread of the spread made the step before (see batchWith).
  const toolStats: Record<string, ToolStats> = Object.assign({}, context.toolStats);
  let consecutiveFailures = context.consecutiveFailures;
  const newHints = context.batch.newHints;
  for (const result of results) {
    const content = result.error
      ? { error: result.error, retryHint: result.retryHint }
      : (result.result ?? null);
    const { providerToolCallId } = result;
    messages.push(
      providerToolCallId === undefined
        ? { role: 'tool', toolCallId: result.toolCallId, toolName: result.name, content }
        : { role: 'tool', toolCallId: result.toolCallId, providerToolCallId, toolName: result.name, content },
    );
    // A literal, not a spread of the stats before (see batchWith).
    const before = toolStats[result.name];
    const failed = Boolean(result.error);
    const stats: ToolStats = {
      calls: (before?.calls ?? 0) + 1,
      failures: (before?.failures ?? 0) + (failed ? 1 : 0),
      consecutiveFailures: failed ? (before?.consecutiveFailures ?? 0) + 1 : 0,
    };
    consecutiveFailures = failed ? consecutiveFailures + 1 : 0;
    const hint =
      (newHints.length === 0 ? undefined : newHints.findLast((h) => h.toolCallId === result.toolCallId)) ??
      before?.lastHint;
    if (hint) stats.lastHint = hint;
    toolStats[result.name] = stats;
  }
  return {
    messages,
    toolStats,
    consecutiveFailures,
    batch: batchWith(context.batch, {
      pending: NO_CALLS,
      results: NO_CALLS,
      lastResults: results,
      newResults: results,
    }),
  };
}

/**
 * The index of the batch's first call without a result (`results.length` when every call has
 * one), cached by results array: a batch's executing step reads it after every tool result, and
 * a scan from the start each time made a 4,000-call batch O(calls²) (issue 36 item 5).
 */
export function firstOpenResult(results: readonly (ToolResultJSON | null)[], from = 0): number {
  const cached = firstOpen.get(results);
  if (cached !== undefined) return cached;
  let index = from;
  while (index < results.length && results[index] !== null) index++;
  firstOpen.set(results, index);
  return index;
}

const firstOpen = new WeakMap<readonly (ToolResultJSON | null)[], number>();

/**
 * `results` with `result` at `index` (a copy: the context is immutable), its first open index
 * carried over from the array before instead of scanned again.
 */
export function resultsWith(
  results: readonly (ToolResultJSON | null)[],
  index: number,
  result: ToolResultJSON,
): (ToolResultJSON | null)[] {
  const before = firstOpenResult(results);
  const next = results.slice();
  next[index] = result;
  if (index !== before) firstOpen.set(next, before);
  else firstOpenResult(next, index + 1);
  return next;
}

/** The result of a call the run did not run: refused, denied, or left when the batch stopped. */
export function notRunResult(
  call: Pick<PendingCall, 'name' | 'toolCallId' | 'providerToolCallId'>,
  message: string,
  name = 'ToolError',
  recoverable = false,
): ToolResultJSON {
  return {
    name: call.name,
    toolCallId: call.toolCallId,
    ...(call.providerToolCallId === undefined ? {} : { providerToolCallId: call.providerToolCallId }),
    executed: false,
    error: { name, message, recoverable },
  };
}

/**
 * The result as the run records it: paired with the planner's own id for the call, so a planner
 * (a model adapter) matches results to the calls it made without keeping a map.
 */
export function pairedResult(call: PendingCall | undefined, result: ToolResultJSON): ToolResultJSON {
  if (call?.providerToolCallId === undefined || call.toolCallId !== result.toolCallId) return result;
  if (result.providerToolCallId === call.providerToolCallId) return result;
  // Object.assign: the member added after a spread costs ~0.6-1.3 µs (see the module's note).
  return Object.assign({}, result, { providerToolCallId: call.providerToolCallId });
}

/** A pending call as the transcript's assistant message lists it (the provider's id kept). */
export function transcriptToolCall(call: PendingCall): {
  toolCallId: string;
  providerToolCallId?: string;
  toolName: string;
  input: unknown;
} {
  return call.providerToolCallId === undefined
    ? { toolCallId: call.toolCallId, toolName: call.name, input: call.input }
    : {
        toolCallId: call.toolCallId,
        providerToolCallId: call.providerToolCallId,
        toolName: call.name,
        input: call.input,
      };
}

export function toolResultEvent(context: RunContext, result: ToolResultJSON): RunEvent {
  return { type: 'tool_result', runId: context.runId, at: now(), turnId: turnId(context), result };
}

export function hintEvents(context: RunContext, hints: PolicyRetryHint[]): RunEvent[] {
  return hints.map((hint) => ({ type: 'retry_hint', runId: context.runId, at: hint.at, hint }));
}

/** A `policy_decision` event per decision of the effects, in order. */
export function decisionEvents(context: RunContext, effects: PolicyEffects): RunEvent[] {
  return effects.decisions.map((decision) => ({
    type: 'policy_decision',
    runId: context.runId,
    at: now(),
    turnId: turnId(context),
    decision,
  }));
}

/**
 * Applies merged policy effects (docs/policies.md): caps only tighten, never above the ceilings; tools
 * the app disabled stay disabled whatever a policy says; `flow.effects` is what routing reads.
 */
export function applyEffects(context: RunContext, effects: PolicyEffects): Partial<RunContext> {
  // Only what changes: most batches bring no effects, and an unchanged member rebuilt (a new
  // `flow` with `effects: null` again) is one more object to assign, persist and copy per step.
  const update: Partial<RunContext> = {};
  const caps = tightenCaps(context.caps, effects.caps);
  if (caps !== context.caps) update.caps = caps;
  if (effects.disabledTools) {
    update.disabledTools = { ...effects.disabledTools, ...appDisabled(context.disabledTools) };
  }
  if (effects.restrictTo !== undefined && effects.restrictTo !== null) update.restrictTo = effects.restrictTo;
  if (effects.labels) update.labels = { ...context.labels, ...effects.labels };
  if (effects.policyState !== undefined) update.policyState = effects.policyState;
  const routed = routedEffects(effects);
  if (routed !== null || context.flow.effects !== null)
    update.flow = withFlow(context, { effects: routed }).flow;
  return update;
}

/**
 * What routing reads of the effects; null when they ask for nothing (carry on). A clarification
 * request that is not a valid AwaitClarification fails the run closed, as a policy error does
 * (docs/policies.md), instead of throwing inside the machine's action.
 */
function routedEffects(effects: PolicyEffects): FlowState['effects'] {
  const backoffUntil = effects.backoffMs && effects.backoffMs > 0 ? now() + effects.backoffMs : undefined;
  if (
    !effects.fail &&
    !effects.finalize &&
    !effects.awaitClarification &&
    backoffUntil === undefined &&
    !effects.confirm
  )
    return null;
  let { fail } = effects;
  let awaitClarification: AwaitClarification | undefined;
  if (effects.awaitClarification !== undefined) {
    const parsed = AwaitClarificationSchema.safeParse(effects.awaitClarification);
    if (parsed.success) awaitClarification = parsed.data;
    else fail ??= { reason: `invalid awaitClarification from policies: ${parsed.error.issues[0]?.message}` };
  }
  const confirm = effects.confirm && {
    policy: effects.confirm.policy,
    ...(effects.confirm.prompt === undefined ? {} : { prompt: effects.confirm.prompt }),
    ...(effects.confirm.details === undefined ? {} : { details: effects.confirm.details }),
    ...(effects.confirm.error === undefined ? {} : { error: effects.confirm.error }),
  };
  return { fail, finalize: finalizeOf(effects), awaitClarification, backoffUntil, confirm };
}

/** The effects' finalize with the policy that decided it and its note (the first decision to finalize). */
function finalizeOf(effects: PolicyEffects): NonNullable<FlowState['effects']>['finalize'] {
  if (!effects.finalize) return undefined;
  const decision = effects.decisions.find((d) => d.kinds.includes('finalize'));
  if (!decision) return effects.finalize;
  return {
    ...effects.finalize,
    policy: decision.policy,
    ...(decision.note ? { note: decision.note } : {}),
  };
}

function appDisabled(disabled: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id in disabled) if (disabled[id] === 'app') out[id] = 'app';
  return out;
}

/** The policies' review of a batch: its effects applied, the batch marked reviewed. */
export function reviewUpdate(
  context: RunContext,
  effects: PolicyEffects,
): { update: Partial<RunContext>; events: RunEvent[] } {
  if (effects.resultHints === undefined) {
    return {
      update: {
        batch: batchWith(context.batch, { newResults: NO_CALLS, newHints: NO_CALLS }),
        ...applyEffects(context, effects),
      },
      events: decisionEvents(context, effects),
    };
  }
  const hinted = withResultHints(context, effects.resultHints);
  return {
    update: {
      messages: hinted.messages,
      hints: [...context.hints, ...hinted.hints],
      batch: batchWith(context.batch, {
        newResults: NO_CALLS,
        newHints: NO_CALLS,
        lastResults: hinted.lastResults,
      }),
      ...applyEffects(context, effects),
    },
    events: [...hintEvents(context, hinted.hints), ...decisionEvents(context, effects)],
  };
}

/**
 * Hints policies gave results under review (`hint`, issue 35 item 1: `no_progress`): each is put
 * on its result where the planner reads it, the tool message (a result becomes
 * `{ result, retryHint }`, a failure's `{ error, retryHint }` gets it in place of its own) and
 * `toolResults`, and becomes a `policy.RetryHint` of the run.
 */
function withResultHints(
  context: RunContext,
  added: NonNullable<PolicyEffects['resultHints']>,
): { messages: Message[]; lastResults: ToolResultJSON[]; hints: PolicyRetryHint[] } {
  const messages = context.messages.slice();
  const at = now();
  const byCall = new Map<string, PolicyRetryHint>();
  for (const { toolCallId, tool, reason, message } of added) {
    byCall.set(toolCallId, {
      reason,
      tool,
      restrictToTool: false,
      missingFields: [],
      message,
      runId: context.runId,
      turnId: turnId(context),
      toolCallId,
      attempt: 1,
      at,
    });
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'tool') continue;
    const hint = byCall.get(message.toolCallId);
    if (!hint) continue;
    const retryHint = plannerHint(hint);
    const content = message.content as { error?: unknown } | null;
    messages[i] = {
      ...message,
      content:
        content !== null && typeof content === 'object' && 'error' in content
          ? { ...content, retryHint }
          : { result: message.content, retryHint },
    };
  }
  const lastResults = context.batch.lastResults.map((result) => {
    const hint = byCall.get(result.toolCallId);
    return hint ? { ...result, retryHint: plannerHint(hint) } : result;
  });
  return { messages, lastResults, hints: [...byCall.values()] };
}

/** The planner's part of a policy hint: without its provenance. */
function plannerHint(hint: PolicyRetryHint): RetryHint {
  const { runId: _run, turnId: _turn, toolCallId: _call, attempt: _attempt, at: _at, ...planner } = hint;
  return planner;
}

/**
 * The batch's refused calls with their input clipped (`clippedRefusedInput`), in the pending list
 * and in the assistant message that proposed them, so a refused call's megabytes are neither
 * stored with every snapshot nor sent to the model every turn (issue 24 item 8). `messages` is
 * undefined when no input needed clipping (the usual case: nothing is copied).
 */
function clipRefusedCalls(
  messages: Message[],
  pending: PendingCall[],
): { messages?: Message[]; pending: PendingCall[] } {
  const ids = new Map<string, unknown>();
  const kept = pending.map((call) => {
    if (call.status !== 'rejected') return call;
    const input = clippedRefusedInput(call.input);
    if (input === call.input) return call;
    ids.set(call.toolCallId, input);
    return { ...call, input };
  });
  if (ids.size === 0) return { pending };
  const out = messages.slice();
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    if (message.role !== 'assistant' || !message.toolCalls?.some((call) => ids.has(call.toolCallId)))
      continue;
    out[i] = {
      ...message,
      toolCalls: message.toolCalls.map((call) =>
        ids.has(call.toolCallId) ? { ...call, input: ids.get(call.toolCallId) } : call,
      ),
    };
    break;
  }
  return { messages: out, pending: kept };
}

/** What a checked batch does to the context, and the events it emits, in order. */
export function validationUpdate(
  context: RunContext,
  output: ValidateBatchOutput,
): { update: Partial<RunContext>; events: RunEvent[] } {
  const effects = applyEffects(context, output.effects);
  const events: RunEvent[] = hintEvents(context, output.hints);
  if (output.effects.decisions.length > 0) {
    events.push(...decisionEvents({ ...context, ...effects }, output.effects));
  }
  const results = output.results.map(
    (result, index) => result && pairedResult(output.pending[index], result),
  );
  for (const result of results) if (result) events.push(toolResultEvent(context, result));
  const hinted = output.hints.length > 0;
  const refused = clipRefusedCalls(context.messages, output.pending);
  return {
    // The effects (never `toolCalls`, `hints` or `batch`) last: see the module's note on spreads.
    update: {
      ...(refused.messages === undefined ? {} : { messages: refused.messages }),
      toolCalls: context.toolCalls + output.pending.length,
      hints: appendHints(context.hints, output.hints),
      batch: batchWith(context.batch, {
        pending: refused.pending,
        results,
        newHints: hinted ? [...context.batch.newHints, ...output.hints] : context.batch.newHints,
      }),
      ...effects,
    },
    events,
  };
}
