/**
 * The run's retry hints as its context keeps them (`context.hints`, issue 36 item 7): a bounded
 * window of the most recent ones, never every hint of the run.
 *
 * Every failed call with a retry hint added one (~0.3–1 KB: the message, the failed input, the
 * field issues) for the run's whole life, and everything that carries the context carried all of
 * them: stored snapshots, each Temporal activity's input, each continue-as-new input (800 steps
 * with every second call refused: ~225 KB per planner turn's input, history past Temporal's
 * limits at ~2,700 failed calls). The window keeps the last {@link HINT_WINDOW} to
 * {@link MAX_HINTS} hints: once an append passes `MAX_HINTS`, the oldest go, down to
 * `HINT_WINDOW`. Trimming in steps, not one hint per append, keeps the list append-only between
 * trims, which the SQL stores write as appended rows (stores/snapshot-rows.ts).
 *
 * What the earlier hints said is summed up per tool in `context.toolStats` (calls, failures,
 * failures in a row, the last hint), which policies read as `ctx.tools`; every hint is in the
 * run's event log (`retry_hint` events) and, for the planner, in the transcript (each failed
 * call's tool message carries its hint).
 *
 * @module
 */

import type { PolicyRetryHint } from '../tools/retry-hint.ts';

/** Hints kept after a trim: the most recent ones. */
export const HINT_WINDOW = 32;
/** Most hints `context.hints` ever holds (`ctx.hints` for policies). */
export const MAX_HINTS = 64;

/** `kept` followed by `added`, trimmed to the newest {@link HINT_WINDOW} once past {@link MAX_HINTS}. */
export function appendHints(kept: PolicyRetryHint[], added: readonly PolicyRetryHint[]): PolicyRetryHint[] {
  if (added.length === 0) return kept;
  const total = kept.length + added.length;
  if (total <= MAX_HINTS) return [...kept, ...added];
  if (added.length >= HINT_WINDOW) return added.slice(added.length - HINT_WINDOW);
  return [...kept.slice(kept.length - (HINT_WINDOW - added.length)), ...added];
}
