/**
 * Writes one run to its {@link RunStore} (docs/durability.md): the snapshot at every step boundary, with the
 * events that led to it in the same write, in order, without blocking the actor.
 *
 * | call                 | does                                                                   |
 * |----------------------|------------------------------------------------------------------------|
 * | `event(e)`           | queues an event (written with the next snapshot); returns the store's copy |
 * | `snapshot(entry)`    | queues the snapshot of a step boundary and starts a write if none runs |
 * | `persisted()`        | resolves when everything queued before the call is in the store        |
 * | `caughtUp()`         | the same, waiting through failed attempts                              |
 * | `whenRecorded(id)`   | resolves when a snapshot holding tool call `id` is in the store        |
 * | `status`             | `saved` / `writing` / `failing` / `conflict` / `stopped`, version, error |
 *
 * Writes are serialized: the first creates the run (owned by this runtime), each later one saves
 * at the version the previous one returned. When snapshots queue up behind a write in flight,
 * the next write takes the newest of them and all their events (group commit): the store is never
 * more than one write behind, and no event is dropped.
 *
 * Failures:
 * - the store is down (or any error but the ones below): {@link RunPersistenceError} to
 *   `onError`, waiting `persisted()` calls reject with it, the write is retried after
 *   `retry.initialMs`, doubling up to `retry.maxMs`; the run keeps going in memory meanwhile.
 *   If a write failed after the database committed it, the retry finds the stored snapshot equal
 *   to the one it sent and carries on from there instead of calling it a conflict.
 * - another owner advanced or claimed the run (stale version), deleted it, or created a run with
 *   this id first: {@link RunConflictError}, once, to `onConflict` (the runtime stops the actor);
 *   nothing more is written.
 * - the store can never write it (a value JSON cannot carry, or arguments the store refuses:
 *   `isInvalidArgument`): {@link RunValueError}, once, to `onConflict`, never retried.
 *
 * @module
 */

