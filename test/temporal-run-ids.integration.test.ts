import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Planner } from '../run/planner.ts';
import { createTemporalWorker, TemporalRunIdInUseError, temporalRuntime } from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { connectTemporal, probeTemporal, TEMPORAL_ADDRESS } from './support/temporal-server.ts';

/**
 * Issue 26 item 4 on the real dev server: default run ids are random UUIDs, so two client
 * processes starting 100 runs each at the same moment collide 0 times (ids made of the clock and
 * a counter collided in 14 of 20 pairs); and a run id names one run: starting a run under an id a
 * workflow already has (closed or running) is refused with TemporalRunIdInUseError, where before it
 * started a second run whose calls got the first run's toolCallIds, so a tool deduplicating by
 * them skipped the second run's effect without a word. Required under CI=true.
 */
const SUITE = 'Temporal run ids (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const START_CHILD = join(import.meta.dirname, 'support', 'temporal-start-child.ts');
const run = promisify(execFile);

describe.skipIf(!available && !required)(SUITE, () => {
  let temporal: Awaited<ReturnType<typeof connectTemporal>>;
  beforeAll(async () => {
    temporal = await connectTemporal(available);
  });
  afterAll(() => temporal?.close());

  it('two client processes starting 100 runs each at once: 0 id collisions', async () => {
    const taskQueue = `toolwarden-ids-${randomUUID().slice(0, 8)}`; // no worker: the runs only start
    const at = Date.now() + 8_000; // both processes loaded and connected by then
    const config = JSON.stringify({ taskQueue, count: 100, at, address: TEMPORAL_ADDRESS });
    const outputs = await Promise.all(
      [0, 1].map(() =>
        run(process.execPath, ['--import', 'tsx', START_CHILD, config], { cwd: process.cwd() }),
      ),
    );
    const results = outputs.map(
      ({ stdout }) => JSON.parse(stdout.trim()) as { ids: string[]; errors: string[]; late: number },
    );
    const ids = results.flatMap((result) => result.ids);
    const errors = results.flatMap((result) => result.errors);
    try {
      console.log(
        `[issue 26] 2 processes × 100 starts: ${ids.length} runs, ${new Set(ids).size} distinct ids, ${errors.length} failed starts (began ${results.map((r) => r.late).join(' and ')} ms past the agreed moment)`,
      );
      expect(errors).toEqual([]);
      expect(ids).toHaveLength(200);
      expect(new Set(ids).size).toBe(200);
      for (const id of ids)
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      await Promise.all(
        [...new Set(ids)].map((id) =>
          temporal.client.workflow
            .getHandle(id)
            .terminate('test cleanup')
            .catch(() => {}),
        ),
      );
    }
  }, 60_000);

  it('a run id a workflow already has is refused, closed or running; the first run’s effect stands', async () => {
    const taskQueue = `toolwarden-reuse-${randomUUID().slice(0, 8)}`;
    const ledger = new Map<string, number>();
    let skipped = 0;
    const book = defineTool({
      id: 'ledger.book',
      description: 'Books an amount once per toolCallId',
      input: z.object({ amount: z.number() }),
      execute: async ({ amount }, { meta }) => {
        if (ledger.has(meta.toolCallId)) skipped += 1;
        else ledger.set(meta.toolCallId, amount);
        return { booked: amount };
      },
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const planner: Planner = {
      planStart: async (input) => {
        if (input.messages.some((m) => m.role === 'user' && m.content === 'hold')) await held;
        return { toolCalls: [{ name: 'ledger.book', input: { amount: 5 } }] };
      },
      planResume: async () => ({ finalResponse: { text: 'booked' } }),
    };
    const worker = await createTemporalWorker({
      connection: temporal.connection,
      taskQueue,
      tools: [book],
      planner,
    });
    const running = worker.run();
    try {
      const runtime = temporalRuntime({ client: temporal.client, taskQueue, agent: { id: 'reuse' } });
      const runId = `order-${randomUUID()}`; // an app's own id, say its order number
      const first = await runtime.start({ runId, messages: [{ role: 'user', content: 'book 5' }] });
      expect((await first.result()).status).toBe('completed');
      // Closed: refused, with the reason.
      const again = runtime.start({ runId, messages: [{ role: 'user', content: 'book 5' }] });
      await expect(again).rejects.toBeInstanceOf(TemporalRunIdInUseError);
      await expect(again).rejects.toThrow(/is taken/);
      // Running: refused too.
      const busyId = `order-${randomUUID()}`;
      const busy = await runtime.start({ runId: busyId, messages: [{ role: 'user', content: 'hold' }] });
      await expect(
        runtime.start({ runId: busyId, messages: [{ role: 'user', content: 'book 5' }] }),
      ).rejects.toBeInstanceOf(TemporalRunIdInUseError);
      release();
      expect((await busy.result()).status).toBe('completed');
      // No call ran under a key already used: nothing was skipped silently.
      expect(skipped).toBe(0);
      expect([...ledger.keys()].sort()).toEqual([`${busyId}:t1:c1`, `${runId}:t1:c1`].sort());
    } finally {
      worker.shutdown();
      await running;
    }
  }, 90_000);
});
