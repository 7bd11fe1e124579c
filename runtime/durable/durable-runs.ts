/**
 * Durable runs (docs/durability.md, issue 7): what `createRuntime` does with its `store` beyond starting
 * actors. One object per runtime; `create-runtime.ts` calls it at these points:
 *
 * | runtime moment                     | call                  | does                                                    |
 * |------------------------------------|-----------------------|---------------------------------------------------------|
 * | a run is started or restored       | `track(handle, ...)`  | a {@link RunPersister} for it, attached to the handle    |
 * | every observed snapshot            | `observed(handle, s)` | (re)arms the eviction timer of a run waiting for an answer |
 * | `runtime.resume(runId)`            | `restore(runId, fn)`  | claims the run for this owner (one restore at a time per run) |
 * | a tool call is about to execute    | `toolGate` plugin     | waits until the call's id is in the store (write-ahead; not for a volatile store) |
 * | `runtime.flush()` / `close()`      | `flush()` / `close()` | waits for writes; stops, releases and ends the lease     |
 * | `runtime.events(runId)`            | `events(...)`         | the stored event log, then each new write as it lands    |
 *
 * Its parts, each a module beside this one: the options (durable-options.ts), this owner's lease
 * (owner-lease.ts), one {@link RunPersister} per run (run-persister.ts), the write-ahead gate
 * (durable-tool-gate.ts), hibernation (run-hibernation.ts: a run waiting for an answer for
 * `hibernateAfterMs` leaves memory; an answer by id or through a kept handle restores it), the
 * event feed (run-event-feed.ts) and the conflict a refused claim becomes (leased-elsewhere.ts).
 *
 * @module
 */

import type { Plugin } from '../../plugins/define-plugin.ts';
import type { RunEvent } from '../../run/run-events.ts';
import type { RunEventRecord, RunStore, StoredRun } from '../../stores/run-store.ts';
import { RunLeasedError, RunNotFoundError } from '../../stores/run-store-errors.ts';
import type { RunHandle } from '../run-handle.ts';
import type { RunConflictError, RunPersistenceError, RunValueError } from './durable-errors.ts';
import type { DurableOptions } from './durable-options.ts';
import { durableToolGate } from './durable-tool-gate.ts';
import { leasedElsewhere } from './leased-elsewhere.ts';
import { defaultOwnerName, leaseHolder, newInstanceId, OwnerLease } from './owner-lease.ts';
import { RunEventFeed, type RunEventsOptions } from './run-event-feed.ts';
import { hibernateAfter, RunHibernation, waitsForAnswer } from './run-hibernation.ts';
import { type PersistedWrite, RunPersister } from './run-persister.ts';

const FINISHED_AT_CLAIM: ReadonlySet<string> = new Set(['completed', 'failed', 'canceled']);

export type { DurableOptions } from './durable-options.ts';
export type { RunEventsOptions } from './run-event-feed.ts';
export { DEFAULT_HIBERNATE_AFTER_MS, hibernateAfter } from './run-hibernation.ts';

/** What `track` needs to create a run in the store. */
export interface TrackedRun {
  /** The stored run it was restored from; absent for a new run. */
  stored?: StoredRun;
  agentId: string;
  sessionId?: string;
}

export interface DurableRunsConfig {
  store: RunStore;
  options?: DurableOptions;
  onError: (error: unknown, where: string) => void;
  /** Drops a run from the runtime's live runs (evicted, or lost to another owner). */
  forget(runId: string): void;
  /** `runtime.resume(runId)`: what a suspended handle calls to bring its run back. */
  resume(runId: string): Promise<RunHandle>;
}

/** The runtime's durable runs (see the module's table); `createRuntime` makes one. */
export function createDurableRuns(config: DurableRunsConfig): DurableRuns {
  return new DurableRuns(config);
}

/**
 * One runtime's durable runs. A class whose methods are the runtime's calls (the module's table):
 * the state they share (persisters, claims being released or restored) is its fields.
 */
