import { describe, expect, it } from 'vitest';
import { runEval } from '../bfcl/eval/run-eval.ts';
import { EXPECTED_REASON, MISTAKE_KINDS } from '../bfcl/mistake-model.ts';
import { sharedBfclDataDir } from '../bfcl/shared-data-suite.ts';

/**
 * A small eval over real BFCL entries (a few per category, spread over each file): every entry
 * becomes a run through the runtime that ends, the first hint names the injected mistake, the
 * repaired calls match the ground truth, and the boundary takes the ground truth as it is.
 * Skipped with a warning when `../shared/data/bfcl` is missing; with CI=true that fails.
 */
const SUITE = 'BFCL eval on real entries (test/bfcl-eval.test.ts)';
const dataDir = sharedBfclDataDir(SUITE);

describe.skipIf(!dataDir)(SUITE, () => {
  it('runs four entries each of four categories, every run ending and repaired as the hints say', async () => {
    const categories = ['live_simple', 'live_multiple', 'parallel', 'multi_turn_miss_param'];
    const report = await runEval({ dataDir: dataDir!, categories, limit: 4, seed: 7, concurrency: 4 });

    expect(report.records).toHaveLength(16);
    expect(new Set(report.records.map((r) => r.category))).toEqual(new Set(categories));
    for (const record of report.records) {
      expect(['completed', 'failed', 'canceled'], record.id).toContain(record.storedStatus);
      if ((MISTAKE_KINDS as readonly string[]).includes(record.kind)) {
        expect(record.expectedReason).toBe(EXPECTED_REASON[record.kind as keyof typeof EXPECTED_REASON]);
      }
      if (record.quirks.length > 0) continue;
      expect(record.outcome, `${record.id}: ${record.notes.join(' | ')}`).toBe('completed');
      expect(record.correct, `${record.id}: ${record.mismatch}`).toBe(true);
      // The per-case trajectory (matchesTrajectory, superset): every ground-truth call was proposed.
      expect(record.trajectory, record.id).toEqual({ pass: true });
      if (record.hintAccurate !== undefined) expect(record.hintAccurate, record.id).toBe(true);
    }
    const { total } = report.summary;
    expect(total.unfinished).toBe(0);
    expect(total.runs).toBe(16);
    expect(report.groundTruth.unexplained).toEqual([]);
    expect(report.groundTruth.calls).toBeGreaterThan(16);
    // Every multi_turn_miss_param run waited for the later user turn.
    for (const record of report.records.filter((r) => r.category === 'multi_turn_miss_param')) {
      expect(record.clarifications, record.id).toBeGreaterThan(0);
    }
  });
});
