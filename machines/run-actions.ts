/**
 * What the run machine's actions do to its context (machines/run-machine.ts names them; docs/architecture.md):
 * each function takes the context (and the event) and returns the members that change. Pure, so
 * each can be read and tested without an actor.
 *
 * @module
 */

import { AwaitClarificationSchema } from '../run/planner.ts';
import { ToolError, type ToolErrorJSON } from '../tools/tool-error.ts';
import { planOf, planOutput } from './plan-output.ts';
import {
  type BatchState,
  type ConfirmationCall,
  NO_CALLS,
  type PendingCall,
  type RunContext,
  turnId,
} from './run-context.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import {
  batchWith,
  firstOpenResult,
  foldResults,
  notRunResult,
  runError,
  transcriptToolCall,
  turnRecorded,
  withFlow,
} from './run-updates.ts';

/** `recordToolCalls`. */
export function recordToolCallsUpdate(context: RunContext, event: RunMachineEvent): Partial<RunContext> {
  const plan = planOf(event);
  const calls = plan.toolCalls ?? [];
  const turn = turnId(context);
  const forbidden = planOutput(event).forbiddenKeys;
  const pending: PendingCall[] = calls.map((call, index) =>
    proposedCall(
      `${turn}:c${index + 1}`,
      call,
      (context.toolStats[call.name]?.consecutiveFailures ?? 0) + 1,
      forbidden?.[index],
    ),
  );
  // `messages` first: members added after a spread cost ~0.5 µs each on Node 20 (run-updates.ts).
  return {
    messages: [
      ...context.messages,
      {
        role: 'assistant' as const,
        content: plan.finalResponse?.text,
        toolCalls: pending.map(transcriptToolCall),
      },
    ],
    ...turnRecorded(context, { pending, results: pending.map(() => null) }),
  };
}

/**
 * A proposed call, its members in one order whichever are set: literals, no spreads (a spread in
 * a literal cost ~1 µs a call, 10 ms for a 10,000-call answer: issue 36 item 5).
 */
function proposedCall(
  toolCallId: string,
  call: { toolCallId?: string; name: string; input?: unknown },
  attempt: number,
  forbiddenKeys: string[] | undefined,
): PendingCall {
  const { name, input } = call;
  const providerToolCallId = call.toolCallId;
  const status = 'proposed';
  if (forbiddenKeys === undefined) {
    return providerToolCallId === undefined
      ? { toolCallId, name, input, attempt, status }
      : { toolCallId, providerToolCallId, name, input, attempt, status };
  }
  return providerToolCallId === undefined
    ? { toolCallId, name, input, attempt, status, forbiddenKeys }
    : { toolCallId, providerToolCallId, name, input, attempt, status, forbiddenKeys };
}

/** `recordClarificationRequest`. */
export function recordClarificationRequestUpdate(
  context: RunContext,
  event: RunMachineEvent,
): Partial<RunContext> {
  const clarification = AwaitClarificationSchema.parse(planOf(event).await!.clarification);
  return {
    ...turnRecorded(context, {}, { awaiting: { kind: 'clarification', clarification } }),
    messages: [...context.messages, { role: 'assistant' as const, content: clarification.question }],
  };
}

/** `recordExternalToolsRequest`. */
export function recordExternalToolsRequestUpdate(
  context: RunContext,
  event: RunMachineEvent,
): Partial<RunContext> {
  const externalTools = planOf(event).await!.externalTools!;
  const pending: PendingCall[] = externalTools.calls.map((call) => ({
    ...call,
    attempt: (context.toolStats[call.name]?.consecutiveFailures ?? 0) + 1,
    status: 'admitted',
  }));
  return {
    // External calls are tool calls too: they count against maxToolCalls.
    toolCalls: context.toolCalls + pending.length,
    ...turnRecorded(
      context,
      { pending, results: pending.map(() => null) },
      { awaiting: { kind: 'external_tools', externalTools } },
    ),
    messages: [
      ...context.messages,
      {
        role: 'assistant' as const,
        toolCalls: pending.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.name,
          input: call.input,
        })),
      },
    ],
  };
}

/** `recordConfirmationRequest`. */
export function recordConfirmationRequestUpdate(
  context: RunContext,
  event: RunMachineEvent,
): Partial<RunContext> {
  const confirmation = planOf(event).await!.confirmation!;
  return {
    ...turnRecorded(context, {}, { awaiting: { kind: 'confirmation', confirmation } }),
    messages: [...context.messages, { role: 'assistant' as const, content: confirmation.prompt }],
  };
}

