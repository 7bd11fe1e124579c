// A Temporal worker in its own process (issue 14: a worker SIGKILLed mid-tool-call, restarted).
//   node --import tsx test/support/temporal-worker-child.ts '{"taskQueue":"q","dir":"/tmp/x","freeze":true}'
// Its tool books into <dir>/ledger.jsonl once per toolCallId (the idempotency key) and logs every
// attempt to <dir>/attempts.jsonl; with `freeze`, the first attempt books, prints IN_TOOL and
// never returns (the test kills the process there). The planner decides from the transcript
// alone, so any worker can take the run over. With `serviceName` and `otlpEndpoint`, its spans go
// to that OTLP receiver (Jaeger) under that service name, exported as they end (the test sets
// OTEL_BSP_SCHEDULE_DELAY) so a SIGKILL loses only spans still open.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import type { Planner } from '../../run/planner.ts';
import { startTelemetry } from '../../telemetry/setup.ts';
import { createTemporalWorker } from '../../temporal/index.ts';
import { defineTool } from '../../tools/define-tool.ts';

const config = JSON.parse(process.argv[2]!) as {
  taskQueue: string;
  dir: string;
  freeze?: boolean;
  address?: string;
  serviceName?: string;
  otlpEndpoint?: string;
};
if (config.serviceName && config.otlpEndpoint) {
  startTelemetry({ serviceName: config.serviceName, otlpEndpoint: config.otlpEndpoint });
}
const ledger = join(config.dir, 'ledger.jsonl');
const attempts = join(config.dir, 'attempts.jsonl');
const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

const book = defineTool({
  id: 'ledger.book',
  description: 'Books an amount (idempotent by toolCallId)',
  input: z.object({ amount: z.number().int() }),
  timeoutMs: 2_000,
  execute: async ({ amount }, { meta }) => {
    appendFileSync(attempts, `${JSON.stringify({ toolCallId: meta.toolCallId, pid: process.pid })}\n`);
    if (!lines(ledger).some((entry) => entry.toolCallId === meta.toolCallId)) {
      appendFileSync(ledger, `${JSON.stringify({ toolCallId: meta.toolCallId, amount })}\n`);
    }
    if (config.freeze) {
      process.stdout.write('IN_TOOL\n');
      await new Promise(() => {});
    }
    return { booked: amount };
  },
});
const planner: Planner = {
  planStart: async () => ({ toolCalls: [{ name: 'ledger.book', input: { amount: 40 } }] }),
  planResume: async (input) => ({
    finalResponse: { text: `booked ${input.toolResults.length > 0 ? 40 : 0}` },
  }),
};
const connection = await NativeConnection.connect({ address: config.address ?? '127.0.0.1:7233' });
const worker = await createTemporalWorker({
  connection,
  taskQueue: config.taskQueue,
  tools: [book],
  planner,
});
process.stdout.write('READY\n');
await worker.run();
