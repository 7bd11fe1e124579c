/**
 * The RunStore contract: where a run's persisted actor snapshot and its event log live between
 * steps, across process restarts, and across processes (SPEC §7, §1.1).
 *
 * A run is saved with a version number. Every write names the version it was computed from
 * (`expectedVersion`); the store accepts it only when that is still the current version, and then
 * advances the version by exactly 1. Two processes that both loaded version 1 can therefore never
 * both advance the run: the second gets {@link StaleRunVersionError} (optimistic concurrency).
 *
 * | operation     | succeeds with                               | fails with                                  |
 * |---------------|---------------------------------------------|---------------------------------------------|
 * | `create`      | the run at version 1                        | RunExistsError                              |
 * | `load`        | the run, or `undefined` when absent         |                                             |
 * | `save`        | the run at `expectedVersion + 1`            | StaleRunVersionError, RunNotFoundError      |
 * | `list`        | runs, most recently updated first           |                                             |
 * | `appendEvents`| nothing; events get seq `last + 1 ...`      | RunNotFoundError                            |
 * | `readEvents`  | events in seq order (`[]` for unknown runs) |                                             |
 * | `delete`      | `true` when the run existed (events go too) |                                             |
 * | any, database dead or store closed |                        | RunStoreUnavailableError                    |
 *
 * Invalid arguments (an empty run id, an unknown status, a non-integer version, an `undefined`
 * snapshot) throw `TypeError`/`RangeError` before the database is touched.
 *
 * Implementations: {@link memoryStore} (default, one process), {@link sqliteStore} (embedded,
 * durable), {@link postgresStore} (several processes or machines). All three pass the same
 * contract suite (`store-contract.ts`).
 *
 * @module
 */

/** A run's lifecycle status, as the run handle reports it (SPEC §4 `run.status`). */
export type RunStatus = 'running' | 'awaiting' | 'completed' | 'failed' | 'canceled';

/** Every {@link RunStatus}, in lifecycle order. */
export const RUN_STATUSES: readonly RunStatus[] = ['running', 'awaiting', 'completed', 'failed', 'canceled'];

/** One run as stored. Returned objects are copies: mutating them never changes the store. */
export interface StoredRun {
  runId: string;
  /** Groups runs of one conversation (ToolCallMeta.sessionId). Absent when the run has none. */
  sessionId?: string;
  agentId: string;
  status: RunStatus;
  /** 1 after `create`, +1 on each accepted `save`. Never reused, never skipped. */
  version: number;
  /**
   * The XState persisted snapshot (`actor.getPersistedSnapshot()`). Must be a JSON value: the
   * durable stores keep its JSON form, so `undefined` members, `Date`s, `Map`s and class
   * instances do not survive them (the memory store keeps structured-clone fidelity; do not rely
   * on it).
   */
  snapshot: unknown;
  /** Epoch milliseconds, from the store's clock at `create`. */
  createdAt: number;
  /** Epoch milliseconds, from the store's clock at the last `create`/`save`. */
  updatedAt: number;
  /** Run labels (SPEC §4 `labels`). Absent when never set. */
  labels?: Record<string, string>;
}

/** What `create` takes: a run without the fields the store assigns. */
export type NewRun = Omit<StoredRun, 'version' | 'createdAt' | 'updatedAt'>;

/** A `save`: the next snapshot, and the version it was computed from. */
export interface RunUpdate {
  /** The version the caller loaded (or last saved). The save fails unless it is still current. */
  expectedVersion: number;
  status: RunStatus;
  /** Replaces the stored snapshot. A JSON value (see {@link StoredRun.snapshot}). */
  snapshot: unknown;
  /** Replaces the stored labels when given; when omitted the stored labels are kept. */
  labels?: Record<string, string>;
}

/** Filter for `list`. Conditions combine with AND. */
export interface RunListFilter {
  /** One status, or any of several. An empty array matches nothing. */
  status?: RunStatus | RunStatus[];
  sessionId?: string;
  /** At most this many runs (a positive integer); all when omitted. */
  limit?: number;
}

/** One entry of a run's append-only event log. */
export interface RunEventRecord {
  runId: string;
  /** 1, 2, 3, ... per run, in append order, without gaps. */
  seq: number;
  /** A `RunEvent` (SPEC §4) in its JSON form. */
  event: unknown;
  /** Epoch milliseconds, as given to `appendEvents`. */
  at: number;
}

/** An event to append: the store assigns `runId` and `seq`. */
export interface NewRunEvent {
  event: unknown;
  /** Epoch milliseconds. */
  at: number;
}

/** Paging for `readEvents`. */
export interface ReadEventsOptions {
  /** Only events with `seq > afterSeq` (a non-negative integer); default 0, i.e. from the start. */
  afterSeq?: number;
  /** At most this many events (a positive integer); all when omitted. */
  limit?: number;
}

/**
 * Persistence for runs: versioned snapshots plus an append-only event log per run (SPEC §7).
 *
 * All methods are async and safe to call concurrently. After `close()` every method rejects
 * with {@link RunStoreUnavailableError}; `close()` itself is idempotent.
 *
 * When a write rejects with RunStoreUnavailableError the caller's state is untouched and still
 * the truth: keep it and retry later with the same `expectedVersion`. (If the connection died
 * after the database committed, that retry gets StaleRunVersionError with
 * `actualVersion === expectedVersion + 1`: load the run to see what landed.)
 */
export interface RunStore {
  /** Stores a new run at version 1. Throws {@link RunExistsError} when `runId` is taken. */
  create(run: NewRun): Promise<StoredRun>;
  /** The run, or `undefined` when there is none with this id. */
  load(runId: string): Promise<StoredRun | undefined>;
  /**
   * Replaces status, snapshot (and labels when given) if `update.expectedVersion` is the current
   * version, atomically advancing the version by 1. Throws {@link StaleRunVersionError} when
   * another writer got there first, {@link RunNotFoundError} when the run does not exist.
   */
  save(runId: string, update: RunUpdate): Promise<StoredRun>;
  /** Runs matching `filter`, most recently updated first (ties: most recently written first). */
  list(filter?: RunListFilter): Promise<StoredRun[]>;
  /**
   * Appends events to the run's log atomically (all or none), numbering them after the last
   * one. An empty list is a no-op. Throws {@link RunNotFoundError} when the run does not exist.
   */
  appendEvents(runId: string, events: NewRunEvent[]): Promise<void>;
  /** The run's events in `seq` order, after `afterSeq`; `[]` when the run has none or is unknown. */
  readEvents(runId: string, options?: ReadEventsOptions): Promise<RunEventRecord[]>;
  /** Deletes the run and its events. Resolves `false` when there was no such run. */
  delete(runId: string): Promise<boolean>;
  /** Releases connections the store opened (a pool passed in by the caller is left open). */
  close(): Promise<void>;
}
