/**
 * When each worker of the effect trials held each run (issue 34, docs/durability.md §Guarantees
 * "one runtime instance advances a run"): every worker logs its store's lease calls with the
 * wall clock around them ({@link leaseLogged}), and {@link handoversOf} reads from the logs of all
 * workers whether two instances ever held one run at the same time (a bug in the claim code) or
 * one after the other (a legal takeover once the first one's lease lapsed).
 *
 * The workers run on one machine, so their `Date.now()` clocks are one clock; the SQLite store
 * computes a lease's end from the same clock, PostgreSQL from its own `now()` on the same machine.
 * A call's effect happened somewhere in `[at0, at1]`, so every test is made with the bounds that
 * make it certain:
 *
 * | question | certain when |
 * | --- | --- |
 * | A's lease was live at `t` | a heartbeat of A committed by `t` (`at1 ≤ t`) was sent within `ttlMs` before it (`at0 + ttlMs > t`) |
 * | A's lease had lapsed at `t` | A had no heartbeat in flight or committed in `(t − ttlMs, t]` |
 * | A held run R at `t` | A's claim of R committed before `t`, and by `t` A had not released R, saved it final, or had a save of it refused |
 *
 * A claim of R by B whose whole window `[at0, at1]` falls where A's lease was live and A held R is
 * an **overlap**. A claim made after A's lease had lapsed is a **takeover** (with A's longest
 * heartbeat gap around it: how long it stalled); after A let R go, a **release**; a claim that
 * returned R finished (the store hands a finished run back unchanged) is **finished**: nothing
 * passed; anything else, **unclear** (the clocks cannot tell: A let go of R during the claim).
 *
 * @module
 */

import type { RunStore } from '../../stores/run-store.ts';

/** One lease call a worker made, with the wall clock (epoch ms) before and after it. */
export interface LeaseOp {
  op: 'heartbeat' | 'claim' | 'release' | 'save';
  at0: number;
  at1: number;
  ok: boolean;
  /** heartbeat, claim, release: the lease holder (`<owner>#<instance>`). */
  holder?: string;
  ttlMs?: number;
  runId?: string;
  /** save: the status written; claim: the status of the run it returned. */
  status?: string;
  /** A refused call: the error's name. */
  error?: string;
}

/** `store`, its lease calls (heartbeat, claim, release) and saves logged to `ops`. */
export function leaseLogged(store: RunStore, ops: LeaseOp[]): RunStore {
  const timed = <T>(fields: Omit<LeaseOp, 'at0' | 'at1' | 'ok'>, call: () => Promise<T>): Promise<T> => {
    const at0 = Date.now();
    return call().then(
      (value) => {
        const claimed = fields.op === 'claim' ? { status: (value as { status: string }).status } : {};
        ops.push({ ...fields, ...claimed, at0, at1: Date.now(), ok: true });
        return value;
      },
      (error: unknown) => {
        ops.push({ ...fields, at0, at1: Date.now(), ok: false, error: (error as Error)?.name ?? 'Error' });
        throw error;
      },
    );
  };
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      switch (key) {
        case 'heartbeat':
          return (holder: string, ttlMs: number) =>
            timed({ op: 'heartbeat', holder, ttlMs }, () => target.heartbeat!(holder, ttlMs));
        case 'claim':
          return (runId: string, holder: string) =>
            timed({ op: 'claim', runId, holder }, () => target.claim!(runId, holder));
        case 'release':
          return (runId: string, holder: string) =>
            timed({ op: 'release', runId, holder }, () => target.release!(runId, holder));
        case 'save':
          return (runId: string, update: Parameters<RunStore['save']>[1]) =>
            timed({ op: 'save', runId, status: update.status }, () => target.save(runId, update));
        default:
          return value.bind(target);
      }
    },
  });
}

/** One worker's log: its name, its lease holder, and its calls. */
export interface WorkerLeases {
  worker: string;
  holder: string;
  ops: LeaseOp[];
}

/** How a run passed from one worker to another. */
export interface Handover {
  runId: string;
  from: string;
  to: string;
  /** When the new holder's claim committed (epoch ms). */
  at: number;
  kind: 'overlap' | 'takeover' | 'release' | 'finished' | 'unclear';
  /** The old holder's longest gap between heartbeats around the claim, ms (a stall when above the ttl). */
  gapMs: number;
}

