import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  groupRows,
  hasMarkers,
  joinSnapshot,
  type MemberRows,
  RowTracker,
  type SplitSnapshot,
} from './snapshot-rows.ts';

/**
 * The row mechanism on its own (issue 36 item 5): what a split writes, applied the way each SQL
 * store applies it, read back and joined, is the snapshot that was split, whatever the sequence
 * of changes. The two row semantics modelled are the stores' own: SQLite's log appends (a trim
 * deletes a member's rows from an index on; the latest row of an index wins when read back, in
 * write order) and PostgreSQL's `run_rows` upserts by (member, index) after deleting a trimmed
 * member's other rows from the index on.
 */

type Row = { member: string; index: number; value: string };

/** A store's rows of one run, as SQLite's log keeps them (write order, trims delete). */
class LogRows {
  rows: Row[] = [];
  apply(members: MemberRows[]): number {
    for (const { member, trimFrom } of members) {
      if (trimFrom !== undefined)
        this.rows = this.rows.filter((r) => r.member !== member || r.index < trimFrom);
    }
    let written = 0;
    for (const { member, rows } of members) {
      for (const [index, value] of rows) {
        this.rows.push({ member, index, value: JSON.stringify(value) });
        written++;
      }
    }
    return written;
  }
  read(): Row[] {
    return this.rows;
  }
}

/** PostgreSQL's run_rows: a trim deletes the member's rows from the index on but those upserted. */
class UpsertRows {
  rows = new Map<string, Row>();
  apply(members: MemberRows[]): number {
    const written = new Set<string>();
    for (const { member, rows } of members) for (const [index] of rows) written.add(`${member}/${index}`);
    for (const { member, trimFrom } of members) {
      if (trimFrom === undefined) continue;
      for (const [key, row] of this.rows)
        if (row.member === member && row.index >= trimFrom && !written.has(key)) this.rows.delete(key);
    }
    for (const { member, rows } of members) {
      for (const [index, value] of rows)
        this.rows.set(`${member}/${index}`, { member, index, value: JSON.stringify(value) });
    }
    return written.size;
  }
  read(): Row[] {
    return [...this.rows.values()].sort((a, b) => a.member.localeCompare(b.member) || a.index - b.index);
  }
}

function loaded(split: SplitSnapshot, store: LogRows | UpsertRows): unknown {
  const head = JSON.parse(JSON.stringify(split.head));
  if (!hasMarkers(head)) return head;
  const rows = store.read().map((row) => ({ runId: 'r', ...row, value: JSON.parse(row.value) }));
  return joinSnapshot(head, groupRows(rows).get('r'));
}

type Result = { toolCallId: string; result: number } | null;
interface Batch {
  pending: { toolCallId: string; input: { n: number } }[];
  results: Result[];
  lastResults: { toolCallId: string; result: number }[];
  newResults: { toolCallId: string; result: number }[];
}
const call = (n: number) => ({ toolCallId: `c${n}`, input: { n } });
const result = (n: number, at: number) => ({ toolCallId: `c${n}`, result: at });
const snapshotOf = (messages: unknown[], batch: Batch) => ({
  status: 'active',
  value: 'executing',
  context: { messages, hints: [], batch: { ...batch, newHints: [] } },
  children: {},
});

/** One change to a run's batch between two saves. */
type Change =
  | { kind: 'newBatch'; size: number }
  | { kind: 'fill'; slots: number[] }
  | { kind: 'unfill'; slot: number }
  | { kind: 'rebuild' }
  | { kind: 'shrink'; to: number }
  | { kind: 'fold' }
  | { kind: 'reviewed' }
  | { kind: 'same' }
  | { kind: 'reload' };

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('newBatch' as const), size: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ kind: fc.constant('fill' as const), slots: fc.array(fc.nat(15), { maxLength: 6 }) }),
  fc.record({ kind: fc.constant('unfill' as const), slot: fc.nat(15) }),
  fc.constant({ kind: 'rebuild' as const }),
  fc.record({ kind: fc.constant('shrink' as const), to: fc.nat(12) }),
  fc.constant({ kind: 'fold' as const }),
  fc.constant({ kind: 'reviewed' as const }),
  fc.constant({ kind: 'same' as const }),
  fc.constant({ kind: 'reload' as const }),
);

