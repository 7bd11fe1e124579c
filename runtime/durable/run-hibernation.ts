/**
 * Hibernation (issue 36 item 3; docs/durability.md §Hibernation): a run waiting for an answer
 * (`awaiting.clarification`, `.externalTools`, `.confirmation`, `.inDoubt`; not a backoff, which
 * wakes by itself) for `hibernateAfterMs` with everything written is stopped and dropped from
 * memory, and its claim released. Its handle, if the app kept it, is suspended: an answer through
 * it (or by id) restores the run.
 *
 * | moment                                  | call             | does                                        |
 * |-----------------------------------------|------------------|---------------------------------------------|
 * | a snapshot in an answer wait            | `arm(handle)`    | a timer of `hibernateAfterMs`               |
 * | any other snapshot, a conflict          | `disarm(runId)`  | clears the run's timer                      |
 * | the timer fires, the snapshot unchanged | (evict)          | `host.unload`, actor stopped, handle suspended, `host.release` |
 * | the run is tracked again (restored)     | `restored(runId)`| forgets the suspended handle                |
 * | `runtime.close()`                       | `stop()`         | clears every timer                          |
 *
 * @module
 */

import type { RunStore } from '../../stores/run-store.ts';
import type { RunHandle } from '../run-handle.ts';
import type { DurableOptions } from './durable-options.ts';
import type { RunPersister } from './run-persister.ts';

/** What {@link DurableOptions.hibernateAfterMs} is by default on a durable store, ms. */
export const DEFAULT_HIBERNATE_AFTER_MS = 60_000;

/**
 * How long a run waits for an answer before it hibernates, ms; `undefined`: never.
 *
 * @throws RangeError for a delay that is not a number of ms from 0 to 2147483647 (setTimeout's range).
 */
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

/** Whether a run in `state` waits for an answer (and so may hibernate). */
export function waitsForAnswer(state: string): boolean {
  return ANSWER_WAITS.has(state);
}

/** What hibernation needs from the durable runs. */
export interface HibernationHost {
  persisterOf(runId: string): RunPersister | undefined;
  /** After `runtime.close()`: nothing hibernates any more. */
  readonly closed: boolean;
  /** Stops the run's persister and drops the run from the runtime's live runs. */
  unload(runId: string, persister: RunPersister): void;
  /** Gives up this runtime's claim on the run. */
  release(runId: string): void;
  /** `runtime.resume(runId)`: what a suspended handle calls to bring its run back. */
  resume(runId: string): Promise<RunHandle>;
}

/** The eviction timers of one runtime's runs, and the handles of the runs it evicted. */
export class RunHibernation {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Evicted runs whose handle the app may still hold; an entry goes when its handle is collected. */
  private readonly suspended = new Map<string, WeakRef<RunHandle>>();
  private readonly collected = new FinalizationRegistry<string>((runId) => {
    if (this.suspended.get(runId)?.deref() === undefined) this.suspended.delete(runId);
  });

  /** `afterMs`: from {@link hibernateAfter}; `undefined` never arms a timer. */
  constructor(
    private readonly afterMs: number | undefined,
    private readonly host: HibernationHost,
  ) {}

  /** Starts the run's timer from its current snapshot: evicted if that is still its snapshot then. */
  arm(handle: RunHandle): void {
    if (this.afterMs === undefined || this.host.closed) return;
    const seen = handle.actor.getSnapshot();
    const timer = setTimeout(() => void this.evict(handle, seen), this.afterMs);
    timer.unref();
    this.timers.set(handle.runId, timer);
  }

  disarm(runId: string): void {
    clearTimeout(this.timers.get(runId));
    this.timers.delete(runId);
  }

  /** The handle of an evicted run, if the app still holds it (to rebind on restore). */
  suspendedHandle(runId: string): RunHandle | undefined {
    return this.suspended.get(runId)?.deref();
  }

  /** The run is hosted again: its suspended handle, if any, is not kept here any more. */
  restored(runId: string): void {
    this.suspended.delete(runId);
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async evict(handle: RunHandle, seen: unknown): Promise<void> {
    const { runId } = handle;
    this.timers.delete(runId);
    const persister = this.host.persisterOf(runId);
    if (persister === undefined || this.host.closed) return;
    try {
      await persister.persisted();
    } catch {
      // Not written yet: try again later (the persister keeps retrying meanwhile).
      this.arm(handle);
      return;
    }
    // From here on synchronous: no answer can slip in between the check and the stop.
    if (handle.actor.getSnapshot() !== seen || persister.status.state !== 'saved' || this.host.closed) return;
    this.host.unload(runId, persister);
    handle.actor.stop();
    handle.suspend(() => this.host.resume(runId));
    this.suspended.set(runId, new WeakRef(handle));
    this.collected.register(handle, runId);
    this.host.release(runId);
  }
}
