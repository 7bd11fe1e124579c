import { describe, expect, it } from 'vitest';
import { refusedClaim } from './claim-refusal.ts';
import type { StoredRun } from './run-store.ts';

const run = (status: StoredRun['status'], owner?: string): StoredRun => ({
  runId: 'run-1',
  agentId: 'agent',
  status,
  version: 3,
  snapshot: {},
  createdAt: 1,
  updatedAt: 2,
  ...(owner === undefined ? {} : { owner }),
});

describe('refusedClaim', () => {
  it('throws RunNotFoundError when the run is gone', () => {
    expect(() => refusedClaim('run-1', undefined, Number.NaN, 0, 1_000)).toThrow(
      expect.objectContaining({ name: 'RunNotFoundError', runId: 'run-1' }),
    );
  });

  it('returns a finished run as it is, whoever held it', () => {
    const done = run('completed', 'pod-a');
    expect(refusedClaim('run-1', done, 5_000, 0, 1_000)).toBe(done);
  });

  it("throws RunLeasedError with the owner and lease end while the owner's lease is live", () => {
    expect(() => refusedClaim('run-1', run('awaiting', 'pod-a'), 5_000, 0, 1_000)).toThrow(
      expect.objectContaining({ name: 'RunLeasedError', owner: 'pod-a', leaseUntil: 5_000 }),
    );
  });

  it('asks for another attempt when the run is free by now, up to the third attempt', () => {
    expect(refusedClaim('run-1', run('running', 'pod-a'), 500, 0, 1_000)).toBeUndefined();
    expect(refusedClaim('run-1', run('running'), Number.NaN, 1, 1_000)).toBeUndefined();
    expect(() => refusedClaim('run-1', run('running'), Number.NaN, 2, 1_000)).toThrow(
      expect.objectContaining({ name: 'RunLeasedError', owner: '(unknown)', leaseUntil: 1_000 }),
    );
  });
});
