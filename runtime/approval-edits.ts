import type { ApprovalEdit, PendingCall, RunContext } from '../machines/run-context.ts';
import { prepareToolCall } from '../tools/call-tool.ts';
import type { ParseLimits } from '../tools/parse-arguments.ts';
import type { RetryHint } from '../tools/retry-hint.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import { AnswerProblem } from './run-answers.ts';

export type { ApprovalEdit } from '../machines/run-context.ts';

/**
 * Thrown by `run.confirm({ …, edits })` when an edited input does not pass the tool boundary: the
 * run still waits for the same confirmation (nothing was sent), and `retryHint` says what to fix
 * (the person is asked again, as a planner would be).
 */
export class ApprovalEditRefusedError extends Error {
  override readonly name = 'ApprovalEditRefusedError';
  constructor(
    readonly runId: string,
    readonly toolCallId: string,
    readonly retryHint: RetryHint | undefined,
    message: string,
  ) {
    super(`Run ${runId}: ${message}`);
  }
}

/**
 * Checks the edits of an approval against the tool boundary (the same `prepareToolCall` a planner's
 * call goes through): each must name a call the confirmation holds, and its input must be valid;
 * an input that had own `__proto__`/`constructor`/`prototype` keys (`forbiddenKeys`, from
 * `checkedConfirmation`) is refused with `forbidden_key` issues, as a planner's is.
 *
 * @throws AnswerProblem (the handle's RunAnswerError) for an edit of a call not awaiting this
 *   approval, or with a denial;
 *   ApprovalEditRefusedError (with the hint) for an input the tool refuses.
 */
export function checkApprovalEdits(
  runId: string,
  context: RunContext,
  answer: { approved: boolean; edits?: Record<string, unknown>; forbiddenKeys?: Record<string, string[]> },
  catalog: ToolCatalog,
  limits?: ParseLimits,
): ApprovalEdit[] | undefined {
  const { edits } = answer;
  if (edits === undefined || Object.keys(edits).length === 0) return undefined;
  if (!answer.approved)
    throw new AnswerProblem('`edits` come with an approval (`approved: true`), not a denial');
  const awaiting = context.flow.awaiting;
  const held = new Set(awaiting?.kind === 'confirmation' ? (awaiting.toolCallIds ?? []) : []);
  const out: ApprovalEdit[] = [];
  for (const [toolCallId, input] of Object.entries(edits)) {
    const call: PendingCall | undefined = context.batch.pending.find((c) => c.toolCallId === toolCallId);
    if (!call || !held.has(toolCallId)) {
      throw new AnswerProblem(`\`edits\`: no call "${toolCallId.slice(0, 100)}" awaits this approval`);
    }
    const prepared = prepareToolCall(
      catalog,
      { name: call.name, toolCallId, input },
      { limits, forbiddenKeys: answer.forbiddenKeys?.[toolCallId] },
    );
    if (!prepared.ok) {
      const { result } = prepared;
      throw new ApprovalEditRefusedError(
        runId,
        toolCallId,
        result.retryHint,
        `The edited input of ${call.name} (${toolCallId}) was refused: ${result.error?.message ?? 'invalid'}`,
      );
    }
    out.push({
      toolCallId,
      input,
      preparedInput: prepared.input,
      ...(prepared.droppedFields.length > 0 ? { droppedFields: prepared.droppedFields } : {}),
    });
  }
  return out;
}
