/**
 * The runtime's lease as a holder of runs (docs/durability.md §Guarantees): one heartbeat row per
 * runtime instance, renewed every `ttlMs / 3`, so that runs this instance holds cannot be claimed
 * by another one while it lives, and can be once it is gone for `ttlMs`.
 *
 * The lease is held under the instance's own id, never under the owner name alone (issue 34 item
 * 1): the owner name (`durable.owner`, a pod name) is a label for people and says which stored
 * runs are "mine" to recover, but two live runtimes given one name (a restart overlapping the old
 * pod, two replicas named alike) are two holders to the store, so neither can claim a run the
 * other holds while its lease is live. The store sees the holder as `<owner>#<instance>`
 * ({@link leaseHolder}): the stores' claim code needs no notion of names, and a run held by a
 * release before this one (owner name only) stays fenced by that release's lease row.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunStore } from '../../stores/run-store.ts';

/** `host:pid:random`: unique per process. */
export function defaultOwnerName(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** Separates the owner name from the instance id in a lease holder; an instance id never holds one. */
const INSTANCE_MARK = '#';

/** A new runtime instance's id: 12 hex digits, unique per `createRuntime` call. */
export function newInstanceId(): string {
  return randomUUID().replaceAll('-', '').slice(0, 12);
}

/**
 * What the store records as a run's owner and keys a lease by: `<owner>#<instance>`, e.g.
 * `pod-1#3f9c2a61b0de`.
 */
export function leaseHolder(owner: string, instance: string): string {
  return `${owner}${INSTANCE_MARK}${instance}`;
}

/**
 * The owner name of a stored holder (what {@link leaseHolder} was given), or the holder itself
 * when it has no instance (written by a release before instance leases): `pod-1#3f9c…` → `pod-1`.
 */
export function ownerNameOf(holder: string): string {
  const at = holder.lastIndexOf(INSTANCE_MARK);
  return at <= 0 || !/^[0-9a-f]{12}$/.test(holder.slice(at + 1)) ? holder : holder.slice(0, at);
}

export class OwnerLease {
  private beating: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private ended = false;
  private beaten = false;

  constructor(
    private readonly store: RunStore,
    /** The lease holder ({@link leaseHolder}): this runtime instance. */
    readonly holder: string,
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

  /** Ends the lease (`ttl 0`): other processes may claim this instance's runs at once. */
  async end(): Promise<void> {
    this.ended = true;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.beating === undefined || this.store.heartbeat === undefined) return;
    await this.store.heartbeat(this.holder, 0);
  }

  private async beat(): Promise<void> {
    await this.store.heartbeat!(this.holder, this.ttlMs);
    this.beaten = true;
    if (this.timer !== undefined || this.ended) return;
    this.timer = setInterval(
      () => {
        this.store.heartbeat!(this.holder, this.ttlMs).then(
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
