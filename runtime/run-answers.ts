import { MAX_TOOL_RESULT_BYTES } from '../tools/call-tool.ts';
import { toJsonValue } from '../tools/parse-arguments.ts';
import { clipText } from '../tools/preview-value.ts';

/**
 * The answers an app gives a waiting run, checked where they enter (issue 24 item 8: answers were
 * not checked like planner values; a `by` that was a function left the store at `awaiting` v1
 * while the run said completed, `type: 'cancel'` in a confirmation canceled the run, 50–200 MB
 * answers were kept). Each answer is read once, field by field, into a fresh plain value: nothing
 * else of the object the app passed reaches the run.
 *
 * | answer                 | field                    | accepted                                   | otherwise |
 * |------------------------|--------------------------|--------------------------------------------|-----------|
 * | clarification          | `id`                     | a string                                    | refused   |
 * |                        | `answer`                 | a non-empty string of at most {@link MAX_ANSWER_CHARS} characters | refused |
 * | confirmation           | `id`                     | a string                                    | refused   |
 * |                        | `approved`               | a boolean                                   | refused   |
 * |                        | `by`                     | absent, or a string of at most {@link MAX_ANSWER_BY_CHARS} | refused |
 * |                        | `reason`                 | absent, or a string of at most {@link MAX_ANSWER_CHARS} | refused |
 * |                        | `remember`               | absent, `'tool'` or `'arguments'`; only with `approved: true` | refused |
 * | external tool result   | `toolCallId`             | a string                                    | refused   |
 * |                        | `result`                 | JSON of at most 16 MiB (`MAX_TOOL_RESULT_BYTES`) | refused |
 * |                        | `error.message`          | a string; clipped to {@link MAX_ERROR_MESSAGE_CHARS} | refused if not a string |
 * |                        | `error.recoverable`      | absent or a boolean                         | refused   |
 *
 * A refusal is an {@link AnswerProblem} naming the field; the handle turns it into a
 * `RunAnswerError` before anything is sent, so the run and its store stay as they were.
 */
export class AnswerProblem extends Error {
  override readonly name = 'AnswerProblem';
}

/** Longest clarification answer or confirmation reason, in characters (UTF-16 units). */
export const MAX_ANSWER_CHARS = 65_536;
/** Longest `by` (who answered) of a confirmation, in characters. */
export const MAX_ANSWER_BY_CHARS = 256;
/** Characters kept of an external tool's error message; the rest is cut (`…(N characters)`). */
export const MAX_ERROR_MESSAGE_CHARS = 4_096;

/** A clarification answer as the run keeps it. @throws AnswerProblem */
export function checkedClarification(answer: unknown): { id: string; answer: string } {
  const fields = readFields(answer, 'A clarification answer', ['id', 'answer']);
  const id = requiredString(fields.id, '`id`');
  if (typeof fields.answer !== 'string' || fields.answer.length === 0) {
    throw new AnswerProblem('a clarification answer must be a non-empty string');
  }
  return { id, answer: bounded(fields.answer, '`answer`', MAX_ANSWER_CHARS) };
}

/** A confirmation answer as the run keeps it. @throws AnswerProblem */
export function checkedConfirmation(answer: unknown): {
  id: string;
  approved: boolean;
  by?: string;
  reason?: string;
  edits?: Record<string, unknown>;
  /** Remember the approval for later calls (docs/policies.md §Sticky approvals). */
  remember?: 'tool' | 'arguments';
  /** toolCallId → the `__proto__`/`constructor`/`prototype` keys its edit had (left out of the copy): the tool boundary refuses them. */
  forbiddenKeys?: Record<string, string[]>;
} {
  const fields = readFields(answer, 'A confirmation answer', [
    'id',
    'approved',
    'by',
    'reason',
    'edits',
    'remember',
  ]);
  const id = requiredString(fields.id, '`id`');
  if (typeof fields.approved !== 'boolean') throw new AnswerProblem('`approved` must be a boolean');
  const remember = fields.remember;
  if (remember !== undefined && remember !== 'tool' && remember !== 'arguments')
    throw new AnswerProblem("`remember` must be 'tool' or 'arguments' when given");
  if (remember !== undefined && !fields.approved)
    throw new AnswerProblem('`remember` comes with an approval (`approved: true`), not a denial');
  const by = optionalString(fields.by, '`by`', MAX_ANSWER_BY_CHARS);
  const reason = optionalString(fields.reason, '`reason`', MAX_ANSWER_CHARS);
  const edits = checkedEdits(fields.edits);
  return {
    id,
    approved: fields.approved,
    ...(by === undefined ? {} : { by }),
    ...(reason === undefined ? {} : { reason }),
    ...(edits === undefined ? {} : { edits: edits.values }),
    ...(remember === undefined ? {} : { remember }),
    ...(edits?.forbiddenKeys === undefined ? {} : { forbiddenKeys: edits.forbiddenKeys }),
  };
}

