// A Temporal worker in its own process (issue 14: a worker SIGKILLed mid-tool-call, restarted).
//   node --import tsx test/support/temporal-worker-child.ts '{"taskQueue":"q","dir":"/tmp/x","freeze":true}'
// Its tool books into <dir>/ledger.jsonl once per toolCallId (the idempotency key) and logs every
// attempt to <dir>/attempts.jsonl; with `freeze`, the first attempt books, prints IN_TOOL and
// never returns (the test kills the process there). The planner decides from the transcript
// alone, so any worker can take the run over. With `serviceName` and `otlpEndpoint`, its spans go
// to that OTLP receiver (Jaeger) under that service name, exported as they end (the test sets
// OTEL_BSP_SCHEDULE_DELAY) so a SIGKILL loses only spans still open.
// With `freezeIn` ('plan' or 'tool') and `amounts`, the planner books each amount in turn, one call
// a turn; the first worker of any to reach the second planner turn (`plan`) or the first tool call
// (`tool`) claims <dir>/frozen, prints `FROZEN <pid>` and hangs there, heartbeating (issue 26: the
// test kills that worker and another one finishes the run).
import { appendFileSync, closeSync, existsSync, openSync, readFileSync } from 'node:fs';
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
  freezeIn?: 'plan' | 'tool';
  amounts?: number[];
  address?: string;
  /** A prebuilt workflow bundle (`writeWorkflowBundle`): no webpack at start. */
  bundlePath?: string;
  serviceName?: string;
  otlpEndpoint?: string;
  /** The tool is not declared idempotent: an effect that must not happen twice. */
  once?: boolean;
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

/** Whether this worker is the one to freeze: the first to claim the marker file. */
const claimFreeze = (where: 'plan' | 'tool') => {
  if (config.freezeIn !== where) return false;
  try {
    closeSync(openSync(join(config.dir, 'frozen'), 'wx'));
  } catch {
    return false; // another worker froze already
  }
  process.stdout.write(`FROZEN ${process.pid}\n`);
  return true;
};
const hang = () => new Promise<never>(() => {});

const book = defineTool({
  id: 'ledger.book',
  // Safe to run again after a crash under the same key (docs/durability.md §Effects), unless
  // `once`: then a retried call is held in doubt (awaiting.inDoubt) instead.
  ...(config.once ? {} : { idempotent: true }),
  description: 'Books an amount (idempotent by toolCallId)',
  input: z.object({ amount: z.number().int() }),
  // With `freezeIn`, long enough that the test's kill always comes before the call's own timeout
  // (a `timeout` result would let the run go on without the retry under test).
  timeoutMs: config.freezeIn ? 60_000 : 2_000,
  execute: async ({ amount }, { meta }) => {
    appendFileSync(attempts, `${JSON.stringify({ toolCallId: meta.toolCallId, pid: process.pid })}\n`);
    if (!lines(ledger).some((entry) => entry.toolCallId === meta.toolCallId)) {
      appendFileSync(ledger, `${JSON.stringify({ toolCallId: meta.toolCallId, amount })}\n`);
    }
    if (config.freeze) {
      process.stdout.write('IN_TOOL\n');
      await hang();
    }
    if (claimFreeze('tool')) await hang();
    return { booked: amount };
  },
});
const amounts = config.amounts;
const planner: Planner = amounts
  ? {
      // One call a turn, decided from the transcript alone: any worker can take any turn.
      planStart: async () => ({ toolCalls: [{ name: 'ledger.book', input: { amount: amounts[0] } }] }),
      planResume: async (input) => {
        const done = input.messages.filter((message) => message.role === 'tool').length;
        if (done === 1 && claimFreeze('plan')) await hang();
        return done < amounts.length
          ? { toolCalls: [{ name: 'ledger.book', input: { amount: amounts[done] } }] }
          : { finalResponse: { text: `booked ${done} calls` } };
      },
    }
  : {
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
  ...(config.bundlePath ? { worker: { workflowBundle: { codePath: config.bundlePath } } } : {}),
});
process.stdout.write('READY\n');
await worker.run();
