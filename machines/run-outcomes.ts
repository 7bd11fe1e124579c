/**
 * What the run machine's actions that emit do (machines/run-machine.ts names them): each function
 * takes the context (and the event) and returns a {@link RunOutcome}, the members that change and
 * the RunEvents to emit, in order; the machine assigns and emits it with `apply`. Pure, beside the
 * assign-only ones of run-actions.ts, so each can be read and tested without an actor.
 *
 * @module
 */

import type { ParsedPlanResult } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { type RetryHint, toPolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { appendHints } from './hint-window.ts';
import { doneOutput, parsedPlan } from './plan-output.ts';
import { approvalRememberedEvent, rememberedOf, withRemembered } from './remembered-approvals.ts';
import {
  type FlowState,
  NO_CALLS,
  type PendingCall,
  type RunContext,
  toolCallMeta,
  turnId,
} from './run-context.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import type { ExecuteToolInput, ExecuteToolOutput } from './run-ports.ts';
import {
  batchWith,
  foldResults,
  hintEvents,
  notRunResult,
  now,
  pairedResult,
  resultsWith,
  toolResultEvent,
  turnRecorded,
  withFlow,
} from './run-updates.ts';

/** The members an action changes (none: `undefined`) and the events it emits, in order. */
export interface RunOutcome {
  update?: Partial<RunContext>;
  events: RunEvent[];
}

const NOTHING: RunOutcome = { events: [] };

/**
 * A `plan.done` transition's update, with what the planner turn used: its tokens added to the
 * run's (`PlanResult.usage`), and the time the host lost before it answered
 * (`PlanActorOutput.hostLostMs`) to `flow.awaitedMs`. `update` sees the context with them added,
 * and the transition makes one assign (each assign clones XState's snapshot): they were an exit
 * action of `planning` and `finalizing` of their own.
 */
export function withUsage(
  context: RunContext,
  event: RunMachineEvent,
  update: (context: RunContext, event: RunMachineEvent) => Partial<RunContext>,
): Partial<RunContext> {
  const flow = event.type === 'plan.done' ? usedFlow(context.flow, event) : context.flow;
  if (flow === context.flow) return update(context, event);
  const changes = update({ ...context, flow }, event);
  return changes.flow === undefined ? Object.assign({}, changes, { flow }) : changes;
}

/** `flow` with a planner turn's usage added; the same object when it reported none. */
function usedFlow(flow: FlowState, event: Extract<RunMachineEvent, { type: 'plan.done' }>): FlowState {
  const plan = parsedPlan(event);
  const usage = plan?.usage;
  const cost = plan?.cost;
  // Time the host lost (a retried activity) is not the run's: it moves the deadline as a wait does.
  const lost = event.output.hostLostMs;
  if (!usage && !lost && !cost) return flow;
  // Object.assign: a spread of a `flow` a spread made is ~2x slower (run-updates.ts batchWith).
  const used = Object.assign({}, flow);
  if (usage) {
    const total = flow.usage ?? { inputTokens: 0, outputTokens: 0 };
    used.usage = {
      inputTokens: total.inputTokens + usage.inputTokens,
      outputTokens: total.outputTokens + usage.outputTokens,
    };
  }
  if (cost) used.cost = costWith(flow.cost, cost);
  if (lost) used.awaitedMs = (flow.awaitedMs ?? 0) + lost;
  return used;
}

/**
 * The run's money spent with a turn's `cost` added (docs/policies.md §Money). The turn's `spent`,
 * when it says (costBudget does), is the run's total as its budget counted it and wins over the
 * sum; a turn in another currency than the run's so far replaces it (one price table per runtime).
 */
function costWith(
  total: FlowState['cost'],
  cost: NonNullable<ParsedPlanResult['cost']>,
): NonNullable<FlowState['cost']> {
  const before = total?.currency === cost.currency ? total.spent : 0;
  const next: NonNullable<FlowState['cost']> = {
    currency: cost.currency,
    spent: cost.spent ?? before + cost.amount,
  };
  const limit = cost.limit ?? (total?.currency === cost.currency ? total.limit : undefined);
  if (limit !== undefined) next.limit = limit;
  return next;
}

/** `emitNotes`: a `planner_note` per note of the plan. */
export function notesOutcome(context: RunContext, event: RunMachineEvent): RunOutcome {
  const notes = parsedPlan(event)?.notes;
  if (!notes || notes.length === 0) return NOTHING;
  const at = now();
  const turn = turnId(context);
  return {
    events: notes.map((note) => ({ type: 'planner_note', runId: context.runId, at, turnId: turn, note })),
  };
}

/** `refuseBatch`: a batch that would pass `maxToolCalls` is answered with results and finalizes. */
export function refuseBatchOutcome(context: RunContext): RunOutcome {
  const { pending } = context.batch;
  const message = `Batch refused: ${pending.length} more calls would pass maxToolCalls (${context.caps.maxToolCalls}; ${context.toolCalls} used)`;
  const results = pending.map((call) => notRunResult(call, message));
  return {
    update: {
      ...foldResults(context, results),
      ...withFlow(context, { finalize: { reason: 'tool_cap', at: now() } }),
    },
    events: results.map((result) => toolResultEvent(context, result)),
  };
}

/**
 * `refuseLargeBatch`: a planner answer with more calls than `caps.maxCallsPerBatch`, refused at
 * `plan.done`, before its calls become the batch: none is recorded, validated or run. The
 * transcript gets a user message saying what was refused and the limit (no assistant message
 * with calls that would each need a result: the refusal costs the same for 10,000 calls as for
 * 129); the run gets a RetryHint (`invalid_arguments`, on the answer's first call's name) and a
 * `retry_hint` event (policies' `onRetryHint` review it in `resuming`); it counts as one failed
 * turn against `maxConsecutiveFailedToolCalls`; the run plans again (issue 36 item 5: a
 * 4,000-call answer stalled every run in the process).
 */
export function refuseLargeBatchOutcome(context: RunContext, event: RunMachineEvent): RunOutcome {
  const calls = parsedPlan(event)?.toolCalls ?? [];
  const limit = context.caps.maxCallsPerBatch ?? calls.length;
  const message = `Your last answer proposed ${calls.length} tool calls; at most ${limit} run in one turn, so none of them ran. Propose at most ${limit} calls, and the rest in later turns.`;
  const retryHint: RetryHint = {
    reason: 'invalid_arguments',
    tool: String(calls[0]?.name ?? ''),
    restrictToTool: false,
    missingFields: [],
    message,
  };
  const hint = toPolicyRetryHint(
    retryHint,
    toolCallMeta(context, { toolCallId: `${turnId(context)}:c1`, attempt: 1 }),
    now(),
  );
  const turn = turnRecorded(context, { pending: NO_CALLS, results: NO_CALLS });
  return {
    update: {
      messages: [...context.messages, { role: 'user' as const, content: message }],
      ...turn,
      consecutiveFailures: context.consecutiveFailures + 1,
      hints: appendHints(context.hints, [hint]),
      batch: batchWith(turn.batch, { newHints: [hint] }),
    },
    events: hintEvents(context, [hint]),
  };
}

/** `applyToolApproval`: approval admits the waiting calls; a denial answers each with a result. */
export function toolApprovalOutcome(context: RunContext, event: RunMachineEvent): RunOutcome {
  if (event.type !== 'confirm') return NOTHING;
  const awaiting = context.flow.awaiting;
  const ids = new Set(awaiting?.kind === 'confirmation' ? awaiting.toolCallIds : []);
  const { pending, results } = context.batch;
  const decided = (call: PendingCall) => ids.has(call.toolCallId) && call.status === 'confirm';
  const denial = `The call to %s was not approved${event.by ? ` by ${event.by}` : ''}${event.reason ? `: ${event.reason}` : ''}`;
  const denied: ToolResultJSON[] = [];
  const nextResults = results.map((result, index) => {
    const call = pending[index]!;
    if (event.approved || !decided(call)) return result;
    const refused = notRunResult(call, denial.replace('%s', call.name), 'ToolConfirmationDenied', true);
    denied.push(refused);
    return refused;
  });
  const status = event.approved ? ('admitted' as const) : ('rejected' as const);
  // Approved with edits: the call runs with the edited input (checked by the tool boundary in the
  // run handle), and keeps what it was and who changed it (issue 24 item 4).
  const edits = new Map(event.approved ? (event.edits ?? []).map((edit) => [edit.toolCallId, edit]) : []);
  // Approved with `remember`: the approvals the handle built, one per call (issue 35 item 4). A
  // host that forwards the app's answer as it is (`remember: 'tool'`) records none.
  const remember = rememberedOf(event);
  const remembered = new Map(remember.map((approval) => [approval.toolCallId, approval]));
  const approvedCall = (call: PendingCall): PendingCall => {
    const edit = edits.get(call.toolCallId);
    const approval = remembered.get(call.toolCallId);
    const decided: PendingCall = event.approved ? { ...call, status, approved: true } : { ...call, status };
    const marked: PendingCall = approval
      ? {
          ...decided,
          remembered: {
            how: 'recorded',
            approvalId: approval.id,
            scope: approval.scope,
            ...(approval.by === undefined ? {} : { by: approval.by }),
          },
        }
      : decided;
    if (!edit) return marked;
    return {
      ...marked,
      preparedInput: edit.preparedInput,
      ...(edit.droppedFields ? { droppedFields: edit.droppedFields } : {}),
      edited: {
        original: call.preparedInput,
        input: edit.input,
        ...(event.by === undefined ? {} : { by: event.by }),
      },
    };
  };
  const rememberedEvent = approvalRememberedEvent(context, event);
  return {
    update: {
      batch: batchWith(context.batch, {
        pending: pending.map((call) => (decided(call) ? approvedCall(call) : call)),
        results: nextResults,
      }),
      ...withFlow(context, {
        awaiting: null,
        ...(remember.length === 0 ? {} : { approvals: withRemembered(context.flow.approvals, remember) }),
      }),
    },
    events: [
      ...(rememberedEvent ? [rememberedEvent] : []),
      ...denied.map((result) => toolResultEvent(context, result)),
    ],
  };
}

/** `startToolCalls`: a `tool_call_scheduled` per call handed to `steps`. */
export function scheduledOutcome(context: RunContext, calls: readonly ExecuteToolInput[]): RunOutcome {
  const at = now();
  const turn = turnId(context);
  return {
    // When they started: a call left in doubt by a crash says so (docs/durability.md §Effects).
    update: withFlow(context, { callsStartedAt: at }),
    // Literals, no spread: ~1 µs a call less (issue 36 item 5).
    events: calls.map(({ call }): RunEvent => {
      const { toolCallId, name: tool, attempt, edited } = call;
      const { runId } = context;
      return edited
        ? { type: 'tool_call_scheduled', runId, at, turnId: turn, toolCallId, tool, attempt, edited }
        : { type: 'tool_call_scheduled', runId, at, turnId: turn, toolCallId, tool, attempt };
    }),
  };
}

/** `recordToolResult`: a call's result (and its hint) in the batch, once. */
export function toolResultOutcome(context: RunContext, event: RunMachineEvent): RunOutcome {
  const output = doneOutput<ExecuteToolOutput>(event);
  const call = context.batch.pending[output.index];
  if (!call || context.batch.results[output.index] !== null) return NOTHING;
  const result = pairedResult(call, output.result);
  const results = resultsWith(context.batch.results, output.index, result);
  const hints = output.hint ? [output.hint] : [];
  return {
    update: {
      hints: appendHints(context.hints, hints),
      batch: batchWith(context.batch, {
        results,
        newHints: hints.length > 0 ? [...context.batch.newHints, ...hints] : context.batch.newHints,
      }),
      // Time the host lost (a retried activity) is not the run's, as for a planner turn.
      ...(output.hostLostMs
        ? withFlow(context, { awaitedMs: (context.flow.awaitedMs ?? 0) + output.hostLostMs })
        : {}),
    },
    events: [toolResultEvent(context, result), ...hintEvents(context, hints)],
  };
}

/** `recordToolCrash`: `executeTool` rejected (a bug in a wrapper); kept as the call's result. */
export function toolCrashOutcome(context: RunContext, event: RunMachineEvent): RunOutcome {
  if (event.type !== 'tool.error') return NOTHING;
  const { index, toolCallId, error } = event;
  const call = context.batch.pending[index];
  if (!call || call.toolCallId !== toolCallId || context.batch.results[index] !== null) return NOTHING;
  const result = pairedResult(call, {
    name: call.name,
    toolCallId,
    executed: true,
    error: {
      name: 'ToolError',
      message: error instanceof Error ? error.message : String(error),
      recoverable: false,
    },
  });
  const results = resultsWith(context.batch.results, index, result);
  return {
    update: { batch: batchWith(context.batch, { results }) },
    events: [toolResultEvent(context, result)],
  };
}

/** `recordExternalResults`: the app's results for its calls; the calls that ran here keep theirs. */
export function externalResultsOutcome(context: RunContext, event: RunMachineEvent): RunOutcome {
  if (event.type !== 'provide.toolResults') return NOTHING;
  const byId = new Map(event.results.map((result) => [result.toolCallId, result]));
  const results = context.batch.pending.map(
    (call, index) => context.batch.results[index] ?? byId.get(call.toolCallId) ?? null,
  );
  return {
    update: { batch: batchWith(context.batch, { results }), ...withFlow(context, { awaiting: null }) },
    events: results.flatMap((result) => (result ? [toolResultEvent(context, result)] : [])),
  };
}

/** `emitAwait`: the event of what the run now awaits. */
export function awaitOutcome(context: RunContext): RunOutcome {
  const awaiting = context.flow.awaiting;
  const base = { runId: context.runId, at: now() };
  if (awaiting?.kind === 'clarification') {
    return { events: [{ type: 'await_clarification', ...base, clarification: awaiting.clarification }] };
  }
  if (awaiting?.kind === 'external_tools') {
    return { events: [{ type: 'await_external_tools', ...base, externalTools: awaiting.externalTools }] };
  }
  if (awaiting?.kind === 'confirmation') {
    // `question` is the one name for what is asked (as in run.awaiting); `prompt` stays, deprecated.
    const confirmation = {
      ...awaiting.confirmation,
      question: awaiting.confirmation.prompt,
      toolCallIds: awaiting.toolCallIds,
      ...(awaiting.calls === undefined ? {} : { calls: awaiting.calls }),
    };
    return { events: [{ type: 'await_confirmation', ...base, confirmation }] };
  }
  if (awaiting?.kind === 'in_doubt') {
    return { events: [{ type: 'await_in_doubt', ...base, inDoubt: { calls: awaiting.calls } }] };
  }
  return NOTHING;
}