/**
 * A confirmation's `edits` (safety, issue 24 item 4: approve with edits): absent, or an object of
 * toolCallId → the edited input, each JSON of at most 16 MiB, copied. Whether the input is valid
 * is the tool boundary's business (runtime/approval-edits.ts); the copy leaves out own
 * `__proto__`/`constructor`/`prototype` keys, so their paths are handed on for the boundary to
 * refuse, as it refuses them in a planner's input (issue 35 item 5: they were dropped silently
 * and the call ran). @throws AnswerProblem
 */
function checkedEdits(
  value: unknown,
): { values: Record<string, unknown>; forbiddenKeys?: Record<string, string[]> } | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AnswerProblem('`edits` must be an object of toolCallId → edited input');
  }
  const values: Record<string, unknown> = {};
  let forbiddenKeys: Record<string, string[]> | undefined;
  for (const id of Object.keys(value).slice(0, 1_000)) {
    const json = toJsonValue((value as Record<string, unknown>)[id], {
      subject: `\`edits.${clipText(id, 100)}\``,
      maxBytes: MAX_TOOL_RESULT_BYTES,
    });
    if (!json.ok) throw new AnswerProblem(json.message);
    values[id] = json.value;
    if (json.forbiddenKeys.length > 0) {
      forbiddenKeys ??= {};
      forbiddenKeys[id] = json.forbiddenKeys;
    }
  }
  return forbiddenKeys === undefined ? { values } : { values, forbiddenKeys };
}

/** One provided result of an external tool call, as the run keeps it. */
export type CheckedToolResult =
  | { toolCallId: string; result: unknown }
  | { toolCallId: string; error: { message: string; recoverable: boolean } };

/**
 * The results an app provides for external tool calls, each checked; which ids are expected is
 * the handle's business. @throws AnswerProblem
 */
export function checkedToolResults(results: unknown): CheckedToolResult[] {
  if (!Array.isArray(results)) throw new AnswerProblem('tool results must be an array');
  const out: CheckedToolResult[] = [];
  for (let index = 0; index < results.length; index++) {
    const fields = readFields(results[index], `Tool result ${index}`, ['toolCallId', 'result', 'error']);
    const toolCallId = requiredString(fields.toolCallId, `tool result ${index}: \`toolCallId\``);
    const where = `the result for toolCallId "${clipText(toolCallId, 100)}"`;
    if (fields.error !== undefined && fields.error !== null) {
      const error = readFields(fields.error, `The error of ${where}`, ['message', 'recoverable']);
      if (typeof error.message !== 'string') {
        throw new AnswerProblem(`${where}: \`error.message\` must be a string`);
      }
      if (error.recoverable !== undefined && typeof error.recoverable !== 'boolean') {
        throw new AnswerProblem(`${where}: \`error.recoverable\` must be a boolean`);
      }
      out.push({
        toolCallId,
        error: { message: clipMessage(error.message), recoverable: error.recoverable ?? false },
      });
      continue;
    }
    // Refused here, where the value enters: a store could never write it (issue 12, defect 3).
    const json = toJsonValue(fields.result, { subject: 'Tool result', maxBytes: MAX_TOOL_RESULT_BYTES });
    if (!json.ok) throw new AnswerProblem(`${where} is not JSON: ${json.message}`);
    out.push({ toolCallId, result: json.value });
  }
  return out;
}

/**
 * The named fields of an answer object, each read once (a getter answers once, a Proxy's traps
 * run once per field). @throws AnswerProblem for a non-object or a field whose read throws.
 */
function readFields<K extends string>(
  value: unknown,
  subject: string,
  names: readonly K[],
): Record<K, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AnswerProblem(`${subject} must be an object`);
  }
  const fields = {} as Record<K, unknown>;
  for (const name of names) {
    try {
      fields[name] = (value as Record<string, unknown>)[name];
    } catch (err) {
      throw new AnswerProblem(`${subject}: \`${name}\` could not be read (${describe(err)})`);
    }
  }
  return fields;
}

function requiredString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new AnswerProblem(`${field} must be a string`);
  return value;
}

function optionalString(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new AnswerProblem(`${field} must be a string when given`);
  return bounded(value, field, max);
}

function bounded(value: string, field: string, max: number): string {
  if (value.length > max) {
    throw new AnswerProblem(`${field} is ${value.length} characters; the limit is ${max}`);
  }
  return value;
}

function clipMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…(${message.length} characters)`;
}

function describe(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return 'unreadable error';
  }
}
