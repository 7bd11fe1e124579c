/**
 * What the page holds: the summaries of the runs loaded (the hello's page and the pages after
 * it), and the context and log of the one run open (fetched when it is opened, then kept live by
 * the stream). One object, shared by the page's modules.
 */
import type { LogEntry, RunFrame, RunSummary } from '../inspection-store.ts';
import type { Listing } from './run-filter.ts';

/** The opened run's log while it is on its way: stream messages for it wait here, then merge by seq. */
export interface Opening {
  key: string;
  buffered: LogEntry[];
  context?: unknown;
}

/** Looking at the past: the log entry chosen and the run as it was then (`/api/runs/:key/frame`). */
export interface Travel {
  seq: number;
  /** The entry's number in its run's log (LogEntry.n). */
  n: number;
  frame: RunFrame;
}

export const state = {
  runs: new Map<string, RunSummary>(),
  /** The open run's log entries loaded here, oldest first. */
  logs: new Map<string, LogEntry[]>(),
  listing: { total: 0, matched: 0, next: null } as Listing,
  openContext: null as unknown,
  opening: null as Opening | null,
  /** The `hello`'s stream id: opening a run with it subscribes this stream to its log. */
  streamId: null as string | null,
  selected: null as string | null,
  travel: null as Travel | null,
  /** Runs picked in the list to compare (keys, at most two). */
  picked: [] as string[],
  /** Entries the server keeps before the ones loaded here (the open run's). */
  logEarlier: 0,
};

/** The newest run loaded. */
export function newestRun(): RunSummary | undefined {
  let newest: RunSummary | undefined;
  for (const run of state.runs.values()) if (!newest || run.startedAt > newest.startedAt) newest = run;
  return newest;
}

/** The run open, if any. */
export function selectedRun(): RunSummary | undefined {
  return state.selected ? state.runs.get(state.selected) : undefined;
}

/** The open run's log entries loaded here. */
export function selectedLog(): LogEntry[] {
  return state.selected ? (state.logs.get(state.selected) ?? []) : [];
}