const FINAL = new Set(['completed', 'failed', 'canceled']);

/** Every handover of a run between workers in the trial's logs (see the module's table). */
export function handoversOf(workers: readonly WorkerLeases[], ttlMs: number): Handover[] {
  const handovers: Handover[] = [];
  for (const to of workers) {
    for (const claim of to.ops) {
      if (claim.op !== 'claim' || !claim.ok || claim.runId === undefined) continue;
      for (const from of workers) {
        if (from === to) continue;
        const earlier = from.ops.find(
          (op) => op.op === 'claim' && op.ok && op.runId === claim.runId && op.at1 < claim.at0,
        );
        // A claim after `to`'s own later claim is that one's handover, not this.
        if (
          !earlier ||
          to.ops.some((op) => isClaimOf(op, claim.runId!) && op.at1 > earlier.at1 && op.at1 < claim.at0)
        )
          continue;
        handovers.push({
          runId: claim.runId,
          from: from.worker,
          to: to.worker,
          at: claim.at1,
          // A claim of a run finished meanwhile returns it unchanged: nothing passed.
          kind: FINAL.has(claim.status ?? '') ? 'finished' : kindOf(from.ops, claim, ttlMs),
          gapMs: heartbeatGap(from.ops, claim.at0, claim.at1, ttlMs),
        });
      }
    }
  }
  return handovers.sort((a, b) => a.at - b.at);
}

function isClaimOf(op: LeaseOp, runId: string): boolean {
  return op.op === 'claim' && op.ok && op.runId === runId;
}

function kindOf(from: readonly LeaseOp[], claim: LeaseOp, ttlMs: number): Handover['kind'] {
  const runId = claim.runId!;
  // Let go of the run: released it, saved it finished, or had a save refused (fenced off).
  const letGo = from.filter(
    (op) =>
      // A lease ended (`ttl 0`, a clean close) lets go of every run.
      (op.op === 'heartbeat' && op.ttlMs === 0 && op.ok) ||
      (op.runId === runId &&
        ((op.op === 'release' && op.ok) ||
          (op.op === 'save' && op.ok && FINAL.has(op.status ?? '')) ||
          (op.op === 'save' && /Stale|Leased/.test(op.error ?? '')))),
  );
  if (letGo.some((op) => op.at1 <= claim.at0)) return 'release';
  if (letGo.some((op) => op.at0 < claim.at1)) return 'unclear';
  const beats = from.filter((op) => op.op === 'heartbeat');
  if (liveThroughout(beats, claim.at0, claim.at1, ttlMs)) return 'overlap';
  // No heartbeat sent (or in flight) within the ttl before the claim's start: the lease had lapsed.
  const lapsed = !beats.some((op) => op.at0 <= claim.at0 && op.at1 + (op.ttlMs ?? ttlMs) > claim.at0);
  return lapsed ? 'takeover' : 'unclear';
}

/** Whether committed heartbeats cover `[at0, at1]` without a gap: each is live over `[its at1, its at0 + ttl)`. */
function liveThroughout(beats: readonly LeaseOp[], at0: number, at1: number, ttlMs: number): boolean {
  const spans = beats
    .filter((op) => op.ok && (op.ttlMs ?? ttlMs) > 0)
    .map((op) => [op.at1, op.at0 + (op.ttlMs ?? ttlMs)] as const)
    .sort((a, b) => a[0] - b[0]);
  let covered = at0;
  for (const [start, end] of spans) {
    if (start > covered) break; // a gap: nothing is live from `covered` on
    covered = Math.max(covered, end);
    if (covered > at1) return true;
  }
  return false;
}

/** The longest gap between `ops`' heartbeats that reaches into `[at0 − ttl, at1]`, ms. */
function heartbeatGap(ops: readonly LeaseOp[], at0: number, at1: number, ttlMs: number): number {
  const starts = ops.filter((op) => op.op === 'heartbeat').map((op) => op.at0);
  let gap = 0;
  for (let i = 0; i < starts.length; i++) {
    const next = starts[i + 1] ?? at1;
    if (next >= at0 - ttlMs && starts[i]! <= at1) gap = Math.max(gap, next - starts[i]!);
  }
  return gap;
}
