import type { Message } from '../run/message.ts';

/** An earlier call of the run with the same key (`repeatKey`), newest first, as `onToolResult` gets it. */
export interface EarlierCall {
  toolCallId: string;
  /** Its result, when it gave one. */
  result?: unknown;
  /** Set instead when it failed or was refused (its error's message). */
  error?: string;
}

/** The call a result answers, as the planner proposed it: `onToolResult`'s third argument. */
export interface ProposedCall {
  name: string;
  input: unknown;
  /**
   * For a policy with a `repeatKey`: the run's earlier calls with the same key, newest first (at
   * most {@link MAX_EARLIER}), each with its result or error, read from the transcript.
   */
  earlier?: EarlierCall[];
}

type ToolCall = NonNullable<Extract<Message, { role: 'assistant' }>['toolCalls']>[number];
type KeyOf = (tool: string, input: unknown) => string;

/** Earlier same-key calls handed to a policy. */
export const MAX_EARLIER = 20;
/** Assistant messages looked back through for earlier calls (a long run's oldest calls are not compared). */
const LOOK_BACK = 200;

/**
 * Each transcript call's key, per key function: transcript messages are kept as they are from
 * step to step, so a call's key is computed once, not at every batch.
 */
const keys = new WeakMap<ToolCall, Map<KeyOf, string>>();

function keyOf(call: ToolCall, key: KeyOf): string {
  let byFn = keys.get(call);
  if (!byFn) {
    byFn = new Map();
    keys.set(call, byFn);
  }
  let value = byFn.get(key);
  if (value === undefined) {
    try {
      value = key(call.toolName, call.input);
    } catch {
      value = `\u0000${call.toolCallId}`;
    }
    byFn.set(key, value);
  }
  return value;
}

/**
 * The calls of the transcript's assistant messages, newest first, the message holding `from` and
 * everything after it left out when `from` is given.
 */
function* callsBefore(messages: readonly Message[], from: string | undefined): Generator<ToolCall> {
  let seen = 0;
  let found = from === undefined;
  for (let i = messages.length - 1; i >= 0 && seen < LOOK_BACK; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    seen++;
    if (!found) {
      found = message.toolCalls.some((call) => call.toolCallId === from);
      continue;
    }
    for (let j = message.toolCalls.length - 1; j >= 0; j--) yield message.toolCalls[j]!;
  }
}

/** The transcript call with this id, from the newest assistant message that holds it. */
export function findCall(messages: readonly Message[], toolCallId: string): ToolCall | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    const call = message.toolCalls.find((c) => c.toolCallId === toolCallId);
    if (call) return call;
  }
  return undefined;
}

/** Whether `call` repeats an earlier call of the transcript under `key` (same tool, same canonical input). */
export function repeatsEarlier(messages: readonly Message[], call: ToolCall, key: KeyOf): boolean {
  const mine = keyOf(call, key);
  for (const earlier of callsBefore(messages, call.toolCallId)) if (keyOf(earlier, key) === mine) return true;
  return false;
}

/** The earlier calls with `call`'s key, newest first, each with what its tool message holds. */
export function earlierCalls(messages: readonly Message[], call: ToolCall, key: KeyOf): EarlierCall[] {
  const mine = keyOf(call, key);
  const ids: string[] = [];
  for (const earlier of callsBefore(messages, call.toolCallId)) {
    if (keyOf(earlier, key) === mine) ids.push(earlier.toolCallId);
    if (ids.length >= MAX_EARLIER) break;
  }
  if (ids.length === 0) return [];
  const wanted = new Set(ids);
  const outcome = new Map<string, EarlierCall>();
  for (const message of messages) {
    if (message.role !== 'tool' || !wanted.has(message.toolCallId)) continue;
    outcome.set(message.toolCallId, earlierOf(message.toolCallId, message.content));
  }
  return ids.map((id) => outcome.get(id) ?? { toolCallId: id, error: 'no result' });
}

/** A tool message's content as a result or an error (`{ error, retryHint }`; a hinted result is `{ result, retryHint }`). */
function earlierOf(toolCallId: string, content: unknown): EarlierCall {
  if (content !== null && typeof content === 'object' && !Array.isArray(content)) {
    const record = content as Record<string, unknown>;
    const members = Object.keys(record);
    if ('error' in record && members.every((key) => key === 'error' || key === 'retryHint')) {
      const message = (record.error as { message?: unknown } | null)?.message;
      return { toolCallId, error: typeof message === 'string' ? message : 'error' };
    }
    if ('result' in record && 'retryHint' in record && members.length === 2) {
      return { toolCallId, result: record.result };
    }
  }
  return { toolCallId, result: content };
}
