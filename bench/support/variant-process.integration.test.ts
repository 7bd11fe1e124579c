import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startVariantProcess } from './variant-process.ts';
import { YARDSTICK } from './variants.ts';

const dir = mkdtempSync(join(tmpdir(), 'tw-variant-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a variant measured in its own process', () => {
  it('runs blocks of any run length on request in a child process, answering CPU and wall µs per step of each run', async () => {
    const worker = await startVariantProcess(YARDSTICK, dir);
    try {
      // A block ends when its time is up or after `maxRuns` runs; it runs at least once. An unbounded
      // block (the warm-up's) reaches the worker unbounded.
      const first = await worker.runBlock(2, { ms: Number.POSITIVE_INFINITY, maxRuns: 3 });
      const second = await worker.runBlock(5, { ms: 0 });
      expect(first.cpuUsPerStep).toHaveLength(3);
      expect(first.wallUsPerStep).toHaveLength(3);
      expect(second.cpuUsPerStep).toHaveLength(1);
      expect(first.wallUsPerStep.every((us) => us > 0)).toBe(true);
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('rejects with the worker’s error when the variant does not exist', async () => {
    await expect(startVariantProcess('no such variant', dir)).rejects.toThrow(
      /no bench variant is named "no such variant"/,
    );
  }, 60_000);
});
