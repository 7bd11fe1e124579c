/**
 * The in-memory RunStore: the runtime's default (docs/architecture.md `store`, "default in-memory"; §7).
 * Runs live as long as the store object; nothing survives the process.
 *
 * Values are deep-copied with `structuredClone` on the way in and on the way out, so neither the
 * caller's objects nor the objects a caller got back can change what is stored. A snapshot or
 * event that is an immutable copy (`immutable-copy.ts`: deep-frozen, as the run persister hands
 * them over) cannot change, so it is kept as it is, and `create`/`save` return it as it is:
 * copying a run's whole snapshot twice per step boundary was most of the default runtime's
 * cost per step (~195 µs of ~400 on `npm run bench`). Frozen labels (string values) are kept and
 * returned as they are too. Reads (`load`, `list`, `claim`,
 * `readEvents`) always return mutable copies. Writes are
 * synchronous inside each call, so concurrent calls on one store are atomic with respect to each
 * other: of two saves with the same `expectedVersion` exactly one wins.
 *
 * Finished runs (`completed`, `failed`, `canceled`) are kept up to a bound, so an app on defaults
 * stays flat however many runs it finishes (issue 24 item 7): at most `maxFinishedRuns` (default
 * 1,000), each for at most `finishedTtlMs` after it finished (default 1 h); past either bound the
 * run that finished first goes first, with its events. Runs still running or awaiting are never
 * forgotten. A handle the app kept still answers `result()` (the outcome is the handle's own).
 *
 * @module
 */

import { isImmutableCopy } from './immutable-copy.ts';
import { plainStore } from './plain-store.ts';
import type {
  NewRun,
  NewRunEvent,
  ReadEventsOptions,
  RunEventRecord,
  RunListFilter,
  RunStore,
  RunUpdate,
  StoredRun,
} from './run-store.ts';
import {
  RunExistsError,
  RunLeasedError,
  RunNotFoundError,
  RunStoreClosedError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from './run-store-errors.ts';
import {
  checkEvents,
  checkListFilter,
  checkNewRun,
  checkOwner,
  checkReadEventsOptions,
  checkRunId,
  checkRunUpdate,
  checkTtl,
  createdRun,
  FINISHED_STATUSES,
  ownLabels,
} from './run-store-input.ts';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** Clock for `createdAt`/`updatedAt`, epoch ms. Default `Date.now`. */
  now?: () => number;
  /**
   * At most this many finished runs (`completed`, `failed`, `canceled`) are kept; the one that
   * finished first is forgotten first. Default 1,000; `Infinity` keeps every one, 0 none.
   */
  maxFinishedRuns?: number;
  /**
   * A finished run is forgotten this long after it finished, ms (checked at each call to the
   * store). Default 3,600,000 (1 h); `Infinity` keeps them for ever.
   */
  finishedTtlMs?: number;
}

/** Default of {@link MemoryStoreOptions.maxFinishedRuns}. */
export const DEFAULT_MAX_FINISHED_RUNS = 1_000;
/** Default of {@link MemoryStoreOptions.finishedTtlMs}: one hour. */
export const DEFAULT_FINISHED_TTL_MS = 3_600_000;

interface Entry {
  run: StoredRun;
  /** Order of the last write across the store: breaks `updatedAt` ties in `list`. */
  touch: number;
  /**
   * The run's event log: the event of seq n at index n - 1, as kept (an immutable copy is the
   * writer's own object). Records are built by `readEvents`, not kept: an object per event, and
   * a boxed number for its `at`, were ~80 bytes of every event of every run (issue 29 item 3).
   */
  events: unknown[];
  /**
   * Each event's `at` at the same index (a plain number array: unboxed); absent while every `at`
   * is the event's own `at` member, as the runtime writes them (then nothing more is kept).
   */
  ats?: number[];
}

/** Creates an empty in-memory {@link RunStore}. */
export function memoryStore(options: MemoryStoreOptions = {}): RunStore {
  return plainStore(new MemoryRunStore(options));
}

/** The memory store: each operation a method on its maps, synchronous inside each call. */
class MemoryRunStore implements RunStore {
  readonly volatile = true;
  private readonly now: () => number;
  private readonly maxFinished: number;
  private readonly finishedTtl: number;
  private readonly entries = new Map<string, Entry>();
  /** Finished runs → when they finished, oldest first (insertion order). */
  private readonly finished = new Map<string, number>();
  /** Owner → epoch ms its lease is live until. */
  private readonly leases = new Map<string, number>();
  private touches = 0;
  private closed = false;

  constructor(options: MemoryStoreOptions) {
    this.now = options.now ?? Date.now;
    this.maxFinished = bound(options.maxFinishedRuns, DEFAULT_MAX_FINISHED_RUNS, 'maxFinishedRuns');
    this.finishedTtl = bound(options.finishedTtlMs, DEFAULT_FINISHED_TTL_MS, 'finishedTtlMs');
  }

