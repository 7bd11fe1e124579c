/**
 * The Temporal example's client (docs/temporal.md): starts a run on the worker's task queue,
 * follows its events and prints the outcome. Any process with a Temporal client can do this.
 *
 *     node --import tsx examples/temporal/client.ts
 *
 * @module
 */
import { Client, Connection } from '@temporalio/client';
import { temporalRuntime } from 'toolwarden/temporal';

const client = new Client({
  connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' }),
});
const runtime = temporalRuntime({
  client,
  taskQueue: 'toolwarden-example',
  agent: { id: 'bookkeeper' },
  tools: [{ id: 'ledger.book', timeoutMs: 10_000 }],
});
const run = await runtime.start({ messages: [{ role: 'user', content: 'Book 100 in three parts' }] });
console.log(`run ${run.runId} started`);
// Every event of the run, in order, until the terminal one.
await new Promise<void>((resolve, reject) =>
  run.events$.subscribe({
    next: (event) => {
      const detail =
        event.type === 'tool_result'
          ? ` ${event.result.name} ${event.result.error ? 'failed' : 'ok'}`
          : event.type === 'state_changed'
            ? ` ${event.state}`
            : '';
      console.log(`  ${event.type}${detail}`);
    },
    complete: resolve,
    error: reject,
  }),
);
const outcome = await run.result();
console.log(`${outcome.status}: ${outcome.finalResponse?.text ?? outcome.error?.message}`);
await client.connection.close();