const EMPTY: never[] = [];

/** The batch after `c`: a new object wherever it changed, the same objects elsewhere (as XState's assigns). */
function applied(batch: Batch, c: Change, step: number): Batch {
  switch (c.kind) {
    case 'newBatch': {
      const pending = Array.from({ length: c.size }, (_, i) => call(step * 100 + i));
      return { ...batch, pending, results: pending.map(() => null), newResults: EMPTY };
    }
    case 'fill': {
      if (batch.results.length === 0) return batch;
      const results = batch.results.slice();
      for (const slot of c.slots) results[slot % results.length] = result(slot, step);
      return { ...batch, results };
    }
    case 'unfill': {
      if (batch.results.length === 0) return batch;
      const results = batch.results.slice();
      results[c.slot % results.length] = null;
      return { ...batch, results };
    }
    case 'rebuild':
      return structuredClone(batch);
    case 'shrink':
      return {
        ...batch,
        pending: batch.pending.slice(0, c.to),
        results: batch.results.slice(0, c.to),
        lastResults: batch.lastResults.slice(0, c.to),
      };
    case 'fold': {
      const done = batch.results.map((r, i) => r ?? result(i, step));
      return { pending: EMPTY, results: EMPTY, lastResults: done, newResults: done };
    }
    case 'reviewed':
      return { ...batch, newResults: EMPTY };
    default:
      return batch;
  }
}

