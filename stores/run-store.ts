/**
 * The RunStore contract: where a run's persisted actor snapshot and its event log live between
 * steps, across process restarts, and across processes (docs/durability.md, §1.1).
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
 * | `heartbeat`   | nothing; the owner's lease runs to now + ttl |                                            |
 * | `claim`       | the run, owned by the caller, version + 1 (a finished run: unchanged) | RunLeasedError, RunNotFoundError |
 * | `release`     | `true` when the caller owned the run        |                                             |
 * | any, database dead or store closed |                        | RunStoreUnavailableError                    |
 *
 * `create` and `save` take the events that led to the snapshot (`events`) and append them in
 * the same transaction: the log never holds events of a state the store does not have, and a
 * stale or failed write appends nothing.
 *
 * Ownership (leases): a process that hosts runs is an *owner* with a lease it renews
 * (`heartbeat`). It `claim`s a run before advancing it; a claim is refused while another owner
 * with a live lease holds the run, and it advances the version, so a process that lost its lease
 * (paused past its expiry, partitioned away) is fenced off: its next save is stale. A crashed
 * owner's runs can be claimed once its lease runs out. The runtime's owner string is one per
 * runtime instance (`<durable.owner>#<instance>`, runtime/durable/owner-lease.ts), so the store
 * never treats two live processes as one owner; to a store it is an opaque non-empty string.
 *
 * Invalid arguments (an empty run id, one with NUL or over `maxRunIdBytes`, an unknown status, a
 * non-integer version, an `undefined` snapshot) throw `TypeError`/`RangeError` before the database
 * is touched: retrying them can never succeed, so the runtime fails the run with them
 * (`RunValueError`) instead of retrying.
 *
 * Implementations: {@link memoryStore} (default, one process), {@link sqliteStore} (embedded,
 * durable), {@link postgresStore} (several processes or machines). All three pass the same
 * conformance suite (`test/store-contract/`, in the repository: not shipped).
 *
 * @module
 */

import type { RunAwaiting } from '../machines/run-awaiting.ts';

/** A run's lifecycle status, as the run handle reports it (docs/architecture.md `run.status`). */
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
  /** Run labels (docs/architecture.md `labels`). Absent when never set. */
  labels?: Record<string, string>;
  /** The owner that last claimed or created the run and has not released it. Absent when none. */
  owner?: string;
  /**
   * What the run waits for (`null`: nothing), so another process can answer it without reading
   * the snapshot. Filled by `runtime.list()` and `runtime.load()` from the snapshot; a store's own
   * `load`/`list` leave it out (it is derived, never stored separately).
   */
  awaiting?: RunAwaiting | null;
}

/** What `create` takes: a run without the fields the store assigns. */
export type NewRun = Omit<StoredRun, 'version' | 'createdAt' | 'updatedAt'> & {
  /** Events to start the run's log with (seq 1, 2, ...), written in the same transaction. */
  events?: NewRunEvent[];
};

/** A `save`: the next snapshot, and the version it was computed from. */
export interface RunUpdate {
  /** The version the caller loaded (or last saved). The save fails unless it is still current. */
  expectedVersion: number;
  status: RunStatus;
  /** Replaces the stored snapshot. A JSON value (see {@link StoredRun.snapshot}). */
  snapshot: unknown;
  /** Replaces the stored labels when given; when omitted the stored labels are kept. */
  labels?: Record<string, string>;
  /**
   * Events to append to the run's log in the same transaction as the save: appended only when
   * the save is accepted, numbered after the last one.
   */
  events?: NewRunEvent[];
}

/** Filter for `list`. Conditions combine with AND. */
export interface RunListFilter {
  /** One status, or any of several. An empty array matches nothing. */
  status?: RunStatus | RunStatus[];
  sessionId?: string;
  /** At most this many runs (a positive integer); all when omitted. */
  limit?: number;
}

/**
 * One entry of a run's append-only event log. `E` is `unknown` for a store (it keeps JSON);
 * `runtime.events()` gives `RunEventRecord<RunEvent>`.
 */
export interface RunEventRecord<E = unknown> {
  runId: string;
  /** 1, 2, 3, ... per run, in append order, without gaps. */
  seq: number;
  /** A `RunEvent` (docs/architecture.md) in its JSON form. */
  event: E;
  /** Epoch milliseconds, as given to `appendEvents`. */
  at: number;
}

/** An event to append: the store assigns `runId` and `seq`. */
export interface NewRunEvent {
  event: unknown;
  /** Epoch milliseconds. */
  at: number;
  /**
   * The writer vouches that `event` is deep-frozen and never changes: a store that keeps events
   * as objects may keep it as it is (the run persister sets it for a volatile store, whose events
   * it freezes in place). Stores that serialize ignore it.
   */
  frozen?: boolean;
}

/** Paging for `readEvents`. */
export interface ReadEventsOptions {
  /** Only events with `seq > afterSeq` (a non-negative integer); default 0, i.e. from the start. */
  afterSeq?: number;
  /** At most this many events (a positive integer); all when omitted. */
  limit?: number;
}

/**
 * Persistence for runs: versioned snapshots plus an append-only event log per run (docs/durability.md).
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
  /**
   * `true` when nothing the store holds survives the process (the memory store). The runtime
   * then does not hold tool calls back until their call is stored: there is no crash to protect.
   * It also hands such a store immutable snapshots and frozen events (`immutable-copy.ts`,
   * {@link NewRunEvent.frozen}), which it can keep without copying them.
   */
  readonly volatile?: boolean;
  /**
   * The longest run id (and session id) `create` takes, in UTF-8 bytes. Absent: 512
   * (`MAX_RUN_ID_BYTES`, what the built-in stores take). `runtime.start()` refuses a longer one
   * itself, so no run is started that its store can never save.
   */
  readonly maxRunIdBytes?: number;
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
  /**
   * Runs matching `filter`, most recently updated first (ties: most recently written first). The
   * SQLite store orders by write order alone (the same while its clock only moves forward;
   * docs/durability.md).
   */
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

  // Ownership (leases). The three built-in stores implement these; a store without them gives
  // optimistic versions only: two processes can then both resume a run, and the second one's
  // first save fails instead of its resume.

  /**
   * Creates or renews `owner`'s lease: it is live until the store's clock passes `now + ttlMs`.
   * `ttlMs` 0 ends it now (a clean shutdown), so others may claim its runs at once.
   */
  heartbeat?(owner: string, ttlMs: number): Promise<void>;
  /**
   * Takes an unfinished run for `owner` and advances its version by 1 (a fence: saves computed
   * from earlier versions become stale), returning it with its snapshot. Refused with
   * {@link RunLeasedError} while another owner whose lease is live holds it; an owner may always
   * claim its own runs again. A finished run (`completed`, `failed`, `canceled`) cannot advance,
   * so it is returned unchanged, whoever holds it. Throws {@link RunNotFoundError} for no run.
   */
  claim?(runId: string, owner: string): Promise<StoredRun>;
  /** Gives up `owner`'s hold on the run (version unchanged). `false` when it did not hold it. */
  release?(runId: string, owner: string): Promise<boolean>;
}
