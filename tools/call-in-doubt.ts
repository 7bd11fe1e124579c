/**
 * A call whose outcome is unknown (issue 34 item 3, docs/durability.md §Effects): it was started
 * (its record was stored, so its `execute` may have begun) and no end of it was recorded, because
 * its process died, its Temporal worker was lost, or the run was canceled while it ran.
 *
 * | the tool declares                  | the call, restored                                           |
 * |------------------------------------|--------------------------------------------------------------|
 * | `readOnly` or `idempotent`         | runs again under the same `idempotencyKey`                   |
 * | `reconcile` → `done`               | its output is recorded as the result; nothing runs           |
 * | `reconcile` → `not_done`           | runs again under the same key                                |
 * | `reconcile` → `unknown`, a throw, its timeout; or no `reconcile` | in doubt: the run waits in `awaiting.inDoubt` (`whenInDoubt: 'tell_model'`: an `outcome_unknown` hint to the planner instead) |
 *
 * Never a blind re-run of an effect that must happen once.
 *
 * @module
 */

import type { Tool } from './define-tool.ts';
import { ToolError } from './tool-error.ts';
import type { InDoubtCause, ToolResult } from './tool-result.ts';

/** Whether running `tool` again is safe by its declaration (`readOnly`, `idempotent`). */
export function rerunnable(tool: Pick<Tool, 'readOnly' | 'idempotent'>): boolean {
  return tool.readOnly === true || tool.idempotent === true;
}

/** What a restored call of a tool that is not {@link rerunnable} knows of its first start. */
export interface RestoredCall {
  cause: Exclude<InDoubtCause, 'canceled'>;
  /** When the call was started, epoch ms, when the run recorded it. */
  startedAt?: number;
}

const CAUSES: Record<InDoubtCause, string> = {
  restored: 'the process running it stopped before its end was recorded',
  retried: 'the Temporal worker running it was lost before its end was recorded',
  canceled: 'the run was canceled while it ran',
};

/**
 * The result of a call left in doubt: an error that says so, marked `inDoubt` (the run then
 * waits in `awaiting.inDoubt`), or, for a tool declared `whenInDoubt: 'tell_model'`, a settled
 * error with a RetryHint of reason `outcome_unknown` for the planner.
 */
export function inDoubtResult(
  tool: Pick<Tool, 'id' | 'whenInDoubt'>,
  call: Pick<ToolResult, 'name' | 'toolCallId'>,
  cause: InDoubtCause,
  startedAt: number | undefined,
): ToolResult {
  const when = startedAt === undefined ? '' : ` at ${new Date(startedAt).toISOString()}`;
  const message =
    `The outcome of ${tool.id} is unknown: the call was started${when} and ${CAUSES[cause]}; ` +
    'it was not run again';
  const base = { name: call.name, toolCallId: call.toolCallId, executed: true };
  if (tool.whenInDoubt === 'tell_model' && cause !== 'canceled') {
    return {
      ...base,
      error: new ToolError(message, { recoverable: true }),
      retryHint: {
        reason: 'outcome_unknown',
        tool: tool.id,
        restrictToTool: false,
        missingFields: [],
        message: `${message}. Find out whether it took effect before calling ${tool.id} again.`,
      },
    };
  }
  return {
    ...base,
    error: new ToolError(message, { recoverable: false }),
    inDoubt: { cause, ...(startedAt === undefined ? {} : { startedAt }) },
  };
}