export class DurableRuns {
  /** This runtime's owner name (`durable.owner`, default `host:pid:random`). */
  readonly owner: string;
  /** This runtime instance's lease holder, `<owner>#<instance>`: what the store records as a run's `owner`. */
  readonly instance: string;
  /** The write-ahead plugin (durable-tool-gate.ts). */
  readonly toolGate: Plugin;
  private readonly store: RunStore;
  private readonly options: DurableOptions;
  private readonly onError: DurableRunsConfig['onError'];
  private readonly lease: OwnerLease;
  private readonly persisters = new Map<string, RunPersister>();
  private readonly hibernation: RunHibernation;
  private readonly feed: RunEventFeed;
  /** Claims being released (eviction): a restore of the same run waits for it. */
  private readonly releasing = new Map<string, Promise<unknown>>();
  private readonly restoring = new Map<string, Promise<RunHandle>>();
  /** Runs whose last claim found them finished (bounded by the runs this runtime restored). */
  private readonly finishedAtClaim = new Set<string>();
  private closed = false;

  constructor(private readonly config: DurableRunsConfig) {
    const { store, onError } = config;
    this.store = store;
    this.onError = onError;
    this.options = config.options ?? {};
    this.owner = this.options.owner ?? defaultOwnerName();
    // What the store keys this runtime's lease and claims by: unique per instance (owner-lease.ts).
    this.instance = leaseHolder(this.owner, newInstanceId());
    this.lease = new OwnerLease(store, this.instance, this.options.leaseMs ?? 30_000, (error) =>
      onError(error, `lease heartbeat of ${this.instance}`),
    );
    this.feed = new RunEventFeed(store);
    const durable = this;
    this.hibernation = new RunHibernation(hibernateAfter(this.options, store), {
      persisterOf: (runId) => this.persisters.get(runId),
      get closed() {
        return durable.closed;
      },
      unload: (runId, persister) => {
        persister.stop();
        this.persisters.delete(runId);
        config.forget(runId);
      },
      release: (runId) => this.release(runId),
      resume: (runId) => config.resume(runId),
    });
    this.toolGate = durableToolGate(store, (runId) => this.persisters.get(runId));
  }

  // One of each per runtime, not per run: a run waiting for an answer keeps its persister, and
  // five closures each were ~300 bytes of it (issue 29 item 3).
  private readonly leaseReady = () => this.lease.ready();
  private readonly leaseIsReady = () => this.lease.isReady;
  private readonly written = (write: PersistedWrite) => {
    this.feed.written(write.runId);
    this.options.onPersisted?.(write);
  };
  private readonly writeFailed = (error: RunPersistenceError) =>
    this.onError(error, `store write of run ${error.runId}`);

  /** Creates the run's persister and attaches it to the handle. */
  track(handle: RunHandle, run: TrackedRun): RunPersister {
    const { runId } = handle;
    const { store, options } = this;
    const persister = new RunPersister({
      store,
      runId,
      agentId: run.agentId,
      ...(run.sessionId === undefined ? {} : { sessionId: run.sessionId }),
      ...(run.stored === undefined ? {} : { version: run.stored.version }),
      ...(store.claim === undefined ? {} : { owner: this.instance }),
      ready: this.leaseReady,
      isReady: this.leaseIsReady,
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      // A volatile store has no write-ahead gate (`toolGate`): no tool call waits for its record.
      recordToolCalls: store.volatile !== true,
      onWrite: this.written,
      onError: this.writeFailed,
      onConflict: (error) => this.lost(handle, persister, error),
    });
    this.persisters.set(runId, persister);
    this.hibernation.restored(runId);
    handle.attachStorage(persister);
    return persister;
  }

  /** After each observed snapshot of a hosted run: arms or disarms its eviction. */
  observed(handle: RunHandle, state: string, final: boolean): void {
    const { runId } = handle;
    this.hibernation.disarm(runId);
    const persister = this.persisters.get(runId);
    if (final && persister !== undefined) {
      // Forget the run once its last write is in (after any retries), and give up the claim on it.
      void persister.caughtUp().then(
        () => {
          if (this.persisters.get(runId) === persister) this.persisters.delete(runId);
          this.feed.forget(runId);
          this.release(runId);
        },
        () => {}, // lost to another owner: reported by the persister
      );
    }
    if (waitsForAnswer(state)) this.hibernation.arm(handle);
  }

  /**
   * Whether the last claim of `runId` found it finished already (by whoever held it), so hosting
   * it recovered nothing: a recovery pass whose listing was a moment old does not hand it on.
   */
  wasFinishedAtClaim(runId: string): boolean {
    return this.finishedAtClaim.has(runId);
  }