/** `recordFinalResponse`. */
export function recordFinalResponseUpdate(context: RunContext, event: RunMachineEvent): Partial<RunContext> {
  const finalResponse = planOf(event).finalResponse!;
  return {
    messages: [...context.messages, { role: 'assistant' as const, content: finalResponse.text }],
    ...withFlow(context, { finalResponse }),
  };
}

/**
 * `recordPlannerError`: the run's error is the planner's, as a ToolError's JSON form, so its cause
 * chain is kept (`ModelUnavailableError` ← `connect ECONNREFUSED`: the network reason a provider
 * error carries), bounded as a tool error's is (`MAX_CAUSE_DEPTH` links, cycles cut; each message
 * clipped to `MAX_PLANNER_ERROR_CHARS`). The outermost message says `Planner failed: …`.
 */
export function recordPlannerErrorUpdate(context: RunContext, event: RunMachineEvent): Partial<RunContext> {
  return withFlow(context, { error: plannerErrorOf((event as { error?: unknown }).error) });
}

/** A planner's error as the run keeps it (see {@link recordPlannerErrorUpdate}). */
export function plannerErrorOf(err: unknown): ToolErrorJSON {
  const json = err instanceof Error ? ToolError.from(err).toJSON() : undefined;
  // The thrown class's own name, `Error` included (ToolError.from names a plain Error `ToolError`).
  const name = err instanceof Error ? err.name : 'PlannerError';
  const message = json?.message ?? String(err);
  return {
    ...clipped({ name, message: `Planner failed: ${message}`, recoverable: false }),
    ...(json?.cause ? { cause: clipped(json.cause) } : {}),
  };
}

/** Characters of each message of a planner error's chain the run keeps (as a failed tool call's: 4,096). */
export const MAX_PLANNER_ERROR_CHARS = 4_096;

/** An error's chain with every message clipped to {@link MAX_PLANNER_ERROR_CHARS}. */
function clipped(error: ToolErrorJSON): ToolErrorJSON {
  const message =
    error.message.length > MAX_PLANNER_ERROR_CHARS
      ? `${error.message.slice(0, MAX_PLANNER_ERROR_CHARS)}…`
      : error.message;
  return {
    name: error.name,
    message,
    recoverable: error.recoverable,
    ...(error.cause ? { cause: clipped(error.cause) } : {}),
  };
}

/** `recordActorError`. */
export function recordActorErrorUpdate(context: RunContext, event: RunMachineEvent): Partial<RunContext> {
  const err = (event as { error?: unknown }).error;
  return withFlow(context, {
    error: runError(`Run step failed: ${err instanceof Error ? err.message : String(err)}`, 'RunStepError'),
  });
}

/** `requestToolConfirmation`. */
export function requestToolConfirmationUpdate(context: RunContext): Partial<RunContext> {
  const waiting = context.batch.pending.filter((call) => call.status === 'confirm');
  const toolCallIds = waiting.map((call) => call.toolCallId);
  const names = [...new Set(waiting.map((call) => call.name))].join(', ');
  // A policy's `confirm` (onToolBatch) says what the person is shown; the calls are always listed.
  const asked = context.flow.effects?.confirm;
  // One descriptor per held call (issue 35 item 3): what the approver decides on.
  const calls: ConfirmationCall[] = waiting.map((call) => ({
    toolCallId: call.toolCallId,
    tool: call.name,
    input: call.preparedInput,
    ...call.approval,
  }));
  return withFlow(context, {
    awaiting: {
      kind: 'confirmation',
      toolCallIds,
      calls,
      confirmation: {
        id: `${turnId(context)}:confirm`,
        prompt:
          asked?.prompt ??
          `Approve ${toolCallIds.length === 1 ? 'the call' : `${toolCallIds.length} calls`} to ${names}?`,
        details:
          asked === undefined || (asked.details === undefined && asked.error === undefined)
            ? calls
            : {
                calls,
                policy: asked.policy,
                ...(asked.details === undefined ? {} : { details: asked.details }),
                // The approver sees that the policy's own list was wrong (issue 35 item 5).
                ...(asked.error === undefined ? {} : { policyError: asked.error }),
              },
      },
    },
  });
}