describe('batch members kept as rows (snapshot-rows.ts)', () => {
  it.each([
    ['SQLite log', () => new LogRows()],
    ['PostgreSQL upsert', () => new UpsertRows()],
  ])('round-trips any sequence of slot updates, rewrites, shrinks, folds and reloads (%s)', (_, rowsOf) => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 30 }), (changes) => {
        const tracker = new RowTracker();
        const store = rowsOf();
        let batch: Batch = { pending: EMPTY, results: EMPTY, lastResults: EMPTY, newResults: EMPTY };
        let messages: unknown[] = [{ role: 'user', content: 'go' }];
        let snapshot = snapshotOf(messages, batch);
        let split = tracker.split('r', snapshot, undefined);
        store.apply(split.rows);
        tracker.written('r', snapshot, 1, false);
        let version = 1;
        changes.forEach((c, step) => {
          if (c.kind === 'reload') {
            // Another store wrote the version before (or this one forgot the run): it rewrites.
            tracker.forget('r');
            return;
          }
          batch = applied(batch, c, step);
          if (c.kind === 'fold') messages = [...messages, { role: 'tool', step }];
          snapshot = snapshotOf(messages, batch);
          split = tracker.split('r', snapshot, version);
          store.apply(split.rows);
          version++;
          tracker.written('r', snapshot, version, false);
          expect(loaded(split, store)).toEqual(snapshot);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('writes the slots that changed and nothing of the calls while a batch runs, whatever its size', () => {
    for (const size of [100, 2_000]) {
      const tracker = new RowTracker();
      const pending = Array.from({ length: size }, (_, i) => call(i));
      let results: Result[] = pending.map(() => null);
      const snapshot = () => snapshotOf([], { pending, results, lastResults: EMPTY, newResults: EMPTY });
      const first = tracker.split('r', snapshot(), undefined);
      // The calls: one row, once. The results, all null yet: none.
      expect(first.rows.map((m) => [m.member, m.rows.length])).toEqual([
        ['messages', 0],
        ['hints', 0],
        ['pending', 1],
        ['results', 0],
      ]);
      tracker.written('r', snapshot(), 1, false);
      const headBytes = JSON.stringify(first.head).length;
      const written: number[] = [];
      // Results land out of order, a few per save, as parallel calls finish.
      for (let save = 0; save < 20; save++) {
        results = results.slice();
        for (const slot of [save * 3, size - 1 - save * 5, size >> 1]) results[slot] = result(slot, save);
        const split = tracker.split('r', snapshot(), save + 1);
        tracker.written('r', snapshot(), save + 2, false);
        written.push(split.rows.reduce((sum, m) => sum + m.rows.length, 0));
        expect(split.rows.every((m) => m.trimFrom === undefined)).toBe(true);
        expect(JSON.stringify(split.head).length).toBeLessThanOrEqual(headBytes);
      }
      // Three slots a save, whatever the batch's size (the middle one replaced at every save).
      expect(written).toEqual(Array.from({ length: 20 }, () => 3));
    }
  });

  it('stores the results handed on once when the policies are handed the very same list, and loads both as one array', () => {
    const tracker = new RowTracker();
    const done = [result(0, 1), result(1, 1)];
    const folded = snapshotOf([], { pending: EMPTY, results: EMPTY, lastResults: done, newResults: done });
    const split = tracker.split('r', folded, undefined);
    expect(split.rows.filter((m) => m.rows.length > 0).map((m) => m.member)).toEqual(['lastResults']);
    const store = new LogRows();
    store.apply(split.rows);
    const back = loaded(split, store) as { context: { batch: Batch } };
    expect(back.context.batch.newResults).toEqual(done);
    expect(back.context.batch.newResults).toBe(back.context.batch.lastResults);
    // Reviewed, then a distinct list: written as its own row.
    tracker.written('r', folded, 1, false);
    const other = [result(5, 2)];
    const next = tracker.split(
      'r',
      snapshotOf([], { pending: EMPTY, results: EMPTY, lastResults: done, newResults: other }),
      1,
    );
    expect(next.rows.find((m) => m.member === 'newResults')).toEqual({
      member: 'newResults',
      trimFrom: undefined,
      rows: [[0, other]],
    });
  });

  it('loads a snapshot stored before batches were kept apart (the batch in its head) as it is', () => {
    const batch = { pending: [call(1)], results: [null], lastResults: [], newResults: [], newHints: [] };
    const head = {
      value: 'executing',
      context: { messages: { '$toolwarden.rows': 1 }, hints: { '$toolwarden.rows': 0 }, batch },
      '$toolwarden.rows': 1,
    };
    const rows = groupRows([
      { runId: 'r', member: 'messages', index: 0, value: { role: 'user', content: 'go' } },
    ]);
    expect(joinSnapshot(head, rows.get('r'))).toEqual({
      value: 'executing',
      context: { messages: [{ role: 'user', content: 'go' }], hints: [], batch },
    });
  });

  it('reports a batch whose rows do not match its marker instead of loading another batch', () => {
    const head = (batch: Record<string, unknown>) => ({
      context: { messages: { '$toolwarden.rows': 0 }, hints: { '$toolwarden.rows': 0 }, batch },
      '$toolwarden.rows': 1,
    });
    const rows = (...list: { member: string; index: number; value: unknown }[]) =>
      groupRows(list.map((row) => ({ runId: 'r', ...row }))).get('r');
    expect(() => joinSnapshot(head({ pending: { '$toolwarden.rows': 2 } }), rows())).toThrow(
      /"pending" should have 2 entries in its row, the store has 0 rows/,
    );
    expect(() =>
      joinSnapshot(
        head({ pending: { '$toolwarden.rows': 2 } }),
        rows({ member: 'pending', index: 0, value: [1] }),
      ),
    ).toThrow(/"pending" should have 2 entries in its row, the store has 1/);
    expect(() =>
      joinSnapshot(
        head({ results: { '$toolwarden.rows': 2 } }),
        rows({ member: 'results', index: 2, value: 1 }),
      ),
    ).toThrow(/"results" should have 2 rows, the store has a row at index 2/);
    // A slot without a row is a call not done yet.
    expect(
      joinSnapshot(
        head({ results: { '$toolwarden.rows': 3 } }),
        rows({ member: 'results', index: 1, value: 'r1' }),
      ),
    ).toEqual({ context: { messages: [], hints: [], batch: { results: [null, 'r1', null] } } });
  });
});
