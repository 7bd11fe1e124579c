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
 * Hibernation (eviction): a run waiting for an answer (`awaiting.clarification`, `.externalTools`,
 * `.confirmation`; not a backoff, which wakes by itself) for `hibernateAfterMs` (default 60 s on
 * a durable store) with everything written is stopped and dropped from memory, and its claim
 * released. An answer by id (`runtime.provideClarification(runId, ...)`) or through a handle the
 * app kept restores it.
 *
 * @module
 */

import type { Plugin, ToolInvocation } from '../../plugins/define-plugin.ts';
import type { RunEvent } from '../../run/run-events.ts';
import type { ReadEventsOptions, RunEventRecord, RunStore, StoredRun } from '../../stores/run-store.ts';
import { RunLeasedError, RunNotFoundError } from '../../stores/run-store-errors.ts';
import type { RunHandle } from '../run-handle.ts';
import { callAbortOf } from '../steps/execute-tool.ts';
import { RunConflictError, type RunPersistenceError } from './durable-errors.ts';
import { defaultOwnerName, leaseHolder, newInstanceId, OwnerLease, ownerNameOf } from './owner-lease.ts';
import type { RecoverOptions } from './recover-runs.ts';
import { type PersistedWrite, RunPersister } from './run-persister.ts';

/** `createRuntime({ durable })`: how runs are kept in the store (docs/durability.md). */
export interface DurableOptions {
  /**
   * Hibernation (issue 36 item 3; docs/durability.md §Hibernation): a run that has waited this
   * long for an answer (a clarification, external tool results, a confirmation; not a backoff,
   * which wakes by itself), ms, with everything written, leaves memory: its actor is stopped and
   * its claim released, and what stays is the store's copy (under 1 KB of heap a run on SQLite).
   * An answer by id, or through a handle the app kept (it stays valid: `status`, `awaiting`,
   * `result()`, `events$`), restores it transparently. Default 60,000 on a durable store; off on
   * a volatile one (the memory store: its copy of the run is in memory anyway). `false`: never.
   */
  hibernateAfterMs?: number | false;
  /**
   * The older name of {@link hibernateAfterMs}, for any store (the memory store included); used
   * when `hibernateAfterMs` is not given. Default: none.
   */
  evictAfterMs?: number;
  /**
   * This runtime's name as the owner of the runs it hosts: a label for people and for "my runs"
   * (a pod name, `host:port`). A restarted process under the name it had recovers that name's
   * runs (`recover: true`) once the crashed instance's lease lapses (`leaseMs`; at once after a
   * clean `close()`). The lease itself is this runtime instance's (`runtime.instance`), so two
   * live runtimes given one name never both advance a run: a run one holds is refused to the
   * other (RunConflictError) until its lease lapses. Default: `host:pid:random`, unique per process.
   */
  owner?: string;
  /** How long this owner's lease lives unrenewed, ms (renewed every third of it). Default 30 000. */
  leaseMs?: number;
  /** Delay before a failed write is retried, ms, doubling up to `maxMs`. Default 100, up to 5 000. */
  retry?: { initialMs?: number; maxMs?: number };
  /** Called after each accepted write (state, version, events, duration): metrics, tests. */
  onPersisted?: (write: PersistedWrite) => void;
  /**
   * At start, restore the stored runs nobody is advancing (docs/durability.md §Recovery): `true` for
   * this owner's and released runs; `{ takeover: 'lapsed' }` also other owners' once their lease
   * ran out, looking again until `close()`. Default: off (`runtime.recover()` does one pass).
   */
  recover?: boolean | RecoverOptions;
}

/** What `track` needs to create a run in the store. */
export interface TrackedRun {
  /** The stored run it was restored from; absent for a new run. */
  stored?: StoredRun;
  agentId: string;
  sessionId?: string;
}

/** `runtime.events(runId, options)`. */
export interface RunEventsOptions extends Pick<ReadEventsOptions, 'afterSeq'> {
  /** Keep waiting for new events until the run's final one. Default true. */
  follow?: boolean;
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
  /** How often to look for events written by other processes while following, ms. Default 1000. */
  pollMs?: number;
}

/** What {@link DurableOptions.hibernateAfterMs} is by default on a durable store, ms. */
export const DEFAULT_HIBERNATE_AFTER_MS = 60_000;

/** How long a run waits for an answer before it hibernates, ms; `undefined`: never. */
export function hibernateAfter(
  options: DurableOptions,
  store: Pick<RunStore, 'volatile'>,
): number | undefined {
  const { hibernateAfterMs } = options;
  if (hibernateAfterMs === false) return undefined;
  if (hibernateAfterMs !== undefined) return checkDelay(hibernateAfterMs, 'hibernateAfterMs');
  if (options.evictAfterMs !== undefined) return checkDelay(options.evictAfterMs, 'evictAfterMs');
  return store.volatile ? undefined : DEFAULT_HIBERNATE_AFTER_MS;
}

