import { describe, expect, it } from 'vitest';
import { runBlock } from './cpu-block.ts';

/** A run that spends about `ms` of CPU time. */
const busy = (ms: number) => async () => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('runBlock', () => {
  it('stops at maxRuns, giving one CPU and one wall sample per run, per step', async () => {
    const samples = await runBlock(busy(0), 10, { ms: Number.POSITIVE_INFINITY, maxRuns: 7 });
    expect(samples.cpuUsPerStep).toHaveLength(7);
    expect(samples.wallUsPerStep).toHaveLength(7);
  });

  it('runs once when the block has no time', async () => {
    const samples = await runBlock(busy(0), 1, { ms: 0 });
    expect(samples.cpuUsPerStep).toHaveLength(1);
  });

  it('stops once the process has spent cpuMs of CPU time, however long the block', async () => {
    const samples = await runBlock(busy(2), 1, { ms: Number.POSITIVE_INFINITY, maxRuns: 1000, cpuMs: 6 });
    expect(samples.cpuUsPerStep.length).toBeGreaterThanOrEqual(1);
    expect(samples.cpuUsPerStep.length).toBeLessThan(100);
    expect(samples.cpuUsPerStep.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(6000);
  });
});
