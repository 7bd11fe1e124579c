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

/**
 * The transcript calls with these ids, each from the newest assistant message that holds it (as
 * {@link findCall}), found in one pass over the transcript: a batch's results looked up one by
 * one cost O(calls²) (a 10,000-call batch held the event loop ~8 s; issue 36 item 5).
 */
export function findCalls(
  messages: readonly Message[],
  toolCallIds: Iterable<string>,
): Map<string, ToolCall> {
  const wanted = new Set(toolCallIds);
  const found = new Map<string, ToolCall>();
  for (let i = messages.length - 1; i >= 0 && found.size < wanted.size; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    for (const call of message.toolCalls) {
      if (wanted.has(call.toolCallId) && !found.has(call.toolCallId)) found.set(call.toolCallId, call);
    }
  }
  return found;
}

/**
 * Whether any of these calls repeats an earlier call of the transcript under `key` (same tool,
 * same canonical input), in one pass: O(transcript's look-back + calls), not O(calls ×
 * look-back) as asked call by call. A call's holder is the newest assistant message holding its
 * id; the earlier calls are those of the assistant messages older than its holder, among the
 * newest {@link LOOK_BACK}. Nothing is indexed and no key computed while the look-back holds the
 * calls of one assistant message only (a run's first batch: nothing earlier to repeat).
 */
export function anyRepeatsEarlier(
  messages: readonly Message[],
  toolCallIds: Iterable<string>,
  key: KeyOf,
): boolean {
  if (!hasEarlierCalls(messages)) return false;
  const wanted = new Set(toolCallIds);
  if (wanted.size === 0) return false;
  // The look-back window, newest first, and which wanted calls each message holds (newest holder).
  const window: (ToolCall[] | undefined)[] = [];
  const assistants: (readonly ToolCall[])[] = [];
  const placed = new Set<string>();
  for (let i = messages.length - 1; i >= 0 && assistants.length < LOOK_BACK; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    let held: ToolCall[] | undefined;
    for (const call of message.toolCalls) {
      if (!wanted.has(call.toolCallId) || placed.has(call.toolCallId)) continue;
      placed.add(call.toolCallId);
      held ??= [];
      held.push(call);
    }
    assistants.push(message.toolCalls);
    window.push(held);
  }
  // Oldest to newest: each holder's calls against the keys of the messages before it.
  const earlier = new Set<string>();
  const newestHolder = window.findIndex((held) => held !== undefined);
  if (newestHolder === -1) return false;
  for (let w = window.length - 1; w >= newestHolder; w--) {
    const held = window[w];
    if (held !== undefined && earlier.size > 0) {
      for (const call of held) if (earlier.has(keyOf(call, key))) return true;
    }
    if (w === newestHolder) break;
    for (const call of assistants[w]!) earlier.add(keyOf(call, key));
  }
  return false;
}

/** Whether the look-back holds calls of more than one assistant message (else none can repeat another's). */
function hasEarlierCalls(messages: readonly Message[]): boolean {
  let seen = 0;
  let withCalls = 0;
  for (let i = messages.length - 1; i >= 0 && seen < LOOK_BACK; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    seen++;
    if (message.toolCalls.length > 0 && ++withCalls > 1) return true;
  }
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
