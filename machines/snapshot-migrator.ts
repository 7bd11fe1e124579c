/**
 * The shape of a snapshot migrator (docs/durability.md §Upgrades), apart from the list of them in
 * snapshot-format.ts, so each migrator can name its type without importing the list that imports it.
 *
 * @module
 */

/** A persisted run snapshot as JSON: XState's members (`status`, `value`, `context`, ...) and ours. */
export type PersistedSnapshotJson = { [member: string]: unknown };

/** Moves a persisted snapshot from format `from` to `from + 1`. */
export interface SnapshotMigrator {
  /** The format this migrator reads; it writes `from + 1`. */
  readonly from: number;
  /** What changed between the two formats, in one line (shown in SnapshotMigrationError). */
  readonly change: string;
  /**
   * The snapshot in format `from + 1`. Pure: JSON in, new JSON out, the argument unchanged; no
   * clock, no randomness (a Temporal workflow migrates too, and must replay the same). Throws
   * (any error) when the snapshot cannot be moved on: the run is then restored as failed with a
   * SnapshotMigrationError that carries the error as its cause.
   */
  migrate(snapshot: PersistedSnapshotJson): PersistedSnapshotJson;
}
