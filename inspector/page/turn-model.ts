/**
 * The model's side of a run (issue 38 item 5), pure: per planner turn (`planner_turn`), what it
 * was sent, what it answered (text, tool calls, an await), its tokens and latency.
 */
import type { Message } from '../../run/message.ts';
import type { LogEntry } from '../inspection-store.ts';
import { turnNumber } from './event-data.ts';
import { costText, durationText } from './run-facts.ts';

/** A planner turn as the run's log records it. */
export interface PlannerTurn {
  turnId: string;
  kind: string;
  /** Transcript messages the planner was sent: `context.messages.slice(0, messages)`. */
  messages: number;
  result?: PlanAnswer;
  error?: { name?: string; message?: string; cause?: unknown };
  usage?: { inputTokens: number; outputTokens: number };
  /**
   * What the turn cost, when a cost policy reports it (`planner_turn.cost`, issue 35 item 2):
   * `amount` this turn, `spent` the run's so far, in `currency` units.
   */
  cost?: { currency: string; amount: number; spent?: number; limit?: number };
  durationMs?: number;
  replayedFrom?: string;
}

/** The planner's answer (a PlanResult's JSON), the fields shown. */
export interface PlanAnswer {
  toolCalls?: { name?: string; input?: unknown }[];
  finalResponse?: { text?: string };
  await?: Record<string, unknown>;
  notes?: string[];
}

/** The `planner_turn` entry's turn. */
export function plannerTurnOf(entry: LogEntry): PlannerTurn {
  return entry.data as PlannerTurn;
}

/** The turn's header: `turn 2 · 1.2 s · 340 in / 25 out tok · $0.0012` (what it reported). */
export function turnHeader(turn: PlannerTurn): string {
  const parts = [`turn ${turnNumber(turn.turnId)}`];
  if (turn.kind === 'finalize') parts.push('finalizing');
  if (turn.durationMs !== undefined) parts.push(durationText(turn.durationMs));
  if (turn.usage) parts.push(`${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tok`);
  if (turn.cost && typeof turn.cost.amount === 'number' && typeof turn.cost.currency === 'string') {
    parts.push(costText(turn.cost));
  }
  if (turn.replayedFrom) parts.push('replayed');
  if (turn.error) parts.push('failed');
  return parts.join(' · ');
}

/** Longest text of one message or value shown in a turn, characters. */
const SHOWN_CHARS = 600;
const clip = (text: string) => (text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text);
const json = (value: unknown) => clip(typeof value === 'string' ? value : JSON.stringify(value));

/** One line per message: `user: …`, `assistant → crm.lookup({…})`, `tool crm.lookup: {…}`. */
export function messageLines(messages: Message[]): string[] {
  return messages.map((message) => {
    if (message.role === 'assistant') {
      const calls = (message.toolCalls ?? []).map((call) => `${call.toolName}(${json(call.input)})`);
      const text = message.content ? clip(message.content) : '';
      return `assistant: ${[text, ...calls.map((call) => `→ ${call}`)].filter(Boolean).join(' ')}`;
    }
    if (message.role === 'tool') return `tool ${message.toolName}: ${json(message.content)}`;
    return `${message.role}: ${clip(message.content)}`;
  });
}

/** What the turn answered: its text, each tool call, an await, notes; or its error and causes. */
export function answerLines(turn: PlannerTurn): string[] {
  if (turn.error) {
    const lines = [`${turn.error.name ?? 'Error'}: ${turn.error.message ?? ''}`];
    let cause = turn.error.cause as { name?: string; message?: string; cause?: unknown } | undefined;
    for (let depth = 0; cause && depth < 5; depth++, cause = cause.cause as typeof cause) {
      lines.push(`caused by ${cause.name ?? 'Error'}: ${cause.message ?? ''}`);
    }
    return lines;
  }
  const answer = turn.result ?? {};
  const lines: string[] = [];
  if (answer.finalResponse?.text !== undefined) lines.push(`text: ${clip(answer.finalResponse.text)}`);
  for (const call of answer.toolCalls ?? []) lines.push(`→ ${call.name}(${json(call.input ?? {})})`);
  if (answer.await) lines.push(`awaits: ${json(answer.await)}`);
  for (const note of answer.notes ?? []) lines.push(`note: ${clip(note)}`);
  return lines;
}

/**
 * The messages a turn was sent that the turn before it had not been (the transcript grows; each
 * turn is sent all of it): `transcript.slice(from, turn.messages)`, `from` the previous turn's count.
 */
export function newMessages(transcript: Message[], from: number, turn: PlannerTurn): Message[] {
  return transcript.slice(Math.min(from, turn.messages), turn.messages);
}
