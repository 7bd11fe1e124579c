/**
 * The approve-with-edits form's pure part (issue 24 item 4): which inputs were edited, whether
 * they are JSON, and what a refused edit's hint says by its call.
 */

/** One call's editable input: what the box holds now and what it was prefilled with. */
export interface EditField {
  toolCallId: string;
  value: string;
  original: string;
}

/** The edits to send (toolCallId → input, only the changed ones), or the first box that is not JSON. */
export type EditsRead =
  | { ok: true; edits: Record<string, unknown> }
  | { ok: false; toolCallId: string; problem: string };

/** Reads the edited inputs of `fields`. */
export function readEdits(fields: EditField[]): EditsRead {
  const edits: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.value === field.original) continue;
    try {
      edits[field.toolCallId] = JSON.parse(field.value);
    } catch (problem) {
      return { ok: false, toolCallId: field.toolCallId, problem: `not JSON: ${(problem as Error).message}` };
    }
  }
  return { ok: true, edits };
}

/** The body of a 422 answer to an edit (inspector-server.ts): the call refused and its hint. */
export interface RefusedEdit {
  error?: string;
  toolCallId?: string;
  retryHint?: { message?: string; issues?: { path?: string; message: string }[] } | null;
}

/**
 * What a refused edit's box shows: the hint's message, then a line per field issue it does not
 * already say (the tool boundary's message names its issues: `… failed for payments.refund:
 * amountEur: Invalid input …`, which the box showed twice, issue 38).
 */
export function refusedEditText(refused: RefusedEdit): string {
  const hint = refused.retryHint;
  const message = (hint ? hint.message : refused.error) ?? '';
  const issues = (hint?.issues ?? [])
    .map((issue) => `${issue.path || '(input)'}: ${issue.message}`)
    .filter((line) => !message.includes(line));
  return [message, ...issues].join('\n');
}
