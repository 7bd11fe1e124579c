/**
 * The run snapshot's format version and the migrators between versions (docs/durability.md
 * §Upgrades, issue 36 item 1): the contract that lets a release restore the runs an earlier
 * release stored.
 *
 * Every persisted run snapshot carries its format as the member `$toolwarden.format` (a positive
 * integer; {@link persistedSnapshotOf} writes it). A snapshot without it was stored by release
 * 0.1.0 or before: format 1. A release that changes what a snapshot holds — the run machine's
 * states, its context, the events a state waits for — adds one {@link SnapshotMigrator} to
 * {@link SNAPSHOT_MIGRATORS}, which moves the format up by one:
 *
 * | format | written by           | migrator to the next                 |
 * |--------|----------------------|--------------------------------------|
 * | 1      | 0.1.0 (no member)    | `V1_TO_V2`: calls in flight marked to run again (`restoreAs: 'rerun'`) |
 * | 2      | calls in doubt, `awaiting.inDoubt` (issue 34) | (none yet: 2 is current) |
 *
 * Adding a migrator (the whole procedure):
 * 1. `machines/snapshot-migrators/v<N>-to-v<N+1>.ts` exporting a `SnapshotMigrator` with
 *    `from: N`, `change` (one line: what changed) and `migrate(snapshot)`, a pure function over
 *    the persisted JSON: it returns a new object and never changes its argument (a memory store's
 *    snapshots are frozen).
 * 2. Append it to {@link SNAPSHOT_MIGRATORS}: {@link SNAPSHOT_FORMAT} becomes N+1 by itself.
 * 3. A test beside it migrating a format-N snapshot; test/release-fixtures.test.ts restores every
 *    release's fixtures through the whole chain.
 *
 * @module
 */

import type { PersistedSnapshotJson, SnapshotMigrator } from './snapshot-migrator.ts';
import { V1_TO_V2 } from './snapshot-migrators/v1-to-v2.ts';

/** The member of a persisted snapshot that holds its format version. */
export const SNAPSHOT_FORMAT_KEY = '$toolwarden.format';

export type { PersistedSnapshotJson, SnapshotMigrator } from './snapshot-migrator.ts';

/**
 * Every migrator, in format order: entry `i` reads format `i + 1` (checked when this module
 * loads). Empty while format 1 is current; a release that changes the format appends here.
 */
export const SNAPSHOT_MIGRATORS: readonly SnapshotMigrator[] = [V1_TO_V2];

for (const [index, migrator] of SNAPSHOT_MIGRATORS.entries()) {
  if (migrator.from !== index + 1) {
    throw new Error(
      `SNAPSHOT_MIGRATORS[${index}] reads format ${migrator.from}, not ${index + 1}: migrators go in format order`,
    );
  }
}

/** The format this release writes: 1 plus one per migrator. */
export const SNAPSHOT_FORMAT: number = SNAPSHOT_MIGRATORS.length + 1;

/**
 * A persisted snapshot's format: its `$toolwarden.format`, or 1 when it has none (stored by
 * release 0.1.0 or before). `NaN` when the member is there but not a positive integer.
 */
export function snapshotFormatOf(snapshot: unknown): number {
  if (typeof snapshot !== 'object' || snapshot === null) return 1;
  const format = (snapshot as PersistedSnapshotJson)[SNAPSHOT_FORMAT_KEY];
  if (format === undefined) return 1;
  return typeof format === 'number' && Number.isInteger(format) && format >= 1 ? format : Number.NaN;
}