  async create(run: NewRun): Promise<StoredRun> {
    checkNewRun(run);
    this.ensureOpen('create', run.runId);
    if (this.entries.has(run.runId)) throw new RunExistsError(run.runId);
    const at = this.now();
    const stored = createdRun(run, at, keep(run.snapshot));
    const given = run.events ?? [];
    // The first events' own array (exactly their size), not pushes into a new one.
    const entry: Entry = { run: stored, touch: ++this.touches, events: given.map(kept) };
    checkAts(entry, given);
    this.entries.set(run.runId, entry);
    this.finishedAt(run.runId, stored.status, at);
    return written(stored);
  }

  async load(runId: string): Promise<StoredRun | undefined> {
    checkRunId(runId);
    this.ensureOpen('load', runId);
    const entry = this.entries.get(runId);
    return entry === undefined ? undefined : structuredClone(entry.run);
  }

  async save(runId: string, update: RunUpdate): Promise<StoredRun> {
    checkRunId(runId);
    checkRunUpdate(update);
    this.ensureOpen('save', runId);
    const entry = this.entries.get(runId);
    if (entry === undefined) throw new RunNotFoundError(runId);
    if (entry.run.version !== update.expectedVersion) {
      throw new StaleRunVersionError(runId, update.expectedVersion, entry.run.version);
    }
    // Copy first: if the snapshot cannot be cloned, the stored run is left as it was.
    const snapshot = keep(update.snapshot);
    const given = update.events ?? [];
    const events = given.map(kept);
    // Object.assign and plain stores: a spread followed by members (~0.7 µs here on Node 20),
    // rest destructuring and spreads of optional members each cost more, at a save or two per
    // run step. The members keep the stored run's order.
    const run: StoredRun = Object.assign({}, entry.run);
    run.status = update.status;
    run.version = entry.run.version + 1;
    run.snapshot = snapshot;
    run.updatedAt = this.now();
    if (update.labels !== undefined) run.labels = ownLabels(update.labels);
    entry.run = run;
    append(entry, events, given);
    // A run that waits may stay for long: its log gives back the room it grew by (an array
    // grows by half again plus 16 slots; ~340 bytes after 10 steps, issue 29 item 3).
    if (run.status === 'awaiting' && events.length > 0) compact(entry);
    entry.touch = ++this.touches;
    if (!FINISHED_STATUSES.includes(run.status)) this.finished.delete(runId);
    this.finishedAt(runId, run.status, run.updatedAt);
    return written(entry.run);
  }

  async list(filter?: RunListFilter): Promise<StoredRun[]> {
    const { statuses, sessionId, limit } = checkListFilter(filter);
    this.ensureOpen('list');
    const matching = [...this.entries.values()].filter(
      ({ run }) =>
        (statuses === undefined || statuses.includes(run.status)) &&
        (sessionId === undefined || run.sessionId === sessionId),
    );
    matching.sort((a, b) => b.run.updatedAt - a.run.updatedAt || b.touch - a.touch);
    return matching.slice(0, limit).map(({ run }) => structuredClone(run));
  }

  async appendEvents(runId: string, events: NewRunEvent[]): Promise<void> {
    checkRunId(runId);
    checkEvents(events);
    this.ensureOpen('appendEvents', runId);
    const entry = this.entries.get(runId);
    if (entry === undefined) throw new RunNotFoundError(runId);
    append(entry, events.map(kept), events);
  }

  async readEvents(runId: string, options?: ReadEventsOptions): Promise<RunEventRecord[]> {
    checkRunId(runId);
    const { afterSeq, limit } = checkReadEventsOptions(options);
    this.ensureOpen('readEvents', runId);
    const entry = this.entries.get(runId);
    if (entry === undefined) return [];
    // seq n sits at index n - 1.
    const end = Math.min(entry.events.length, limit === undefined ? Infinity : afterSeq + limit);
    const page: RunEventRecord[] = [];
    for (let index = afterSeq; index < end; index++) {
      const event = entry.events[index];
      page.push({ runId, seq: index + 1, event, at: entry.ats?.[index] ?? ownAt(event)! });
    }
    return structuredClone(page);
  }

  async delete(runId: string): Promise<boolean> {
    checkRunId(runId);
    this.ensureOpen('delete', runId);
    this.finished.delete(runId);
    return this.entries.delete(runId);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    this.finished.clear();
    this.leases.clear();
  }

  async heartbeat(owner: string, ttlMs: number): Promise<void> {
    checkOwner(owner);
    checkTtl(ttlMs);
    this.ensureOpen('heartbeat');
    this.leases.set(owner, this.now() + ttlMs);
  }

