import { describe, expect, it } from 'vitest';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { callsInDoubt } from './in-doubt-outcomes.ts';
import { awaitsApproval, awaitsExternalCalls } from './run-actions.ts';
import type { PendingCall } from './run-context.ts';
import { firstOpenResult, resultsWith } from './run-updates.ts';

/** An array whose element reads are counted (`reads.count`). */
function counted<T>(items: T[], reads: { count: number }): T[] {
  return new Proxy(items, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.count++;
      return Reflect.get(target, key, receiver);
    },
  });
}

const call = (n: number, status: PendingCall['status'] = 'admitted'): PendingCall => ({
  toolCallId: `r:t1:c${n}`,
  name: 'util.count',
  input: { n },
  attempt: 1,
  status,
});

const result = (n: number): ToolResultJSON => ({
  name: 'util.count',
  toolCallId: `r:t1:c${n}`,
  executed: true,
  result: { n },
});

/** A batch of `size` calls whose first `done` have results, read through counting proxies. */
function runningBatch(size: number, done: number, status: PendingCall['status'] = 'admitted') {
  const reads = { count: 0 };
  let results: (ToolResultJSON | null)[] = Array.from({ length: size }, () => null);
  // Built as the machine builds them, one result at a time (the first open index carried over).
  for (let n = 0; n < done; n++) results = resultsWith(results, n, result(n));
  const pending = Array.from({ length: size }, (_, n) => call(n, status));
  return { batch: { pending: counted(pending, reads), results: counted(results, reads) }, reads };
}

describe("executing's guards after each tool result (issue 36 item 5)", () => {
  it('answer a running batch without scanning it: O(1) reads, not O(calls), after every result', () => {
    for (const done of [1, 500, 999]) {
      const { batch, reads } = runningBatch(1_000, done);
      // Warm: a batch's `pending` is scanned once for calls waiting for approval, and the first
      // open result found once per results array (the machine's arrays carry it over, resultsWith).
      awaitsApproval(batch);
      firstOpenResult(batch.results);
      reads.count = 0;

      expect(callsInDoubt(batch)).toBe(false);
      expect(awaitsApproval(batch)).toBe(false);
      expect(awaitsExternalCalls(batch)).toBe(false);

      expect(reads.count).toBeLessThanOrEqual(6);
    }
  });

  it('give the same answers as before for batches that wait for approval, the app, or a call in doubt', () => {
    const held = runningBatch(40, 10);
    const mixed = held.batch.pending.map(
      (c, n): PendingCall => (n === 30 ? call(30, 'confirm') : { ...c, runAhead: true as const }),
    );
    // Calls 10–29 run ahead of call 30's approval and have no result yet: not yet.
    expect(awaitsApproval({ pending: mixed, results: held.batch.results })).toBe(false);
    // Without run-ahead calls they wait with it.
    mixed.forEach((c, n) => {
      if (n !== 30) mixed[n] = { ...c, runAhead: undefined } as PendingCall;
    });
    expect(awaitsApproval({ pending: [...mixed], results: held.batch.results })).toBe(true);

    const waiting = runningBatch(40, 39, 'admitted');
    const pending = [...waiting.batch.pending];
    pending[39] = call(39, 'confirm');
    expect(awaitsApproval({ pending, results: waiting.batch.results })).toBe(true);

    const doubt = runningBatch(40, 40);
    const results = [...doubt.batch.results];
    results[3] = { ...result(3), inDoubt: { cause: 'restored' } } as ToolResultJSON;
    expect(callsInDoubt({ pending: doubt.batch.pending, results })).toBe(true);
    expect(callsInDoubt(doubt.batch)).toBe(false);

    // An external call open, the batch's own done: in doubt is read over every result.
    const external = runningBatch(40, 39);
    const withExternal = [...external.batch.pending];
    withExternal[39] = { ...call(39), external: true };
    const resultsInDoubt = [...external.batch.results];
    resultsInDoubt[0] = { ...result(0), inDoubt: { cause: 'restored' } } as ToolResultJSON;
    expect(callsInDoubt({ pending: withExternal, results: resultsInDoubt })).toBe(true);
    expect(awaitsExternalCalls({ pending: withExternal, results: external.batch.results })).toBe(true);
  });
});
