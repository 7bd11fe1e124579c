// A client process that starts runs (issue 26 item 4: ids from two processes at once must not collide).
//   node --import tsx test/support/temporal-start-child.ts '{"taskQueue":"q","count":100,"at":1700000000000}'
// Waits until `at` (epoch ms) so two such processes start together, starts `count` runs at once
// with default run ids, and prints one JSON line: { ids, errors, late } (errors: each failed start's
// name; late: ms past `at` it began, when it was not ready in time).
import { Client, Connection } from '@temporalio/client';
import { temporalRuntime } from '../../temporal/index.ts';

const config = JSON.parse(process.argv[2]!) as {
  taskQueue: string;
  count: number;
  at: number;
  address?: string;
};
const client = new Client({
  connection: await Connection.connect({ address: config.address ?? '127.0.0.1:7233' }),
});
const runtime = temporalRuntime({ client, taskQueue: config.taskQueue, agent: { id: 'ids' } });
await new Promise((resolve) => setTimeout(resolve, Math.max(0, config.at - Date.now() - 50)));
// The last milliseconds spun, so both processes start within the same millisecond.
while (Date.now() < config.at) {
  // spin
}
const startedAt = Date.now();
const settled = await Promise.allSettled(
  Array.from({ length: config.count }, () => runtime.start({ messages: [{ role: 'user', content: 'hi' }] })),
);
const ids = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.runId] : []));
const errors = settled.flatMap((outcome) =>
  outcome.status === 'rejected' ? [(outcome.reason as Error)?.name ?? String(outcome.reason)] : [],
);
process.stdout.write(`${JSON.stringify({ ids, errors, late: startedAt - config.at })}\n`);
await client.connection.close();
