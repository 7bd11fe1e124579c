/**
 * Durable runs (docs/durability.md): what the runtime does with its `store` — persistence at every step
 * boundary, leases, eviction, restore — and the errors it reports.
 *
 * @module
 */

export type { PersistedSnapshotJson, SnapshotMigrator } from '../../machines/snapshot-format.ts';
export { RunConflictError, RunPersistenceError } from './durable-errors.ts';
export type { DurableOptions, RunEventsOptions } from './durable-runs.ts';
export type { RecoveredRuns, RecoverOptions } from './recover-runs.ts';
export type { PersistedWrite, PersistenceStatus } from './run-persister.ts';
export { packSnapshot, unpackSnapshot } from './snapshot-codec.ts';
export {
  type MigrateSnapshotOptions,
  migrateSnapshot,
  SNAPSHOT_FORMAT,
  SnapshotFormatTooNewError,
  SnapshotMigrationError,
} from './snapshot-migration.ts';
