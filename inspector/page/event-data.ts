import type { LogEntry } from '../inspection-store.ts';
import type { InDoubtCallData } from './in-doubt-form.ts';

/** A tool call's result as a run's log carries it (`tool_result`), the fields the page reads. */
export interface ToolResultData {
  toolCallId: string;
  name?: string;
  error?: { message?: string; name?: string } | null;
  retryHint?: { reason?: string; message?: string } | null;
  [field: string]: unknown;
}

/** A clarification a run waits for (`await_clarification`). */
export interface ClarificationData {
  id?: string;
  question?: string;
  missingFields?: string[];
  exampleInput?: unknown;
}

/** A confirmation a run waits for (`await_confirmation`). */
export interface ConfirmationData {
  id?: string;
  prompt?: string;
  details?: unknown;
  toolCallIds?: string[];
}

/**
 * The payload of a log entry, the fields the page reads of each event type (run/run-events.ts has
 * the events; the log carries them sanitized, so every field is optional here).
 */
export interface EventData {
  previous?: string;
  state?: string;
  agentId?: string;
  clarification?: ClarificationData;
  confirmation?: ConfirmationData;
  externalTools?: { calls?: { toolCallId: string; [field: string]: unknown }[] };
  inDoubt?: { calls?: InDoubtCallData[] };
  tool?: string;
  toolCallId?: string;
  turnId?: string;
  attempt?: number;
  edited?: { by?: string } | null;
  result?: ToolResultData;
  hint?: { reason?: string; tool?: string };
  decision?: { policy?: string; kinds?: string[] };
  note?: string;
  finalResponse?: { text?: string };
  error?: { message?: string };
  reason?: string;
  runId?: string;
  childRunId?: string;
  parentRunId?: string;
  atEvent?: number;
}

/** A log entry's payload, `{}` when it has none. */
export function dataOf(entry: LogEntry): EventData {
  return (entry.data ?? {}) as EventData;
}

/** The turn number of a turn id (`run-1:t3` → `3`). */
export function turnNumber(turnId: string): string {
  return turnId.replace(/^.*:t/, '');
}
