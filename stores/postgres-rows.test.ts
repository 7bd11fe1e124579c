import { describe, expect, it } from 'vitest';
import { eventsParam, rowParams } from './postgres-rows.ts';

describe('PostgreSQL row parameters (postgres-rows.ts)', () => {
  it('sends the rows as one jsonb array of [member, index, value], jsonb-escaped values included', () => {
    const params = rowParams([
      { member: 'messages', trimFrom: undefined, rows: [[3, { role: 'tool', content: 'a\u0000b' }]] },
      { member: 'results', trimFrom: undefined, rows: [[7, { ok: true }]] },
    ]);
    const rows = JSON.parse(params.rows) as [string, number, unknown][];
    expect(rows.map(([member, index]) => [member, index])).toEqual([
      ['messages', 3],
      ['results', 7],
    ]);
    // NUL, which jsonb refuses, goes escaped (jsonb-value.ts) as the value's own jsonb text does.
    expect(JSON.stringify(rows[0]![2])).not.toContain('\\u0000');
    expect(params).toMatchObject({ trimmed: [], trimFrom: [] });
  });

  it('trims a rewritten member past the rows it writes, never one it upserts, filling empty slots with null rows', () => {
    const params = rowParams([
      // A batch's calls replaced: its one row upserted, any row after it goes.
      { member: 'pending', trimFrom: 0, rows: [[0, [{ toolCallId: 'c1' }]]] },
      // Results rewritten after a load: slots 1 and 4 done; 0, 2, 3 written as null, rows from 5 on go.
      {
        member: 'results',
        trimFrom: 0,
        rows: [
          [1, 'r1'],
          [4, 'r4'],
        ],
      },
      // A batch's results emptied: every row goes.
      { member: 'lastResults', trimFrom: 0, rows: [] },
      // Slots replaced below a shrink: kept as they are; rows from 3 on go.
      { member: 'newResults', trimFrom: 3, rows: [[0, 'x']] },
    ]);
    expect(JSON.parse(params.rows)).toEqual([
      ['pending', 0, [{ toolCallId: 'c1' }]],
      ['results', 0, null],
      ['results', 1, 'r1'],
      ['results', 2, null],
      ['results', 3, null],
      ['results', 4, 'r4'],
      ['newResults', 0, 'x'],
    ]);
    expect(params.trimmed).toEqual(['pending', 'results', 'lastResults', 'newResults']);
    expect(params.trimFrom).toEqual([1, 5, 0, 3]);
  });

  it('sends events as one jsonb array of [event, at]', () => {
    expect(JSON.parse(eventsParam([{ event: { type: 'run_started' }, at: 1_764_640_000_000 }]))).toEqual([
      [{ type: 'run_started' }, 1_764_640_000_000],
    ]);
    expect(eventsParam([])).toBe('[]');
  });
});
