/**
 * `runtime.events(runId)` (docs/durability.md): a run's stored event log, then each new write as it
 * lands. This runtime's own writes wake a follower at once (`written`); other processes' are found
 * by polling the store.
 *
 * @module
 */

import type { RunEvent } from '../../run/run-events.ts';
import type { ReadEventsOptions, RunEventRecord, RunStore } from '../../stores/run-store.ts';

/** `runtime.events(runId, options)`. */
export interface RunEventsOptions extends Pick<ReadEventsOptions, 'afterSeq'> {
  /** Keep waiting for new events until the run's final one. Default true. */
  follow?: boolean;
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
  /** How often to look for events written by other processes while following, ms. Default 1000. */
  pollMs?: number;
}

const FINAL_EVENTS = new Set(['run_completed', 'run_failed', 'run_canceled']);
/** Events read from the store at a time. */
const PAGE = 500;

/** The event logs of one runtime's runs, and who is waiting for their next write. */
export class RunEventFeed {
  private readonly listeners = new Map<string, Set<() => void>>();
  /** Writes of each run this runtime has seen land, so a reader cannot miss one between reads. */
  private readonly writeCounts = new Map<string, number>();

  constructor(private readonly store: Pick<RunStore, 'readEvents'>) {}

  /** A write of the run landed: wakes its followers. */
  written(runId: string): void {
    this.writeCounts.set(runId, (this.writeCounts.get(runId) ?? 0) + 1);
    for (const listener of this.listeners.get(runId) ?? []) listener();
  }

  /** The run's last write is in: its count is not needed any more. */
  forget(runId: string): void {
    this.writeCounts.delete(runId);
  }

  /**
   * The run's event log from the store (after `afterSeq`), then, when following, each event as
   * its write lands (this runtime's writes wake it at once; other processes' within `pollMs`),
   * until the run's final event.
   */
  async *events(runId: string, options: RunEventsOptions = {}): AsyncGenerator<RunEventRecord<RunEvent>> {
    let afterSeq = options.afterSeq ?? 0;
    const follow = options.follow ?? true;
    const { signal } = options;
    let ended = false;
    while (!signal?.aborted) {
      const seen = this.writeCounts.get(runId) ?? 0;
      const page = await this.store.readEvents(runId, { afterSeq, limit: PAGE });
      for (const record of page) {
        afterSeq = record.seq;
        if (FINAL_EVENTS.has((record.event as { type?: string }).type ?? '')) ended = true;
        // Written by a runtime from RunEvents (the persister), so typed as one.
        yield record as RunEventRecord<RunEvent>;
      }
      if (page.length === PAGE) continue;
      if (ended || !follow) return;
      await this.wake(runId, seen, options.pollMs ?? 1000, signal);
    }
  }

  /**
   * Resolves once this runtime has written the run since the reader saw `seen` writes, after
   * `pollMs` (writes by other processes), or when `signal` aborts.
   */
  private wake(runId: string, seen: number, pollMs: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      if ((this.writeCounts.get(runId) ?? 0) > seen) {
        resolve();
        return;
      }
      const set = this.listeners.get(runId) ?? new Set();
      this.listeners.set(runId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.listeners.delete(runId);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
