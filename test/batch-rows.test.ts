import { expect, it, vi } from 'vitest';
import type { RunStore } from '../stores/run-store.ts';
import {
  allAnswers,
  answersOf,
  batchRowKinds,
  CALLS,
  contextOf,
  describeOnSqlStores,
  finishOnNewRuntime,
  gatedLookup,
  type Probe,
} from './support/batch-rows.ts';
import { flakyStore } from './support/durable-stores.ts';

/**
 * A batch's calls and results kept as rows in the SQL stores (issue 36 item 5, docs/durability.md
 * §Appended rows): a run executing a 2,000-call batch writes per save only the results that landed
 * since the save before, and a run taken over mid-batch restores with exactly the results done
 * so far, running only the others. The same after SIGKILL: test/batch-rows-kill.test.ts.
 */

const kinds = await batchRowKinds('batch rows (PostgreSQL)');

describeOnSqlStores(kinds, (scope) => {
  it('writes per save only the results that landed since the save before: no rows for the calls, one per result, a head of constant size', {
    timeout: 60_000,
  }, async () => {
    const fixture = await scope.fixture();
    const probes: (Probe & { done: number })[] = [];
    const inner = fixture.open();
    // Each save of the executing batch is followed by a look at what the database holds.
    const store: RunStore = {
      ...inner,
      async save(runId, update) {
        const saved = await inner.save(runId, update);
        const context = contextOf(update.snapshot);
        if (context.batch.pending.length > 0) {
          const done = context.batch.results.filter((result) => result !== null).length;
          probes.push({ ...(await fixture.probe(runId)), done });
        }
        return saved;
      },
    };
    const lookup = gatedLookup();
    const runtime = scope.runtime({ tools: [lookup.tool], store });
    const run = runtime.start({
      runId: 'run-rows',
      messages: [{ role: 'user', content: 'Look them all up' }],
    });
    // Results land out of order, a few between two saves.
    await lookup.finishRandom(CALLS, 36, async (i) => {
      if (i % 97 === 0) await run.persisted();
    });
    expect((await run.result()).status).toBe('completed');

    expect(probes.length).toBeGreaterThan(10);
    for (const probe of probes) {
      // The calls: one row, written once; the results: one row per result done, none for the rest.
      expect(probe.rows.pending).toBe(1);
      expect(probe.rows.results ?? 0).toBe(probe.done);
    }
    const heads = probes.map((probe) => probe.headBytes);
    // The head holds markers, not the batch (before: ~170 bytes a call, ~110 a result).
    expect(Math.max(...heads)).toBeLessThan(4_000);
    expect(Math.max(...heads) - Math.min(...heads)).toBeLessThan(100);
    // Once folded, the batch's rows are gone but for the results handed on (one row).
    expect(await fixture.probe('run-rows')).toMatchObject({
      rows: { messages: 2 + CALLS + 1, lastResults: 1 },
    });
    expect((await fixture.probe('run-rows')).rows.results).toBeUndefined();
    expect((await fixture.probe('run-rows')).rows.pending).toBeUndefined();
  });

  it('restores a run taken over mid-batch with exactly the results done so far, and runs only the others', {
    timeout: 60_000,
  }, async () => {
    const fixture = await scope.fixture();
    const first = gatedLookup();
    const partitioned = flakyStore(fixture.open());
    const cutOff: unknown[] = [];
    const a = scope.runtime({
      tools: [first.tool],
      store: partitioned,
      durable: { owner: 'pod-a', leaseMs: 300 },
      onError: (error) => cutOff.push(error),
    });
    const run = a.start({
      runId: 'run-taken-over',
      messages: [{ role: 'user', content: 'Look them all up' }],
    });
    await first.finishRandom(733, 7, async (i) => {
      if (i % 50 === 0) await run.persisted();
    });
    const done = first.finished;
    const reader = fixture.open();
    await vi.waitFor(
      async () => {
        const stored = await reader.load('run-taken-over');
        expect(contextOf(stored?.snapshot).batch.results.filter((r) => r !== null)).toHaveLength(done.length);
      },
      { timeout: 20_000 },
    );
    // Process A is cut off from the database (a crash, as far as the store can tell); its lease lapses.
    partitioned.down = true;
    await new Promise((resolve) => setTimeout(resolve, 500));

    const stored = contextOf((await fixture.open().load('run-taken-over'))?.snapshot);
    expect(stored.batch.pending).toHaveLength(CALLS);
    const doneSet = new Set(done);
    stored.batch.results.forEach((result, i) => {
      const call = stored.batch.pending[i]!;
      expect(call.input.n).toBe(i);
      if (doneSet.has(i))
        expect(result).toMatchObject({
          toolCallId: call.toolCallId,
          result: { customer: `customer-${i}` },
        });
      else expect(result).toBeNull();
    });

    const finished = await finishOnNewRuntime(scope, fixture.open(), 'run-taken-over');
    expect(finished.status).toBe('completed');
    expect(finished.ran).toEqual(Array.from({ length: CALLS }, (_, n) => n).filter((n) => !doneSet.has(n)));
    expect(answersOf(finished.context)).toEqual(allAnswers());
    first.all(); // A's calls end; its writes are refused (it lost the run)
    // All A reported: the store it could not reach.
    for (const error of cutOff)
      expect(String(error)).toMatch(/flaky test store is unavailable|RunConflictError|lost/);
  });
});
