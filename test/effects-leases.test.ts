/**
 * The reading of the effect trials' lease logs (test/support/effects-leases.ts), on logs written
 * by hand: what test/reliability/effects-kill.test.ts asserts ("never two live holders of a run
 * at once") fails on an overlap and passes a takeover after a lapsed lease.
 */
import { describe, expect, it } from 'vitest';
import { handoversOf, type LeaseOp, type WorkerLeases } from './support/effects-leases.ts';

const TTL = 1_000;
/** Heartbeats every 333 ms over `[from, to)`, each taking 5 ms. */
const beats = (from: number, to: number): LeaseOp[] => {
  const ops: LeaseOp[] = [];
  for (let t = from; t < to; t += 333)
    ops.push({ op: 'heartbeat', at0: t, at1: t + 5, ok: true, ttlMs: TTL });
  return ops;
};
const claim = (runId: string, at: number, ok = true): LeaseOp => ({
  op: 'claim',
  runId,
  at0: at,
  at1: at + 10,
  ok,
});
const worker = (name: string, ops: LeaseOp[]): WorkerLeases => ({
  worker: name,
  holder: `pod-1#${name}`,
  ops,
});

describe('handoversOf (the effect trials’ lease logs)', () => {
  it('finds an overlap: the second claim came while the first holder’s lease was live', () => {
    const second = worker('second', [...beats(0, 5_000), claim('run-1', 100)]);
    const third = worker('third', [...beats(0, 5_000), claim('run-1', 2_000)]);
    expect(handoversOf([second, third], TTL)).toMatchObject([
      { runId: 'run-1', from: 'second', to: 'third', kind: 'overlap' },
    ]);
  });

  it('finds a takeover: the first holder stalled past the ttl (no heartbeat from 1,000 to 3,500 ms)', () => {
    const second = worker('second', [...beats(0, 1_000), ...beats(3_500, 6_000), claim('run-1', 100)]);
    const third = worker('third', [...beats(0, 6_000), claim('run-1', 2_500)]);
    const [handover] = handoversOf([second, third], TTL);
    expect(handover).toMatchObject({ kind: 'takeover', from: 'second', to: 'third' });
    expect(handover!.gapMs).toBeGreaterThan(TTL);
  });

  it('finds a release: the first holder finished the run before the claim', () => {
    const done: LeaseOp = { op: 'save', runId: 'run-1', status: 'completed', at0: 900, at1: 910, ok: true };
    const second = worker('second', [...beats(0, 5_000), claim('run-1', 100), done]);
    const third = worker('third', [...beats(0, 5_000), claim('run-1', 2_000)]);
    expect(handoversOf([second, third], TTL)).toMatchObject([{ kind: 'release' }]);
  });

  it('says unclear where the clocks cannot tell (the lease ends within the claim’s window)', () => {
    // second's last heartbeat at 666 ms: live until 1,666 at least, 1,671 at most.
    const second = worker('second', [...beats(0, 700), claim('run-1', 100)]);
    const third = worker('third', [...beats(0, 5_000), claim('run-1', 1_660)]);
    expect(handoversOf([second, third], TTL)).toMatchObject([{ kind: 'unclear' }]);
  });

  it('says finished for a claim that returned the run finished: nothing passed', () => {
    const second = worker('second', [...beats(0, 5_000), claim('run-1', 100)]);
    const third = worker('third', [...beats(0, 5_000), { ...claim('run-1', 2_000), status: 'completed' }]);
    expect(handoversOf([second, third], TTL)).toMatchObject([{ kind: 'finished' }]);
  });

  it('ignores refused claims and a worker’s own claims again', () => {
    const second = worker('second', [...beats(0, 5_000), claim('run-1', 100), claim('run-1', 400)]);
    const third = worker('third', [...beats(0, 5_000), claim('run-1', 2_000, false)]);
    expect(handoversOf([second, third], TTL)).toEqual([]);
  });
});
