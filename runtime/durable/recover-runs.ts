/**
 * Recovery after a crash (docs/durability.md §Recovery, issue 28 item 2): `runtime.recover()`, or
 * `createRuntime({ durable: { recover } })` at start, restores the stored runs nobody is advancing.
 *
 * | stored run (status `running`, or `awaiting` a backoff)          | recovered                     |
 * |-----------------------------------------------------------------|-------------------------------|
 * | held by nobody (released by a clean `close()`)                  | at once                       |
 * | held by an instance of this owner name whose lease lapsed (a restart after a crash) | at once |
 * | held by an instance of this owner name whose lease is live      | once it lapses (retried then) |
 * | held by another owner whose lease lapsed                        | with `takeover: 'lapsed'`     |
 * | held by another owner whose lease is live                       | never (with `takeover: 'lapsed'`: once it lapses) |
 *
 * Leases are per runtime instance (owner-lease.ts): a run of this owner name that another live
 * instance holds (two runtimes given one name, or a crashed one whose lease still runs) is left
 * to it and looked at again when that lease would lapse. Runs awaiting an answer (clarification,
 * external tool results, confirmation) stay in the store: the answer by id restores them. A claim
 * is atomic and names the instance, so two instances recovering at once never both take a run.
 * With `takeover: 'lapsed'` the runtime keeps looking (every `sweepMs`, and when a lease it was
 * refused by runs out) until it is closed.
 *
 * @module
 */

import { runAwaitingOf } from '../../machines/run-awaiting.ts';
import type { RunStore, StoredRun } from '../../stores/run-store.ts';
import type { RunHandle } from '../run-handle.ts';
import { RunConflictError } from './durable-errors.ts';
import { ownerNameOf } from './owner-lease.ts';
import { readableContext } from './snapshot-migration.ts';

/** `durable.recover` and `runtime.recover(options)`. */
export interface RecoverOptions {
  /**
   * Runs held by other owners: `'none'` (default) leaves them to their owner; `'lapsed'` takes
   * each one once its owner's lease has run out (the owner crashed or hangs).
   */
  takeover?: 'none' | 'lapsed';
  /**
   * With `takeover: 'lapsed'`, at start: how often to look again for runs other owners
   * abandoned, ms. Default: `durable.leaseMs` (30 000). 0: look once only.
   */
  sweepMs?: number;
  /** Each run as it is recovered (to watch its outcome: `run.result()`). */
  onRecovered?: (run: RunHandle) => void;
}

/** What one recovery pass did. */
export interface RecoveredRuns {
  /** The runs restored and hosted here now. */
  recovered: RunHandle[];
  /**
   * Runs another runtime instance holds with a live lease: left to it. `owner` is its owner name,
   * `instance` its lease holder (`<owner>#<instance>`). Retried when the lease would lapse: always
   * for this owner name's runs, with `takeover: 'lapsed'` for other owners'.
   */
  held: { runId: string; owner?: string; instance?: string; leaseUntil?: number }[];
}

/** What recovery needs from the runtime. */
export interface RecoveryConfig {
  store: RunStore;
  /** The owner name (`durable.owner`): which stored runs are this runtime's to recover. */
  owner: string;
  leaseMs: number;
  /** `runtime.resume(runId)`: claims and hosts the run. */
  resume(runId: string): Promise<RunHandle>;
  /** Whether a run is live in this runtime already. */
  isLive(runId: string): boolean;
  /**
   * Whether `resume`'s claim found the run finished already (its holder finished it after the
   * pass listed it): then nothing was recovered. A run that fails at its restore (a snapshot this
   * release cannot read) was not finished, and is recovered as the failed run it becomes.
   */
  wasFinishedAtClaim?(runId: string): boolean;
  onError: (error: unknown, where: string) => void;
}

/** Whether a stored unfinished run would go on by itself if hosted (not waiting for an answer). */
function goesOnByItself(run: StoredRun): boolean {
  if (run.status === 'running') return true;
  return (
    runAwaitingOf(readableContext<Parameters<typeof runAwaitingOf>[0]>(run.snapshot))?.kind === 'backoff'
  );
}

/** Recovery passes over `config.store`, and the sweeper `durable.recover` starts. */
export function createRecovery(config: RecoveryConfig) {
  const { store, owner } = config;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /** One pass: restores every run `options` allows that nobody is advancing. */
  async function recover(options: RecoverOptions = {}): Promise<RecoveredRuns> {
    const takeover = options.takeover === 'lapsed';
    const stored = await store.list({ status: ['running', 'awaiting'] });
    const result: RecoveredRuns = { recovered: [], held: [] };
    for (const run of stored) {
      if (closed) break;
      if (config.isLive(run.runId) || !goesOnByItself(run)) continue;
      const mine = run.owner === undefined || ownerNameOf(run.owner) === owner;
      if (!mine && !takeover) {
        result.held.push({ runId: run.runId, owner: ownerNameOf(run.owner!), instance: run.owner! });
        continue;
      }
      try {
        const handle = await config.resume(run.runId);
        // Finished by its holder since the listing (a claim returns a finished run unchanged):
        // nothing was recovered, and the run is not handed on as if it had been (issue 34: the
        // trials' "run handed to onRecovered in both workers").
        if (config.wasFinishedAtClaim?.(run.runId)) continue;
        result.recovered.push(handle);
        options.onRecovered?.(handle);
      } catch (error) {
        if (error instanceof RunConflictError) {
          result.held.push({
            runId: run.runId,
            ...(error.owner === undefined ? {} : { owner: error.owner }),
            ...(error.instance === undefined ? {} : { instance: error.instance }),
            ...(error.leaseUntil === undefined ? {} : { leaseUntil: error.leaseUntil }),
          });
        } else {
          // One run that cannot be restored (a snapshot this code cannot read) does not stop the rest.
          config.onError(error, `recover run ${run.runId}`);
        }
      }
    }
    return result;
  }

  /**
   * The next pass: at the next sweep (takeover), or sooner when a lease that refused a claim runs
   * out (for this owner name's runs always: a crashed instance's runs are this name's to take back).
   */
  function schedule(options: RecoverOptions, held: RecoveredRuns['held']): void {
    if (closed) return;
    const takeover = options.takeover === 'lapsed';
    const sweepMs = takeover ? (options.sweepMs ?? config.leaseMs) : 0;
    const lapses = held.flatMap((run) =>
      run.leaseUntil === undefined || !(takeover || run.owner === owner)
        ? []
        : [run.leaseUntil - Date.now() + 50],
    );
    const delays = [...(sweepMs > 0 ? [sweepMs] : []), ...lapses.map((ms) => Math.max(10, ms))];
    if (delays.length === 0) return;
    timer = setTimeout(() => void pass(options), Math.min(...delays));
    timer.unref();
  }

  async function pass(options: RecoverOptions): Promise<void> {
    timer = undefined;
    let held: RecoveredRuns['held'] = [];
    try {
      held = (await recover(options)).held;
    } catch (error) {
      config.onError(error, 'recover');
    }
    schedule(options, held);
  }

  return {
    recover,
    /** `durable.recover`: a pass now, then (takeover) the sweeper. */
    start(options: RecoverOptions): void {
      void pass(options);
    },
    /** Stops the sweeper (`runtime.close()`). */
    close(): void {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

export type Recovery = ReturnType<typeof createRecovery>;