/** `foldBatch`. */
export function foldBatchUpdate(context: RunContext): Partial<RunContext> {
  const { pending, results } = context.batch;
  if (pending.length === 0) return {};
  const folded = foldResults(
    context,
    results.map(
      (result, index) => result ?? notRunResult(pending[index]!, 'Not executed: the run stopped this batch'),
    ),
  );
  // What the approver did to the calls is told after the results (a message between a call and
  // its result would break providers' pairing): edits (the call ran with the approver's input, not
  // the planner's) and remembered approvals (recorded, or applied without asking).
  const notes = [editedNote(pending), rememberedNote(pending)].filter((note) => note !== undefined);
  if (notes.length === 0 || !folded.messages) return folded;
  return {
    ...folded,
    messages: [...folded.messages, ...notes.map((content) => ({ role: 'user' as const, content }))],
  };
}

function editedNote(pending: readonly PendingCall[]): string | undefined {
  const edited = pending.filter((call) => call.edited !== undefined);
  if (edited.length === 0) return undefined;
  const lines = edited.map(
    (call) =>
      `${call.name} (${call.providerToolCallId ?? call.toolCallId}) ran with ${JSON.stringify(call.preparedInput)} instead of ${JSON.stringify(call.edited!.original)}`,
  );
  const by = [...new Set(edited.map((call) => call.edited!.by).filter((who) => who !== undefined))];
  return `The approver${by.length > 0 ? ` (${by.join(', ')})` : ''} edited before approving: ${lines.join('; ')}.`;
}

/** The transcript's record of remembered approvals (docs/policies.md §Sticky approvals). */
function rememberedNote(pending: readonly PendingCall[]): string | undefined {
  const lines: string[] = [];
  for (const call of pending) {
    const remembered = call.remembered;
    if (remembered === undefined || call.status !== 'admitted') continue;
    const id = `${call.name} (${call.providerToolCallId ?? call.toolCallId})`;
    const who = remembered.by === undefined ? 'the approver' : remembered.by;
    const covers =
      remembered.scope === 'tool'
        ? `every later call of ${call.name}`
        : `later calls of ${call.name} with the same arguments`;
    lines.push(
      remembered.how === 'recorded'
        ? `${id} was approved by ${who}, who asked to remember it for ${covers}`
        : `${id} ran without asking: ${who} approved ${covers} earlier`,
    );
  }
  return lines.length === 0 ? undefined : `Approvals: ${lines.join('; ')}.`;
}

/** `recordClarificationAnswer`. */
export function recordClarificationAnswerUpdate(
  context: RunContext,
  event: RunMachineEvent,
): Partial<RunContext> {
  if (event.type !== 'provide.clarification') return {};
  return {
    messages: [...context.messages, { role: 'user' as const, content: event.answer }],
    ...withFlow(context, {
      answer: { ...context.flow.answer, clarification: { id: event.id, answer: event.answer } },
      awaiting: null,
    }),
  };
}

/** `recordPlannerConfirmation`. */
export function recordPlannerConfirmationUpdate(
  context: RunContext,
  event: RunMachineEvent,
): Partial<RunContext> {
  if (event.type !== 'confirm') return {};
  const { id, approved, by, reason } = event;
  return {
    messages: [
      ...context.messages,
      {
        role: 'user' as const,
        content: approved ? `Approved${by ? ` by ${by}` : ''}.` : `Denied${reason ? `: ${reason}` : ''}.`,
      },
    ],
    ...withFlow(context, {
      answer: { ...context.flow.answer, confirmation: { id, approved, by, reason } },
      awaiting: null,
    }),
  };
}

/** `enterPolicyClarification`. */
export function enterPolicyClarificationUpdate(context: RunContext): Partial<RunContext> {
  // Checked when the effects were applied (run-updates.ts).
  const clarification = context.flow.effects!.awaitClarification!;
  return {
    messages: [...context.messages, { role: 'assistant' as const, content: clarification.question }],
    batch: reviewedBatch(context.batch),
    ...withFlow(context, {
      awaiting: {
        kind: 'clarification',
        clarification: { ...clarification, missingFields: clarification.missingFields ?? [] },
      },
    }),
  };
}

/**
 * The batch as every way out of `routing` leaves it: reviewed (no `newResults`, no `newHints`),
 * so a later `resuming` never reviews it again. The policies' review clears them itself; a batch
 * not reviewed is cleared here, in the assign the way out makes anyway, instead of by an assign
 * of its own on the way in (each assign clones XState's snapshot: ~3 µs). The same batch when
 * there is nothing to clear.
 */
