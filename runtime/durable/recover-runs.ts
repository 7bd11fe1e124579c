/**
 * Recovery after a crash (docs/durability.md §Recovery, issue 28 item 2): `runtime.recover()`, or
 * `createRuntime({ durable: { recover } })` at start, restores the stored runs nobody is advancing.
 *
 * | stored run (status `running`, or `awaiting` a backoff) | recovered            |
 * |--------------------------------------------------------|----------------------|
 * | held by this owner (a restart under the same `owner`)  | at once              |
 * | held by nobody (released by a clean `close()`)         | at once              |
 * | held by another owner whose lease lapsed               | with `takeover: 'lapsed'` |
 * | held by another owner whose lease is live              | never (with `takeover: 'lapsed'`: once it lapses) |
 *
 * Runs awaiting an answer (clarification, external tool results, confirmation) stay in the store:
 * the answer by id restores them. The claim is atomic, so two processes recovering at once never
 * both take a run. With `takeover: 'lapsed'` the runtime keeps looking (every `sweepMs`, and
 * when a lease it was refused by runs out) until it is closed.
 *
 * @module
 */

import { runAwaitingOf } from '../run-awaiting.ts';
import type { RunHandle } from '../run-handle.ts';
import type { RunStore, StoredRun } from '../stores/run-store.ts';
import { RunConflictError } from './durable-errors.ts';
import { unpackSnapshot } from './snapshot-codec.ts';

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
  /** Runs another owner holds with a live lease: left to it (retried when it lapses, with takeover). */
  held: { runId: string; owner?: string; leaseUntil?: number }[];
}

/** What recovery needs from the runtime. */
export interface RecoveryConfig {
  store: RunStore;
  owner: string;
  leaseMs: number;
  /** `runtime.resume(runId)`: claims and hosts the run. */
  resume(runId: string): Promise<RunHandle>;
  /** Whether a run is live in this runtime already. */
  isLive(runId: string): boolean;
  onError: (error: unknown, where: string) => void;
}

/** Whether a stored unfinished run would go on by itself if hosted (not waiting for an answer). */
function goesOnByItself(run: StoredRun): boolean {
  if (run.status === 'running') return true;
  const snapshot = unpackSnapshot(run.snapshot) as
    | { context?: Parameters<typeof runAwaitingOf>[0] }
    | undefined;
  return runAwaitingOf(snapshot?.context)?.kind === 'backoff';
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
      const mine = run.owner === undefined || run.owner === owner;
      if (!mine && !takeover) {
        result.held.push({ runId: run.runId, owner: run.owner });
        continue;
      }
      try {
        const handle = await config.resume(run.runId);
        result.recovered.push(handle);
        options.onRecovered?.(handle);
      } catch (error) {
        if (error instanceof RunConflictError) {
          result.held.push({ runId: run.runId, owner: error.owner, leaseUntil: error.leaseUntil });
        } else {
          // One run that cannot be restored (a snapshot this code cannot read) does not stop the rest.
          config.onError(error, `recover run ${run.runId}`);
        }
      }
    }
    return result;
  }

  /** The next pass: at the next sweep, or sooner when a lease that refused a claim runs out. */
  function schedule(options: RecoverOptions, held: RecoveredRuns['held']): void {
    if (closed || options.takeover !== 'lapsed') return;
    const sweepMs = options.sweepMs ?? config.leaseMs;
    const lapses = held.flatMap((run) =>
      run.leaseUntil === undefined ? [] : [run.leaseUntil - Date.now() + 50],
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
