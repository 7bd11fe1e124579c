/**
 * The Temporal example's worker (docs/temporal.md): the tools and the planner live here; runs are
 * hosted by Temporal. Kill it (even `kill -9`) in the middle of a run and start it again: the run
 * goes on where it was, and the booking happens once (the ledger is keyed by toolCallId).
 *
 *     node --import tsx examples/temporal/worker.ts
 *
 * @module
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { defineTool, type Planner } from 'toolwarden';
import { createTemporalWorker } from 'toolwarden/temporal';
import { z } from 'zod';

const ledger = process.env.TOOLWARDEN_LEDGER ?? join(tmpdir(), 'toolwarden-temporal-ledger.jsonl');
const booked = (id: string) =>
  existsSync(ledger) &&
  readFileSync(ledger, 'utf8')
    .split('\n')
    .some((line) => line.includes(`"${id}"`));

const book = defineTool({
  id: 'ledger.book',
  description: 'Books an amount on the ledger',
  input: z.object({ amount: z.number().int().positive() }),
  examples: [{ amount: 25 }],
  timeoutMs: 10_000,
  execute: async ({ amount }, { meta }) => {
    // The idempotency key: a call run again after a crash books nothing twice.
    if (!booked(meta.toolCallId))
      appendFileSync(ledger, `${JSON.stringify({ toolCallId: meta.toolCallId, amount })}\n`);
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // time to kill the worker here
    return { booked: amount };
  },
});

/** Books 25, 50 and 25, one per turn, deciding from the transcript alone (any worker can resume). */
const planner: Planner = {
  planStart: async () => ({ toolCalls: [{ name: 'ledger.book', input: { amount: 25 } }] }),
  planResume: async (input) => {
    const done = input.messages.filter((message) => message.role === 'tool').length;
    const amounts = [25, 50, 25];
    return done < amounts.length
      ? { toolCalls: [{ name: 'ledger.book', input: { amount: amounts[done] } }] }
      : { finalResponse: { text: `Booked ${amounts.reduce((a, b) => a + b)} in ${amounts.length} calls.` } };
  },
};

const worker = await createTemporalWorker({
  connection: await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' }),
  taskQueue: 'toolwarden-example',
  tools: [book],
  planner,
});
console.log(`worker ready (ledger: ${ledger})`);
await worker.run();
