/**
 * Run stores: versioned persistence for run snapshots and event logs (docs/durability.md).
 *
 * @module
 */

export { type MemoryStoreOptions, memoryStore } from './memory-store.ts';
export { POSTGRES_SCHEMA_VERSION, type PostgresStoreOptions, postgresStore } from './postgres-store.ts';
export {
  type NewRun,
  type NewRunEvent,
  type ReadEventsOptions,
  RUN_STATUSES,
  type RunEventRecord,
  type RunListFilter,
  type RunStatus,
  type RunStore,
  type RunUpdate,
  type StoredRun,
} from './run-store.ts';
export {
  RunExistsError,
  RunLeasedError,
  RunNotFoundError,
  RunStoreClosedError,
  RunStoreError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from './run-store-errors.ts';
export { SQLITE_SCHEMA_VERSION, type SqliteStoreOptions, sqliteStore } from './sqlite-store.ts';