import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import type { RunEvent } from '../../run/run-events.ts';
import { frozenInPlace, immutableAsIs } from '../../stores/immutable-copy.ts';
import type { NewRunEvent, RunStatus, RunStore, StoredRun } from '../../stores/run-store.ts';
import {
  RunExistsError,
  RunNotFoundError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from '../../stores/run-store-errors.ts';
import { scheduleWrite } from '../steps/turn-scheduler.ts';
import {
  isInvalidArgument,
  isValueError,
  RunConflictError,
  RunPersistenceError,
  RunValueError,
} from './durable-errors.ts';

/** One step boundary to write. */
export interface SnapshotEntry {
  status: RunStatus;
  /** The active state, dotted (`awaiting.clarification`). */
  state: string;
  /** `actor.getPersistedSnapshot()`, stored as it is (its children hold no copy of the context). */
  snapshot: unknown;
  labels: Record<string, string>;
  /** Tool call ids the snapshot holds (its pending batch). */
  toolCallIds: readonly string[];
}

/** Reported after each accepted write: what the store holds now and what it cost. */
export interface PersistedWrite {
  runId: string;
  /** The run's version in the store after the write. */
  version: number;
  status: RunStatus;
  state: string;
  /** Events appended with the snapshot. */
  events: number;
  /** Wall time of the store call (`create` or `save`), ms. */
  durationMs: number;
}

/** Where a run's writes stand (`run.storage`). */
export interface PersistenceStatus {
  /**
   * `saved`: the store holds everything emitted so far; `writing`: a write is queued or in flight;
   * `failing`: the last write failed and will be retried; `conflict`: another owner has the run;
   * `stopped`: this runtime no longer writes the run (evicted, closed).
   */
  state: 'saved' | 'writing' | 'failing' | 'conflict' | 'unstorable' | 'stopped';
  /** The run's version in the store as this runtime last wrote or claimed it. */
  version?: number;
  /** The last failure: a RunPersistenceError while failing, the RunConflictError after a conflict. */
  error?: Error;
}

export interface RunPersisterOptions {
  store: RunStore;
  runId: string;
  /** Fields `create` needs for a new run. */
  agentId: string;
  sessionId?: string;
  /** The version the run was claimed or loaded at; absent for a new run (the first write creates it). */
  version?: number;
  /** Who holds the run (the runtime's lease owner), set by `create`. */
  owner?: string;
  /** Awaited before each write: the owner's lease must exist before it holds runs. */
  ready?: () => Promise<void>;
  /** Whether `ready` would resolve at once (then a write need not wait for it). */
  isReady?: () => boolean;
  retry?: { initialMs?: number; maxMs?: number };
  /**
   * Keep the tool call ids of written snapshots for `whenRecorded` (default true). Off when no
   * tool call waits for its record (a volatile store): `whenRecorded` then resolves at once.
   */
  recordToolCalls?: boolean;
  onWrite?: (write: PersistedWrite) => void;
  onError: (error: RunPersistenceError) => void;
  /**
   * The run can never be saved by this process: another owner has it (RunConflictError) or it
   * holds a value the store cannot write (RunValueError). The runtime stops the actor.
   */
  onConflict: (error: RunConflictError | RunValueError) => void;
}

interface Waiter {
  target: number;
  resolve: () => void;
  reject: (error: Error) => void;
  /** Waits through failed attempts (rejected only by a conflict). */
  patient?: boolean;
}

/** A write whose outcome is unknown: the store failed while it may have committed it. */
interface Uncertain {
  expectedVersion: number | undefined;
  snapshot: unknown;
  events: number;
}

/** No events or waiters queued: one shared empty array, not one per run waiting (issue 29 item 3). */
const NONE = Object.freeze([]) as never[];

export class RunPersister {
  readonly runId: string;
  private version: number | undefined;
  private latest: SnapshotEntry | undefined;
  private events: NewRunEvent[] = NONE;
  /** Snapshots queued so far / the count at the last accepted write. */
  private queued = 0;
  private written = 0;
  private running = false;
  /** The owner lease was awaited once (`options.ready`): it stays in the store from then on. */
  private ready = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private failure: RunPersistenceError | undefined;
  /** The write can never succeed: another owner has the run, or it holds a value the store cannot write. */
  private conflict: RunConflictError | RunValueError | undefined;
  private stopped = false;
  private uncertain: Uncertain | undefined;
  private waiters: Waiter[] = NONE;
  /** Tool call ids of written snapshots (`whenRecorded`); absent when `recordToolCalls` is off. */
  private readonly recorded: Set<string> | undefined;
  /** `whenRecorded` calls waiting, by tool call id; created by the first. */
  private recordWaiters: Map<string, { resolve: () => void; reject: (error: Error) => void }[]> | undefined;
  /**
   * A volatile (in-memory) store is given immutable values, which it keeps without copying them
   * again (immutable-copy.ts): each event's copy, and each snapshot with its context shared, not
   * copied (the run's context is immutable by construction; docs/durability.md §Memory store).
   */
  private readonly copying: boolean;

  // The options' members, not the options object: it is made per run with spreads (~130 bytes
  // kept by every run waiting in memory, issue 29 item 3).
  private readonly store: RunStore;
  private readonly agentId: string;
  private readonly sessionId: string | undefined;
  private readonly owner: string | undefined;
  private readonly whenReady: RunPersisterOptions['ready'];
  private readonly isReady: RunPersisterOptions['isReady'];
  private readonly retry: RunPersisterOptions['retry'];
  private readonly onWrite: RunPersisterOptions['onWrite'];
  private readonly onError: RunPersisterOptions['onError'];
  private readonly onConflict: RunPersisterOptions['onConflict'];

  constructor(options: RunPersisterOptions) {
    this.runId = options.runId;
    this.version = options.version;
    this.store = options.store;
    this.agentId = options.agentId;
    this.sessionId = options.sessionId;
    this.owner = options.owner;
    this.whenReady = options.ready;
    this.isReady = options.isReady;
    this.retry = options.retry;
    this.onWrite = options.onWrite;
    this.onError = options.onError;
    this.onConflict = options.onConflict;
    this.copying = options.store.volatile === true;
    if (options.recordToolCalls !== false) this.recorded = new Set();
  }

  get status(): PersistenceStatus {
    const state = this.conflict
      ? this.conflict instanceof RunValueError
        ? 'unstorable'
        : 'conflict'
      : this.stopped
        ? 'stopped'
        : this.failure
          ? 'failing'
          : this.written < this.queued
            ? 'writing'
            : 'saved';
    const error = this.conflict ?? this.failure;
    return {
      state,
      ...(this.version === undefined ? {} : { version: this.version }),
      ...(error === undefined ? {} : { error }),
    };
  }

  /**
   * Queues an event: it is written with the next snapshot. Returns the event as the store will
   * keep it, which the run's handle replays too: for a volatile store `event` itself deep-frozen
   * in place (it holds the run's own objects) and written as `frozen`, otherwise `event` as it is.
   */
  event(event: RunEvent): RunEvent {
    const kept = this.copying ? storedEvent(event) : event;
    if (this.conflict || this.stopped) return kept;
    if (this.events === NONE) this.events = [];
    this.events.push(
      this.copying && Object.isFrozen(kept)
        ? { event: kept, at: kept.at, frozen: true }
        : { event: kept, at: kept.at },
    );
    return kept;
  }

  /** Queues a step boundary's snapshot and starts writing unless a write is running or waiting. */
  snapshot(entry: SnapshotEntry): void {
    if (this.conflict || this.stopped) return;
    this.latest = entry;
    this.queued += 1;
    this.kick();
  }

  /**
   * Resolves once every snapshot and event queued before the call is in the store.
   *
   * @throws RunPersistenceError when a write fails first (the runtime retries; call again to wait
   *   for the retry); RunConflictError when the run is lost to another owner.
   */
  persisted(): Promise<void> {
    if (this.conflict) return Promise.reject(this.conflict);
    if (this.written >= this.queued) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting().push({ target: this.queued, resolve, reject }));
  }

  /**
   * Like {@link persisted}, but waits through failed attempts until the writes land.
   *
   * @throws RunConflictError when the run is lost to another owner first.
   */
  caughtUp(): Promise<void> {
    if (this.conflict) return Promise.reject(this.conflict);
    if (this.written >= this.queued) return Promise.resolve();
    return new Promise((resolve, reject) =>
      this.waiting().push({ target: this.queued, resolve, reject, patient: true }),
    );
  }

  /**
   * Resolves once a snapshot holding tool call `toolCallId` is in the store, waiting through
   * failures and retries: a tool runs only after its call, with its id, is durable, so a crash
   * can never lead to the id being planned again for a different call.
   *
   * Resolves at once when `recordToolCalls` is off.
   *
   * @throws RunConflictError when the run is lost to another owner first.
   */
  whenRecorded(toolCallId: string): Promise<void> {
    if (this.recorded === undefined || this.recorded.has(toolCallId)) return Promise.resolve();
    if (this.conflict) return Promise.reject(this.conflict);
    return new Promise((resolve, reject) => {
      this.recordWaiters ??= new Map();
      const waiting = this.recordWaiters.get(toolCallId) ?? [];
      waiting.push({ resolve, reject });
      this.recordWaiters.set(toolCallId, waiting);
    });
  }

  /** Writes nothing more (the run was evicted or the runtime closed). Unwritten snapshots are dropped. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /**
   * Starts a write in the next macrotask, not now: the step boundaries a run passes within one
   * macrotask (a planner that answers at once, then validation, up to a tool waiting for its
   * call to be stored) become one write of the newest snapshot with all their events. A step
   * then costs one write, not one per state (issue 17: SQLite's client writes synchronously, and
   * two writes per step were most of a step's cost). A boundary reached before a slow await (a
   * model call, a tool) is still written while that await runs.
   */
  private kick(): void {
    if (this.running || this.retryTimer !== undefined || this.stopped || this.conflict) return;
    this.running = true;
    // From the turn scheduler's slices, not a setImmediate of its own: SQLite's client writes
    // synchronously, and 10,000 runs' writes queued as 10,000 setImmediates all ran in one pass of
    // the event loop (a 12.6 s stall, lease renewals starved: issue 12 defect 4).
    scheduleWrite(this.store, () => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.latest !== undefined && !this.stopped && !this.conflict) {
        const entry = this.latest;
        const events = this.events;
        const target = this.queued;
        this.latest = undefined;
        this.events = NONE;
        const ok = await this.write(entry, events);
        if (!ok) return;
        this.written = target;
        this.failures = 0;
        this.failure = undefined;
        if (this.recorded) for (const id of entry.toolCallIds) this.recorded.add(id);
        this.settle();
      }
    } finally {
      this.running = false;
    }
  }

  /** One write; `false` when it failed (retry scheduled, or conflict). */
  private async write(entry: SnapshotEntry, events: NewRunEvent[]): Promise<boolean> {
    const { store, runId } = this;
    let snapshot: unknown;
    let pending = events;
    let calling = false;
    try {
      // Inside the try: a value structuredClone cannot copy must not escape as an unhandled
      // rejection (issue 12 defect 1: it took the whole process down).
      snapshot = this.storedSnapshot(entry.snapshot);
      if (this.whenReady && !this.ready) {
        const waits = !(this.isReady?.() ?? false);
        await this.whenReady();
        this.ready = true;
        // Every run's first write waited for the same lease: resumed all at once, 10,000 runs'
        // writes ran back to back (an 800 ms stall per 3,000 runs). Back in the slices instead.
        if (waits) await new Promise<void>((resolve) => scheduleWrite(this.store, resolve));
      }
      if (this.uncertain !== undefined) {
        const landed = await this.resolveUncertain();
        if (landed !== undefined) {
          pending = pending.slice(landed.events);
          // The lost write was this very snapshot and nothing came after it: done.
          if (pending.length === 0 && isDeepStrictEqual(asJson(snapshot), asJson(landed.snapshot)))
            return true;
        }
      }
      const started = performance.now();
      calling = true;
      let stored: StoredRun;
      if (this.version === undefined) {
        stored = await store.create({
          runId,
          agentId: this.agentId,
          ...(this.sessionId === undefined ? {} : { sessionId: this.sessionId }),
          labels: entry.labels,
          status: entry.status,
          snapshot,
          ...(this.owner === undefined ? {} : { owner: this.owner }),
          events: pending,
        });
      } else {
        stored = await store.save(runId, {
          expectedVersion: this.version,
          status: entry.status,
          snapshot,
          labels: entry.labels,
          events: pending,
        });
      }
      const durationMs = performance.now() - started;
      this.version = stored.version;
      this.report({
        runId,
        version: stored.version,
        status: entry.status,
        state: entry.state,
        events: pending.length,
        durationMs,
      });
      return true;
    } catch (error) {
      if (isConflict(error)) {
        this.lose(error);
        return false;
      }
      if (isValueError(error) || isInvalidArgument(error)) {
        this.lose(new RunValueError(runId, { cause: error }));
        return false;
      }
      if (calling && error instanceof RunStoreUnavailableError) {
        this.uncertain = { expectedVersion: this.version, snapshot, events: pending.length };
      }
      // Put the work back: a newer snapshot queued meanwhile wins, the events keep their order.
      this.latest ??= entry;
      this.events = [...pending, ...this.events];
      this.fail(error);
      return false;
    }
  }

  /**
   * After a write failed with the store unavailable, finds out whether it reached the store
   * anyway (the connection died after the commit). Returns it when it did, and moves the version on.
   */
  private async resolveUncertain(): Promise<Uncertain | undefined> {
    const uncertain = this.uncertain!;
    const stored = await this.store.load(this.runId);
    this.uncertain = undefined;
    const landed =
      stored !== undefined &&
      stored.version === (uncertain.expectedVersion ?? 0) + 1 &&
      isDeepStrictEqual(asJson(stored.snapshot), asJson(uncertain.snapshot));
    if (!landed) return undefined;
    this.version = stored.version;
    return uncertain;
  }

  private fail(error: unknown): void {
    this.failures += 1;
    const retry = this.retry ?? {};
    const delay = Math.min((retry.initialMs ?? 100) * 2 ** (this.failures - 1), retry.maxMs ?? 5000);
    this.failure = new RunPersistenceError(this.runId, {
      cause: error,
      attempts: this.failures,
      retryInMs: delay,
    });
    const waiting = this.waiters.filter((waiter) => !waiter.patient);
    const patient = this.waiters.filter((waiter) => waiter.patient);
    this.waiters = patient.length > 0 ? patient : NONE;
    for (const waiter of waiting) waiter.reject(this.failure);
    this.onError(this.failure);
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, delay);
  }

  private lose(error: unknown): void {
    if (error instanceof RunValueError) {
      this.conflict = error;
      this.abandon();
      return;
    }
    const what =
      error instanceof StaleRunVersionError
        ? `another owner advanced or took this run (it is at version ${error.actualVersion}, this process had ${error.expectedVersion})`
        : error instanceof RunExistsError
          ? 'the store already holds a run with this id'
          : 'the run is no longer in the store (deleted)';
    this.conflict = new RunConflictError(
      this.runId,
      `${what}; this process stopped it (docs/durability.md: only one process advances a run)`,
      { cause: error },
    );
    this.abandon();
  }

  /** Gives up for good: no retry, every waiter rejected with the reason, the runtime told. */
  private abandon(): void {
    const reason = this.conflict!;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const waiting = this.waiters;
    this.waiters = NONE;
    for (const waiter of waiting) waiter.reject(reason);
    for (const waiters of this.recordWaiters?.values() ?? [])
      for (const waiter of waiters) waiter.reject(reason);
    this.recordWaiters = undefined;
    this.onConflict(reason);
  }

  /** The waiters' own array, made by the first. */
  private waiting(): Waiter[] {
    if (this.waiters === NONE) this.waiters = [];
    return this.waiters;
  }

  private settle(): void {
    if (this.waiters.length > 0) {
      const done = this.waiters.filter((waiter) => waiter.target <= this.written);
      const left = this.waiters.filter((waiter) => waiter.target > this.written);
      this.waiters = left.length > 0 ? left : NONE;
      for (const waiter of done) waiter.resolve();
    }
    const recordWaiters = this.recordWaiters;
    if (recordWaiters === undefined) return;
    for (const [id, waiters] of recordWaiters) {
      if (!this.recorded?.has(id)) continue;
      recordWaiters.delete(id);
      for (const waiter of waiters) waiter.resolve();
    }
  }

  /**
   * The snapshot the store is given: for a volatile store, the snapshot itself declared immutable
   * (its root frozen, nothing copied: a copy at every write was O(run) a step, and the bulk of a
   * waiting run's heap after its actor's: issue 29 items 1 and 3).
   */
  private storedSnapshot(snapshot: unknown): unknown {
    return this.copying ? immutableAsIs(snapshot) : snapshot;
  }

  private report(write: PersistedWrite): void {
    try {
      this.onWrite?.(write);
    } catch {
      // An observer's failure is not the store's.
    }
  }
}

/**
 * `event` made immutable for a volatile store, which keeps it as it is (a copy of each event cost
 * ~1 µs, 4.4 a step, and ~1 KB a run after 10 steps: issue 29); `event` itself when it holds a
 * value that cannot be copied (a function): the store's own copy then fails, in the write, and the
 * run is reported unstorable as before (RunValueError), rather than the emitting step throwing.
 */
function storedEvent(event: RunEvent): RunEvent {
  try {
    return frozenInPlace(event);
  } catch {
    return event;
  }
}

function isConflict(error: unknown): boolean {
  return (
    error instanceof StaleRunVersionError ||
    error instanceof RunExistsError ||
    error instanceof RunNotFoundError
  );
}

/** The JSON value the durable stores keep (drops `undefined` members). */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value) ?? 'null');
}
