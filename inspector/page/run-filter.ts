/**
 * The runs list's pure part: which runs a filter keeps, which of them wait above the list while
 * the pointer rests on it, and what the count and the `+N` button say.
 */
import type { RunSummary } from '../inspection-store.ts';

/** The list's filter as typed: a status (`''`: all) and free text (run id, agent, labels). */
export interface RunFilter {
  status: string;
  text: string;
}

/** The list as the server counts it: runs kept, runs the filter matches, the next page's cursor. */
export interface Listing {
  total: number;
  matched: number;
  next: string | null;
}

/** Whether a filter narrows the list at all. */
export function isFiltered(filter: RunFilter): boolean {
  return filter.status !== '' || filter.text.trim() !== '';
}

/** Whether `run` passes `filter` (its text, case-insensitive, in the run id, agent id or a `key=value` label). */
export function runMatches(run: RunSummary, filter: RunFilter): boolean {
  if (filter.status && run.status !== filter.status) return false;
  const text = filter.text.trim().toLowerCase();
  if (!text) return true;
  const labels = run.labels
    ? Object.entries(run.labels)
        .map(([key, value]) => `${key}=${value}`)
        .join(' ')
    : '';
  const session = run.sessionId ? ` session=${run.sessionId}` : '';
  return `${run.runId} ${run.agentId ?? ''}${session} ${labels}`.toLowerCase().includes(text);
}

/** The runs `filter` keeps, newest first. */
export function matchingRuns(runs: Iterable<RunSummary>, filter: RunFilter): RunSummary[] {
  return Array.from(runs)
    .filter((run) => runMatches(run, filter))
    .sort((a, b) => b.startedAt - a.startedAt);
}

/**
 * Where a hold begins: the newest start among the runs shown. Runs that start later wait above
 * the list until the pointer leaves it.
 */
export function holdMark(runs: Iterable<RunSummary>, filter: RunFilter): number {
  return Math.max(0, ...matchingRuns(runs, filter).map((run) => run.startedAt));
}

/** What the list draws: the runs shown, and how many newer ones wait (`+N`). */
export interface ListView {
  shown: RunSummary[];
  held: number;
}

/**
 * The runs the list draws while held at `holdAfter` (null: not held): those started after it wait,
 * but for the selected run.
 */
export function listView(
  matching: RunSummary[],
  holdAfter: number | null,
  selected: string | null,
): ListView {
  if (holdAfter === null) return { shown: matching, held: 0 };
  const waits = (run: RunSummary) => run.startedAt > holdAfter && run.key !== selected;
  const held = matching.filter(waits).length;
  return { shown: held ? matching.filter((run) => !waits(run)) : matching, held };
}

/** The count by the list's title: `(12)`, or `(3 of 12)` when filtered. */
export function countText(listing: Listing, filtered: boolean): string {
  return filtered ? `(${listing.matched} of ${listing.total})` : `(${listing.total})`;
}

/** The `+N` button's title (and accessible name). */
export function newerTitle(held: number): string {
  return `${held} newer run${held > 1 ? 's' : ''}, started while the pointer was on the list: show them`;
}

/** The text of the list when it draws no run. */
export function emptyText(listing: Listing): string {
  return listing.total === 0 ? 'No runs yet.' : 'No run matches.';
}
