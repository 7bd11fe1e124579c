/**
 * toolwarden's public API. See README.md and SPEC.md for the contract; each module's docstring
 * names the section it implements.
 */
export * from './machines/run-context.ts';
export {
  type RunActorRef,
  type RunMachine,
  type RunMachineEvent,
  runMachine,
} from './machines/run-machine.ts';
export * from './plugins/index.ts';
export * from './policies/index.ts';
export * from './run/caps.ts';
export * from './run/message.ts';
export * from './run/planner.ts';
export * from './run/run-events.ts';
export * from './runtime/agent-tool.ts';
export * from './runtime/create-runtime.ts';
export * from './runtime/durable/index.ts';
export * from './runtime/run-handle.ts';
export {
  memoryStore,
  type NewRun,
  type NewRunEvent,
  type PostgresStoreOptions,
  postgresStore,
  type ReadEventsOptions,
  type RunEventRecord,
  RunExistsError,
  RunLeasedError,
  type RunListFilter,
  type RunStore,
  RunStoreError,
  RunStoreUnavailableError,
  type RunUpdate,
  type SqliteStoreOptions,
  StaleRunVersionError,
  type StoredRun,
  sqliteStore,
} from './runtime/stores/index.ts';
export * from './tools/index.ts';
