/**
 * Snapshot format 1 → 2 (issue 34, docs/durability.md §Effects): calls in doubt and
 * `awaiting.inDoubt`.
 *
 * Format 2 restores a call that was started and not recorded finished as in doubt (its tool is
 * reconciled or the run waits in `awaiting.inDoubt`) unless its tool is declared `readOnly` or
 * `idempotent`. A format-1 run was stored under release 0.1.0's contract, "a call in flight at a
 * crash runs again with the same `toolCallId`; the tool dedupes by it": its calls in flight are
 * not in doubt by that contract, so this migrator marks each (`restoreAs: 'rerun'`) and the run
 * runs them again once, as 0.1.0 would have. No call of an old run is held in doubt that the old
 * release would have run; every call started after the upgrade gets the new guarantee.
 *
 * The new state and members (`awaiting.inDoubt`, `flow.callsStartedAt`, `ToolResult.inDoubt`)
 * are absent from format 1 and need nothing; the format's bump makes 0.1.0 refuse a format-2
 * snapshot (SnapshotFormatTooNewError) instead of misreading `awaiting.inDoubt`.
 *
 * @module
 */

import type { PersistedSnapshotJson, SnapshotMigrator } from '../snapshot-migrator.ts';

interface CallJson {
  status?: unknown;
  external?: unknown;
  [member: string]: unknown;
}

export const V1_TO_V2: SnapshotMigrator = {
  from: 1,
  change:
    'calls in doubt (awaiting.inDoubt): format-1 calls in flight are marked to run again, as 0.1.0 would',
  migrate(snapshot: PersistedSnapshotJson): PersistedSnapshotJson {
    const context = snapshot.context as { batch?: { pending?: CallJson[]; results?: unknown[] } } | undefined;
    const pending = context?.batch?.pending;
    const results = context?.batch?.results;
    if (!Array.isArray(pending) || !Array.isArray(results)) return { ...snapshot };
    let marked = false;
    const calls = pending.map((call, index) => {
      if (call?.status !== 'admitted' || call.external === true || results[index] != null) return call;
      marked = true;
      return { ...call, restoreAs: 'rerun' };
    });
    if (!marked) return { ...snapshot };
    return { ...snapshot, context: { ...context, batch: { ...context!.batch, pending: calls } } };
  },
};