function checkDelay(ms: number, name: string): number {
  if (typeof ms !== 'number' || !(ms >= 0) || ms > 2_147_483_647) {
    throw new RangeError(
      `durable.${name} must be a number of ms from 0 to 2147483647 (or false), got ${String(ms)}`,
    );
  }
  return ms;
}

/** Waiting states an answer ends: only these are evicted. */
const ANSWER_WAITS = new Set([
  'awaiting.clarification',
  'awaiting.externalTools',
  'awaiting.confirmation',
  'awaiting.inDoubt',
]);
const FINAL_EVENTS = new Set(['run_completed', 'run_failed', 'run_canceled']);
const PAGE = 500;

export interface DurableRunsConfig {
  store: RunStore;
  options?: DurableOptions;
  onError: (error: unknown, where: string) => void;
  /** Drops a run from the runtime's live runs (evicted, or lost to another owner). */
  forget(runId: string): void;
  /** `runtime.resume(runId)`: what a suspended handle calls to bring its run back. */
  resume(runId: string): Promise<RunHandle>;
}

export type DurableRuns = ReturnType<typeof createDurableRuns>;

export function createDurableRuns(config: DurableRunsConfig) {
  const { store, onError } = config;
  const options = config.options ?? {};
  const owner = options.owner ?? defaultOwnerName();
  /** What the store keys this runtime's lease and claims by: unique per instance (owner-lease.ts). */
  const holder = leaseHolder(owner, newInstanceId());
  const lease = new OwnerLease(store, holder, options.leaseMs ?? 30_000, (error) =>
    onError(error, `lease heartbeat of ${holder}`),
  );
  const evictAfterMs = hibernateAfter(options, store);
  const persisters = new Map<string, RunPersister>();
  const evictions = new Map<string, NodeJS.Timeout>();
  /** Evicted runs whose handle the app may still hold; an entry goes when its handle is collected. */
  const suspended = new Map<string, WeakRef<RunHandle>>();
  const collected = new FinalizationRegistry<string>((runId) => {
    if (suspended.get(runId)?.deref() === undefined) suspended.delete(runId);
  });
  /** Claims being released (eviction): a restore of the same run waits for it. */
  const releasing = new Map<string, Promise<unknown>>();
  const restoring = new Map<string, Promise<RunHandle>>();
  const listeners = new Map<string, Set<() => void>>();
  /** Writes of each run this runtime has seen land, so a reader cannot miss one between reads. */
  const writeCounts = new Map<string, number>();
  let closed = false;

  function notify(runId: string): void {
    writeCounts.set(runId, (writeCounts.get(runId) ?? 0) + 1);
    for (const listener of listeners.get(runId) ?? []) listener();
  }

  function release(runId: string): void {
    if (store.release === undefined) return;
    const releasing$ = store
      .release(runId, holder)
      .catch((error: unknown) => onError(error, `release of run ${runId}`))
      .finally(() => {
        if (releasing.get(runId) === releasing$) releasing.delete(runId);
      });
    releasing.set(runId, releasing$);
  }

  async function evict(handle: RunHandle, seen: unknown): Promise<void> {
    const runId = handle.runId;
    evictions.delete(runId);
    const persister = persisters.get(runId);
    if (persister === undefined || closed) return;
    try {
      await persister.persisted();
    } catch {
      // Not written yet: try again later (the persister keeps retrying meanwhile).
      arm(handle);
      return;
    }
    // From here on synchronous: no answer can slip in between the check and the stop.
    if (handle.actor.getSnapshot() !== seen || persister.status.state !== 'saved' || closed) return;
    persister.stop();
    persisters.delete(runId);
    config.forget(runId);
    handle.actor.stop();
    handle.suspend(() => config.resume(runId));
    suspended.set(runId, new WeakRef(handle));
    collected.register(handle, runId);
    release(runId);
  }

  function arm(handle: RunHandle): void {
    if (evictAfterMs === undefined || closed) return;
    const seen = handle.actor.getSnapshot();
    const timer = setTimeout(() => void evict(handle, seen), evictAfterMs);
    timer.unref();
    evictions.set(handle.runId, timer);
  }

  /** Waits for `promise`, or rejects with the abort's reason once the call is stopped. */
  function unlessAborted<T>(promise: Promise<T>, call: ToolInvocation): Promise<T> {
    // The call's own cancellation, while its signal is the run's: no AbortSignal is made for it.
    const own = callAbortOf(call);
    if (own) {
      if (own.aborted) return Promise.reject(own.reason);
      return new Promise<T>((resolve, reject) => {
        own.whenAborted(reject);
        promise.then(resolve, reject);
      });
    }
    const { signal } = call;
    if (signal === undefined) return promise;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(signal.reason);
      signal.addEventListener('abort', abort, { once: true });
      promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }

  /**
   * Write-ahead for tool calls: `execute` runs only once the snapshot holding the call (its
   * `toolCallId`) is in the store. Otherwise a crash right after a side effect could resume the
   * run from before the call was planned, and a planner turn run again could give that id to a
   * different call (ids are `<turnId>:c<n>` when the planner sets none).
   */
  // A volatile store (memory) does not survive a crash: there is nothing to protect, and no
  // wrapper at all (one layer less around every tool call).
  const toolGate: Plugin = store.volatile
    ? { name: 'toolwarden:durable-runs' }
    : {
        name: 'toolwarden:durable-runs',
        wrapToolCall(call, next) {
          const persister = persisters.get(call.meta.runId);
          // Not an async function: passing the call through would cost a promise and a tick.
          if (persister === undefined) return next(call);
          return unlessAborted(persister.whenRecorded(call.meta.toolCallId), call).then(() => next(call));
        },
      };

  // One of each per runtime, not per run: a run waiting for an answer keeps its persister, and
  // five closures each were ~300 bytes of it (issue 29 item 3).
  const leaseReady = () => lease.ready();
  const leaseIsReady = () => lease.isReady;
  const written = (write: PersistedWrite) => {
    notify(write.runId);
    options.onPersisted?.(write);
  };
  const writeFailed = (error: RunPersistenceError) => onError(error, `store write of run ${error.runId}`);

  return {
    owner,
    /** This runtime instance's lease holder, `<owner>#<instance>`: what the store records as a run's `owner`. */
    instance: holder,
    toolGate,

    /** Creates the run's persister and attaches it to the handle. */
    track(handle: RunHandle, run: TrackedRun): RunPersister {
      const runId = handle.runId;
      const persister = new RunPersister({
        store,
        runId,
        agentId: run.agentId,
        ...(run.sessionId === undefined ? {} : { sessionId: run.sessionId }),
        ...(run.stored === undefined ? {} : { version: run.stored.version }),
        ...(store.claim === undefined ? {} : { owner: holder }),
        ready: leaseReady,
        isReady: leaseIsReady,
        ...(options.retry === undefined ? {} : { retry: options.retry }),
        // A volatile store has no write-ahead gate (`toolGate`): no tool call waits for its record.
        recordToolCalls: store.volatile !== true,
        onWrite: written,
        onError: writeFailed,
        onConflict: (error) => {
          clearTimeout(evictions.get(runId));
          evictions.delete(runId);
          if (persisters.get(runId) === persister) persisters.delete(runId);
          config.forget(runId);
          handle.actor.stop();
          handle.lose(error);
          onError(error, `run ${runId}`);
        },
      });
      persisters.set(runId, persister);
      suspended.delete(runId);
      handle.attachStorage(persister);
      return persister;
    },

    /** After each observed snapshot of a hosted run: arms or disarms its eviction. */
    observed(handle: RunHandle, state: string, final: boolean): void {
      const runId = handle.runId;
      clearTimeout(evictions.get(runId));
      evictions.delete(runId);
      const persister = persisters.get(runId);
      if (final && persister !== undefined) {
        // Forget the run once its last write is in (after any retries), and give up the claim on it.
        void persister.caughtUp().then(
          () => {
            if (persisters.get(runId) === persister) persisters.delete(runId);
            writeCounts.delete(runId);
            release(runId);
          },
          () => {}, // lost to another owner: reported by the persister
        );
      }
      if (ANSWER_WAITS.has(state)) arm(handle);
    },

    /** The handle of an evicted run, if the app still holds it (to rebind on restore). */
    suspended(runId: string): RunHandle | undefined {
      return suspended.get(runId)?.deref();
    },

    /**
     * Claims a stored run for this runtime and hands it to `host` (one restore at a time per run).
     *
     * @throws RunNotFoundError for no such run; RunConflictError while another owner holds it.
     */
    restore(runId: string, host: (stored: StoredRun) => RunHandle): Promise<RunHandle> {
      const pending = restoring.get(runId);
      if (pending !== undefined) return pending;
      const restored = (async () => {
        if (closed) throw new Error('The runtime is closed');
        await releasing.get(runId);
        let stored: StoredRun | undefined;
        if (store.claim === undefined) {
          stored = await store.load(runId);
          if (stored === undefined) throw new RunNotFoundError(runId);
        } else {
          await lease.ready();
          try {
            stored = await store.claim(runId, holder);
          } catch (error) {
            if (!(error instanceof RunLeasedError)) throw error;
            throw leasedElsewhere(runId, error);
          }
        }
        try {
          return host(stored);
        } catch (error) {
          // Not hosted (a snapshot this code cannot restore): do not keep others from it.
          if (stored.owner === holder) release(runId);
          throw error;
        }
      })().finally(() => restoring.delete(runId));
      restoring.set(runId, restored);
      return restored;
    },

    /**
     * Resolves when every run's writes so far are in the store (one run's with `runId`).
     *
     * @throws RunPersistenceError / RunConflictError as `run.persisted()` does.
     */
    async flush(runId?: string): Promise<void> {
      const targets = runId === undefined ? [...persisters.values()] : [persisters.get(runId)];
      await Promise.all(targets.map((persister) => persister?.persisted()));
    },

    /**
     * Stops hosting: waits for the writes in flight, stops the actors (`stopActors`), releases
     * the runs this runtime holds and ends its lease, so another process can resume them at
     * once. Runs whose last snapshot could not be written are reported to `onError`.
     */
    async close(stopActors: () => string[]): Promise<void> {
      if (closed) return;
      closed = true;
      for (const timer of evictions.values()) clearTimeout(timer);
      evictions.clear();
      const outcomes = await Promise.allSettled(
        [...persisters.values()].map((persister) => persister.persisted()),
      );
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') onError(outcome.reason, 'close: a run could not be saved');
      }
      const hosted = stopActors();
      for (const persister of persisters.values()) persister.stop();
      persisters.clear();
      for (const runId of hosted) release(runId);
      await Promise.all(releasing.values());
      await lease.end().catch((error: unknown) => onError(error, `lease end of ${holder}`));
    },

    /**
     * The run's event log from the store (after `afterSeq`), then, when following, each event as
     * its write lands (this runtime's writes wake it at once; other processes' within `pollMs`),
     * until the run's final event.
     */
    async *events(
      runId: string,
      eventOptions: RunEventsOptions = {},
    ): AsyncGenerator<RunEventRecord<RunEvent>> {
      let afterSeq = eventOptions.afterSeq ?? 0;
      const follow = eventOptions.follow ?? true;
      const { signal } = eventOptions;
      let ended = false;
      while (!signal?.aborted) {
        const seen = writeCounts.get(runId) ?? 0;
        const page = await store.readEvents(runId, { afterSeq, limit: PAGE });
        for (const record of page) {
          afterSeq = record.seq;
          if (FINAL_EVENTS.has((record.event as { type?: string }).type ?? '')) ended = true;
          // Written by a runtime from RunEvents (the persister), so typed as one.
          yield record as RunEventRecord<RunEvent>;
        }
        if (page.length === PAGE) continue;
        if (ended || !follow) return;
        await wake(runId, seen, eventOptions.pollMs ?? 1000, signal);
      }
    },
  };

  /**
   * The refusal of a claim, said for the app: another owner holds the run, or another live
   * instance under this runtime's own owner name (two runtimes share `durable.owner`, or the
   * last process under it crashed less than its `leaseMs` ago).
   */
  function leasedElsewhere(runId: string, error: RunLeasedError): RunConflictError {
    const until = new Date(error.leaseUntil).toISOString();
    const name = ownerNameOf(error.owner);
    const details = { cause: error, owner: name, instance: error.owner, leaseUntil: error.leaseUntil };
    if (name === owner) {
      return new RunConflictError(
        runId,
        `another runtime instance under this owner name ("${owner}", instance ${error.owner}) holds this run, ` +
          `its lease live until ${until}: either two live runtimes share durable.owner (give each its own), ` +
          'or the previous process under this name crashed and its lease has not lapsed yet (recovery takes the run then)',
        details,
      );
    }
    return new RunConflictError(
      runId,
      `owner "${name}" (instance ${error.owner}) holds this run (lease live until ${until}); ` +
        'only it can advance the run: answer through it, or wait for its lease to run out',
      details,
    );
  }

  /**
   * Resolves once this runtime has written the run since the reader saw `seen` writes, after
   * `pollMs` (writes by other processes), or when `signal` aborts.
   */
  function wake(runId: string, seen: number, pollMs: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      if ((writeCounts.get(runId) ?? 0) > seen) {
        resolve();
        return;
      }
      const set = listeners.get(runId) ?? new Set();
      listeners.set(runId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) listeners.delete(runId);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
