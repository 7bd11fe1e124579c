/**
 * The runtime's lease as an owner of runs (docs/durability.md): one heartbeat row per process, renewed every
 * `ttlMs / 3`, so that runs this process holds cannot be claimed by another one while it lives,
 * and can be once it is gone for `ttlMs`.
 *
 * The owner name is what a restarted process must reuse to take its runs back at once (a pod
 * name, `host:port`); the default is unique per process, so a crashed process's runs wait for its
 * lease to run out before another process can claim them.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunStore } from '../stores/run-store.ts';

/** `host:pid:random`: unique per process. */
export function defaultOwnerName(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export class OwnerLease {
  private beating: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private ended = false;
  private beaten = false;

  constructor(
    private readonly store: RunStore,
    readonly owner: string,
    readonly ttlMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Resolves once the lease is in the store (the first heartbeat), then starts renewing it.
   * Rejects when that heartbeat fails; the next call tries again.
   */
  ready(): Promise<void> {
    if (this.store.heartbeat === undefined || this.ended) return Promise.resolve();
    this.beating ??= this.beat().catch((error: unknown) => {
      this.beating = undefined;
      throw error;
    });
    return this.beating;
  }

  /** Whether {@link ready} would resolve at once: no lease to keep, or its first heartbeat is in. */
  get isReady(): boolean {
    return this.store.heartbeat === undefined || this.ended || this.beaten;
  }

  /** Ends the lease (`ttl 0`): other processes may claim this owner's runs at once. */
  async end(): Promise<void> {
    this.ended = true;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.beating === undefined || this.store.heartbeat === undefined) return;
    await this.store.heartbeat(this.owner, 0);
  }

  private async beat(): Promise<void> {
    await this.store.heartbeat!(this.owner, this.ttlMs);
    this.beaten = true;
    if (this.timer !== undefined || this.ended) return;
    this.timer = setInterval(
      () => {
        this.store.heartbeat!(this.owner, this.ttlMs).then(
          () => {
            this.failing = false;
          },
          (error: unknown) => {
            // Once per outage: the persister reports the writes that fail with it.
            if (!this.failing) this.onError(error);
            this.failing = true;
          },
        );
      },
      Math.max(1, Math.floor(this.ttlMs / 3)),
    );
    this.timer.unref();
  }
}