  async claim(runId: string, owner: string): Promise<StoredRun> {
    checkRunId(runId);
    checkOwner(owner);
    this.ensureOpen('claim', runId);
    const entry = this.entries.get(runId);
    if (entry === undefined) throw new RunNotFoundError(runId);
    if (FINISHED_STATUSES.includes(entry.run.status)) return structuredClone(entry.run);
    const at = this.now();
    const holder = entry.run.owner;
    const leaseUntil = holder === undefined ? undefined : this.leases.get(holder);
    if (holder !== undefined && holder !== owner && leaseUntil !== undefined && leaseUntil > at) {
      throw new RunLeasedError(runId, holder, leaseUntil);
    }
    entry.run = { ...entry.run, owner, version: entry.run.version + 1, updatedAt: at };
    entry.touch = ++this.touches;
    return structuredClone(entry.run);
  }

  async release(runId: string, owner: string): Promise<boolean> {
    checkRunId(runId);
    checkOwner(owner);
    this.ensureOpen('release', runId);
    const entry = this.entries.get(runId);
    if (entry === undefined || entry.run.owner !== owner) return false;
    const { owner: _released, ...rest } = entry.run;
    entry.run = rest;
    return true;
  }

  /** Throws RunStoreUnavailableError once closed; else forgets the finished runs past the TTL. */
  private ensureOpen(operation: string, runId?: string): void {
    if (this.closed) {
      throw new RunStoreUnavailableError({
        store: 'memory run store',
        operation,
        ...(runId === undefined ? {} : { runId }),
        cause: new RunStoreClosedError(),
      });
    }
    this.expire();
  }

  /** Forgets finished runs past the TTL (the oldest are first in `finished`). */
  private expire(): void {
    if (this.finished.size === 0 || this.finishedTtl === Number.POSITIVE_INFINITY) return;
    const before = this.now() - this.finishedTtl;
    for (const [runId, at] of this.finished) {
      if (at > before) return;
      this.finished.delete(runId);
      this.entries.delete(runId);
    }
  }

  /** Records that `runId` was just written with `status`; forgets the oldest finished past the bound. */
  private finishedAt(runId: string, status: StoredRun['status'], at: number): void {
    if (!FINISHED_STATUSES.includes(status)) return;
    this.finished.delete(runId);
    this.finished.set(runId, at);
    while (this.finished.size > this.maxFinished) {
      const oldest = this.finished.keys().next().value!;
      this.finished.delete(oldest);
      this.entries.delete(oldest);
    }
  }
}

/** A bound ≥ 0 (`Infinity` allowed), or `fallback` when not given. */
function bound(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new RangeError(`memoryStore: ${name} must be a number ≥ 0 or Infinity, got ${String(value)}`);
  }
  return value;
}

/** A value to store: itself when it is an immutable copy, else a deep copy. */
function keep<T>(value: T): T {
  return isImmutableCopy(value) ? value : structuredClone(value);
}

/**
 * What `create` and `save` return: a copy of the stored run, whose snapshot is shared when it is
 * an immutable copy (the writer gave it so) and deep-copied otherwise.
 */
function written(run: StoredRun): StoredRun {
  const copy: StoredRun = Object.assign({}, run);
  if (!isImmutableCopy(run.snapshot)) copy.snapshot = structuredClone(run.snapshot);
  if (run.labels !== undefined) copy.labels = ownLabels(run.labels);
  return copy;
}

/**
 * An event as the store keeps it: itself when it is an immutable copy, or frozen and declared so
 * by its writer (`frozen`), else a deep copy.
 */
function kept({ event, frozen }: NewRunEvent): unknown {
  return frozen === true && Object.isFrozen(event) ? event : keep(event);
}

/** An event's own `at` member, when it has a number there. */
function ownAt(event: unknown): number | undefined {
  const at = typeof event === 'object' && event !== null ? (event as { at?: unknown }).at : undefined;
  return typeof at === 'number' ? at : undefined;
}

/** Keeps the `at`s of a new entry's events beside them when one is not its event's own. */
function checkAts(entry: Entry, given: NewRunEvent[]): void {
  for (let index = 0; index < given.length; index++) {
    if (!Object.is(ownAt(entry.events[index]), given[index]!.at)) {
      entry.ats = given.map(({ at }) => at);
      return;
    }
  }
}

/** The entry's lists at their exact length. */
function compact(entry: Entry): void {
  entry.events = entry.events.slice();
  if (entry.ats !== undefined) entry.ats = entry.ats.slice();
}

/** Appends events already kept (`events`, copied first: a failed copy leaves the log as it was). */
function append(entry: Entry, events: unknown[], given: NewRunEvent[]): void {
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    const { at } = given[index]!;
    // From the first `at` that is not the event's own on, every `at` is kept beside the events.
    if (entry.ats === undefined && !Object.is(ownAt(event), at))
      entry.ats = entry.events.map(ownAt) as number[];
    entry.events.push(event);
    entry.ats?.push(at);
  }
}
