/**
 * Issue 35 item 6 (store and runtime side): one approval desk across runs and restarts.
 * `runtime.list({ awaiting })` lists the runs of the store waiting for a kind of answer, from
 * their snapshots, without restoring any; an answer by run id restores the run as needed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../run/planner.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { call, done, nextEvent, testRuntime } from './run-fixtures.ts';
import { refundTool } from './support/refund-tool.ts';

describe('runtime.list({ awaiting })', () => {
  it('lists 50 runs waiting for approval after a restart, without restoring them, and an approval restores one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-desk-'));
    const path = join(dir, 'runs.db');
    const stores = [sqliteStore({ path }), sqliteStore({ path }), sqliteStore({ path })] as const;
    const runtimes: { close(): Promise<void> }[] = [];
    try {
      const { tool } = refundTool();
      // Every run: one refund (held for approval), then an answer.
      const planner = () => ({
        planStart: async () => call('payments.refund', { orderId: 'A-17', amountEur: 50 }),
        planResume: async () => done(),
      });
      const first = testRuntime({ planner: planner(), tools: [tool], store: stores[0] });
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) {
        const run = first.start({ messages: [{ role: 'user', content: `Refund ${i}` }] });
        ids.push(run.runId);
      }
      // One run asking a question instead: not a confirmation.
      const other = testRuntime({
        planner: scriptedPlanner([
          { await: { clarification: { id: 'q', question: 'Which order?', missingFields: [] } } },
        ]),
        tools: [tool],
        store: stores[1],
      });
      runtimes.push(other);
      const asking = other.start({ messages: [{ role: 'user', content: 'Refund' }] });
      await nextEvent(asking, 'await_clarification');
      for (const id of ids) await first.get(id)!.persisted();
      await asking.persisted();
      await first.close();

      // "A new process": a new runtime on the same database.
      const { tool: tool2, refunded } = refundTool();
      const second = testRuntime({ planner: planner(), tools: [tool2], store: stores[2] });
      runtimes.push(second);
      const waiting = await second.list({ awaiting: 'confirmation' });
      expect(waiting.map((run) => run.runId).sort()).toEqual([...ids].sort());
      expect(waiting.every((run) => second.get(run.runId) === undefined)).toBe(true);
      expect(waiting[0]!.awaiting).toMatchObject({ kind: 'confirmation', toolCallIds: [expect.any(String)] });
      expect((await second.list({ awaiting: 'clarification' })).map((run) => run.runId)).toEqual([
        asking.runId,
      ]);
      expect(await second.list({ awaiting: true })).toHaveLength(51);
      expect(await second.list({ awaiting: ['confirmation', 'clarification'], limit: 3 })).toHaveLength(3);
      await expect(second.list({ awaiting: 'approval' as never })).rejects.toThrow(/not one of/);

      const one = waiting[0]!;
      const handle = await second.confirm(one.runId, {
        id: (one.awaiting as { id: string }).id,
        approved: true,
        by: 'ops@example.com',
      });
      expect((await handle.result()).status).toBe('completed');
      expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 50 }]);
      expect(await second.list({ awaiting: 'confirmation' })).toHaveLength(49);
    } finally {
      for (const runtime of runtimes) await runtime.close();
      for (const store of stores) await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
