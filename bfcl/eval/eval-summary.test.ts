import { describe, expect, it } from 'vitest';
import { evalSummary, median } from './eval-summary.ts';
import { formatTable } from './format-table.ts';
import type { EvalRecord } from './run-case.ts';

function record(overrides: Partial<EvalRecord>): EvalRecord {
  return {
    id: 'x',
    category: 'live_simple',
    kind: 'none',
    detail: '',
    quirks: [],
    outcome: 'completed',
    status: 'completed',
    storedStatus: 'completed',
    hintReasons: [],
    clarifications: 0,
    toolCalls: 1,
    failedCalls: 0,
    correct: true,
    trajectory: { pass: true },
    durationMs: 10,
    executed: [],
    policyDecisions: [],
    notes: [],
    ...overrides,
  };
}

describe('the eval table', () => {
  const records = [
    record({ id: 'a' }),
    record({
      id: 'b',
      kind: 'missing_required',
      hintAccurate: true,
      clarifications: 1,
      failedCalls: 1,
      repairedOnFirstRetry: true,
      durationMs: 30,
    }),
    record({
      id: 'c',
      kind: 'missing_required',
      hintAccurate: false,
      failedCalls: 2,
      repairedOnFirstRetry: false,
      correct: false,
      outcome: 'capped',
      durationMs: 50,
    }),
    record({
      id: 'd',
      category: 'parallel',
      kind: 'truncated_json',
      quirks: ['d#0: value_of_wrong_type'],
      hintAccurate: true,
      correct: false,
      outcome: 'failed',
      status: 'failed',
      storedStatus: 'failed',
    }),
  ];

  it('has a row per category and kind, a data-quirk row, category totals and a grand total', () => {
    const { rows, total, withoutQuirks } = evalSummary(records);
    expect(rows.map((row) => `${row.category}/${row.kind}`)).toEqual([
      'live_simple/none',
      'live_simple/missing_required',
      'live_simple/all',
      'parallel/data quirk',
      'parallel/all',
      'all/all',
    ]);
    expect(rows[1]).toMatchObject({
      runs: 2,
      completed: 1,
      capped: 1,
      firstRetry: 1,
      withFailure: 2,
      clarified: 1,
      hintAccurate: 1,
      hintExpected: 2,
      correct: 1,
      medianMs: 40,
    });
    expect(total).toMatchObject({ runs: 4, completed: 2, capped: 1, failed: 1, unfinished: 0, correct: 2 });
    expect(withoutQuirks).toMatchObject({ runs: 3, correct: 2 });
  });

  it('prints n/m for first retries, percentages for rates, a dash where nothing applies', () => {
    const table = formatTable(evalSummary(records).rows);
    expect(table).toMatch(/^live_simple\s+none\s+1\s+1\s+-\s+0\s+0\s+0\s+-\s+100\.0%\s+10\.0$/m);
    expect(table).toMatch(
      /^live_simple\s+missing_required\s+2\s+1\s+1\/2\s+1\s+1\s+0\s+50\.0%\s+50\.0%\s+40\.0$/m,
    );
  });

  it('median of an even count is the mean of the middle two', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBe(0);
  });
});