  /** The handle of an evicted run, if the app still holds it (to rebind on restore). */
  suspended(runId: string): RunHandle | undefined {
    return this.hibernation.suspendedHandle(runId);
  }

  /**
   * Claims a stored run for this runtime and hands it to `host` (one restore at a time per run).
   *
   * @throws RunNotFoundError for no such run; RunConflictError while another owner holds it.
   */
  restore(runId: string, host: (stored: StoredRun) => RunHandle): Promise<RunHandle> {
    const pending = this.restoring.get(runId);
    if (pending !== undefined) return pending;
    const restored = (async () => {
      const stored = await this.claim(runId);
      // A claim hands a finished run back unchanged: its holder finished it (recover-runs.ts).
      if (FINISHED_AT_CLAIM.has(stored.status)) this.finishedAtClaim.add(runId);
      else this.finishedAtClaim.delete(runId);
      try {
        return host(stored);
      } catch (error) {
        // Not hosted (a snapshot this code cannot restore): do not keep others from it.
        if (stored.owner === this.instance) this.release(runId);
        throw error;
      }
    })().finally(() => this.restoring.delete(runId));
    this.restoring.set(runId, restored);
    return restored;
  }

  /**
   * Resolves when every run's writes so far are in the store (one run's with `runId`).
   *
   * @throws RunPersistenceError / RunConflictError as `run.persisted()` does.
   */
  async flush(runId?: string): Promise<void> {
    const targets = runId === undefined ? [...this.persisters.values()] : [this.persisters.get(runId)];
    await Promise.all(targets.map((persister) => persister?.persisted()));
  }

  /**
   * Stops hosting: waits for the writes in flight, stops the actors (`stopActors`), releases
   * the runs this runtime holds and ends its lease, so another process can resume them at
   * once. Runs whose last snapshot could not be written are reported to `onError`.
   */
  async close(stopActors: () => string[]): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hibernation.stop();
    const outcomes = await Promise.allSettled(
      [...this.persisters.values()].map((persister) => persister.persisted()),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') this.onError(outcome.reason, 'close: a run could not be saved');
    }
    const hosted = stopActors();
    for (const persister of this.persisters.values()) persister.stop();
    this.persisters.clear();
    for (const runId of hosted) this.release(runId);
    await Promise.all(this.releasing.values());
    await this.lease.end().catch((error: unknown) => this.onError(error, `lease end of ${this.instance}`));
  }

  /**
   * The run's event log from the store (after `afterSeq`), then, when following, each event as
   * its write lands (this runtime's writes wake it at once; other processes' within `pollMs`),
   * until the run's final event.
   */
  events(runId: string, eventOptions: RunEventsOptions = {}): AsyncGenerator<RunEventRecord<RunEvent>> {
    return this.feed.events(runId, eventOptions);
  }

  /**
   * The stored run, claimed for this instance when the store has claims (after any release of it
   * in flight).
   *
   * @throws RunNotFoundError for no such run; RunConflictError while another owner holds it.
   */
  private async claim(runId: string): Promise<StoredRun> {
    if (this.closed) throw new Error('The runtime is closed');
    await this.releasing.get(runId);
    const { store } = this;
    if (store.claim === undefined) {
      const stored = await store.load(runId);
      if (stored === undefined) throw new RunNotFoundError(runId);
      return stored;
    }
    await this.lease.ready();
    try {
      return await store.claim(runId, this.instance);
    } catch (error) {
      if (!(error instanceof RunLeasedError)) throw error;
      throw leasedElsewhere(runId, error, this.owner);
    }
  }

  /**
   * A write the store refused for good (another owner took the run, or a value it cannot hold): the
   * run stops here, and its handle says why.
   */
  private lost(handle: RunHandle, persister: RunPersister, error: RunConflictError | RunValueError): void {
    const { runId } = handle;
    this.hibernation.disarm(runId);
    if (this.persisters.get(runId) === persister) this.persisters.delete(runId);
    this.config.forget(runId);
    handle.actor.stop();
    handle.lose(error);
    this.onError(error, `run ${runId}`);
  }

  private release(runId: string): void {
    if (this.store.release === undefined) return;
    const releasing = this.store
      .release(runId, this.instance)
      .catch((error: unknown) => this.onError(error, `release of run ${runId}`))
      .finally(() => {
        if (this.releasing.get(runId) === releasing) this.releasing.delete(runId);
      });
    this.releasing.set(runId, releasing);
  }
}