export function reviewedBatch(batch: BatchState): BatchState {
  return batch.newResults.length === 0 && batch.newHints.length === 0
    ? batch
    : batchWith(batch, { newResults: NO_CALLS, newHints: NO_CALLS });
}

/**
 * `startTurn`: the next planner turn, from `routing` or the end of a backoff. What `routing` read
 * (the policies' effects) and the wait that ended are cleared, and the batch counts as reviewed.
 */
export function startTurnUpdate(context: RunContext): Partial<RunContext> {
  const { flow } = context;
  return {
    turn: context.turn + 1,
    batch: reviewedBatch(context.batch),
    flow: flow.effects === null && flow.awaiting === null ? flow : { ...flow, effects: null, awaiting: null },
  };
}

/**
 * The calls of the batch to run (on entry to `executing`, and again after a restore): admitted
 * calls without a result that the run executes (not external ones), in the planner's order. The
 * `steps` actor runs them in a window of `MAX_PARALLEL_TOOL_CALLS` (run-steps.ts).
 */
export function callsToStart(
  batch: Pick<RunContext['batch'], 'pending' | 'results'>,
): { call: PendingCall; index: number }[] {
  // While calls wait for approval, only those marked to run ahead start (docs/policies.md §Mixed batches).
  const held = waitsForApproval(batch.pending);
  const start: { call: PendingCall; index: number }[] = [];
  for (let index = 0; index < batch.pending.length; index++) {
    if (batch.results[index] !== null) continue;
    const call = batch.pending[index]!;
    if (call.status !== 'admitted' || call.external || (held && !call.runAhead)) continue;
    start.push({ call, index });
  }
  return start;
}

/**
 * Whether some call of `pending` waits for approval (`status: 'confirm'`). A batch's `pending`
 * does not change while its calls run, so a large one is scanned once, not after each result.
 */
export function waitsForApproval(pending: readonly PendingCall[]): boolean {
  // A small batch is scanned: cheaper than the cache's look-up.
  if (pending.length <= 16) return pending.some((call) => call.status === 'confirm');
  let waits = approvalWaits.get(pending);
  if (waits === undefined) {
    waits = pending.some((call) => call.status === 'confirm');
    approvalWaits.set(pending, waits);
  }
  return waits;
}

const approvalWaits = new WeakMap<readonly PendingCall[], boolean>();

/**
 * Whether the batch's calls that ran ahead of its approval are done and the rest wait for it
 * (`executing` → `awaiting.confirmation`, docs/policies.md §Mixed batches): some call waits for
 * approval, and every call without a result waits for it or with it.
 */
export function awaitsApproval(batch: Pick<RunContext['batch'], 'pending' | 'results'>): boolean {
  // Read after every tool result: a batch where no call waits scanned what was left of it each time.
  if (!waitsForApproval(batch.pending)) return false;
  let held = false;
  for (let index = firstOpenResult(batch.results); index < batch.pending.length; index++) {
    if (batch.results[index] !== null) continue;
    const call = batch.pending[index]!;
    if (call.status === 'confirm') held = true;
    else if (call.status === 'admitted' && call.runAhead && !call.external) return false;
  }
  return held;
}

/**
 * Whether what is left of the batch is external calls only (tools without `execute`): every call
 * without a result is an admitted external one, and there is one. The run then awaits their
 * results (`awaiting.externalTools`).
 */
export function awaitsExternalCalls(batch: Pick<RunContext['batch'], 'pending' | 'results'>): boolean {
  let external = false;
  // Calls before the first open one all have results (the scan from 0 was O(calls²) a batch).
  for (let index = firstOpenResult(batch.results); index < batch.pending.length; index++) {
    if (batch.results[index] !== null) continue;
    const call = batch.pending[index]!;
    if (call.status !== 'admitted' || !call.external) return false;
    external = true;
  }
  return external;
}

/** `requestExternalCalls`: the admitted external calls, with their validated inputs, awaited. */
export function requestExternalCallsUpdate(context: RunContext): Partial<RunContext> {
  const calls = context.batch.pending
    .filter((call, index) => call.external && context.batch.results[index] === null)
    .map((call) => ({
      name: call.name,
      toolCallId: call.toolCallId,
      input: call.preparedInput ?? call.input,
    }));
  return withFlow(context, {
    awaiting: { kind: 'external_tools', externalTools: { id: `${turnId(context)}:external`, calls } },
  });
}
