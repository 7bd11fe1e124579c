/**
 * The approval desk's runs (issue 35 item 6; test/inspector-desk.e2e.test.ts): refunds that wait
 * for a confirmation, on a SQLite file store. As a script, a worker process starts `count` of them,
 * prints `WAITING <count>` once the store holds every one as awaiting, and stays up until it is
 * killed:
 *
 *     node --import tsx test/support/approval-desk.ts '{"db":"/tmp/x/runs.db","count":50}'
 *
 * @module
 */

import { writeSync } from 'node:fs';
import type { Planner } from '../../run/planner.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { refundTool } from './refund-tool.ts';

/** The desk's run ids: `refund-00` … */
export const deskRunId = (index: number) => `refund-${String(index).padStart(2, '0')}`;

/** Each run asks to refund its order (a confirmation), then says it is done. */
export const refundPlanner: Planner = {
  async planStart(input) {
    const orderId = String(input.runId).replace('refund-', 'A-');
    return { toolCalls: [{ name: 'payments.refund', input: { orderId, amountEur: 40 } }] };
  },
  async planResume() {
    return { finalResponse: { text: 'Refunded.' } };
  },
};

/** The runtime options both processes share: the refund tool, the planner, the file store. */
export function deskRuntime(db: string) {
  const refund = refundTool();
  return {
    options: {
      agent: { id: 'payments' },
      planner: refundPlanner,
      tools: [refund.tool],
      store: sqliteStore({ path: db }),
      durable: { owner: 'desk', leaseMs: 1_000 },
    },
    refunded: refund.refunded,
  };
}

if (process.argv[1] === import.meta.filename) {
  const { db, count } = JSON.parse(process.argv[2]!) as { db: string; count: number };
  const { createRuntime } = await import('../../runtime/create-runtime.ts');
  const runtime = createRuntime({ ...deskRuntime(db).options, telemetry: false });
  const runs = Array.from({ length: count }, (_, i) =>
    runtime.start({ runId: deskRunId(i), messages: [{ role: 'user', content: `Refund order ${i}` }] }),
  );
  for (;;) {
    const stored = await runtime.list({ awaiting: 'confirmation' });
    if (stored.length === count && runs.every((run) => run.status === 'awaiting')) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  writeSync(1, `WAITING ${count}\n`);
  setInterval(() => {}, 60_000); // stays up until killed
}
