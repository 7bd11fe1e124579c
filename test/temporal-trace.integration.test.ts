/**
 * A run on Temporal is one trace (issue 14 item 3; docs/temporal.md §Telemetry): the client's
 * `invoke_agent` span is the root, each planner turn (`plan`) and tool call (`execute_tool`) in
 * the worker's activities is its child, and what a tool traces itself nests under its call's span.
 * Against the real Temporal dev server; required under CI=true.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createTemporalWorker, temporalRuntime } from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { probeTemporal, TEMPORAL_ADDRESS } from './support/temporal-server.ts';

const SUITE = 'runs on Temporal: one trace across client, workflow and activities';
const { available, required } = await probeTemporal(SUITE);

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

const book = defineTool({
  id: 'ledger.book',
  description: 'Books an amount',
  input: z.object({ amount: z.number().int().positive() }),
  timeoutMs: 5_000,
  execute: ({ amount }) =>
    // The tool's own span: it must nest under the call's execute_tool span.
    provider.getTracer('ledger').startActiveSpan('ledger.write', (span) => {
      span.end();
      return { booked: amount };
    }),
});

describe.skipIf(!available && !required)(SUITE, () => {
  const taskQueue = `toolwarden-trace-${Date.now()}`;
  let connection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const contextManager = new AsyncLocalStorageContextManager().enable();

  beforeAll(async () => {
    if (!available) throw new Error(`No Temporal server at ${TEMPORAL_ADDRESS} and CI=true`);
    context.setGlobalContextManager(contextManager);
    connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
    worker = await createTemporalWorker({
      connection,
      taskQueue,
      tools: [book],
      planner: scriptedPlanner([
        { toolCalls: [{ name: 'ledger.book', input: { amount: -1 } }] },
        { toolCalls: [{ name: 'ledger.book', input: { amount: 5 } }] },
        { finalResponse: { text: 'booked 5' } },
      ]),
      tracerProvider: provider,
    });
    running = worker.run();
  }, 60_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
    context.disable();
  });

  it('puts the client’s invoke_agent span, every plan and execute_tool span and a tool’s own span in one trace', async () => {
    const client = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
    const runtime = temporalRuntime({
      client,
      taskQueue,
      agent: { id: 'bookkeeper' },
      tools: [book],
      tracerProvider: provider,
    });
    // The app's own span around the start: the run's root is its child.
    const app = provider.getTracer('app').startSpan('POST /book');
    const run = await context.with(trace.setSpan(context.active(), app), () =>
      runtime.start({
        runId: `traced-${Date.now().toString(36)}`,
        messages: [{ role: 'user', content: 'book 5' }],
      }),
    );
    app.end();
    expect(await run.result()).toMatchObject({ status: 'completed' });

    const spans = exporter.getFinishedSpans();
    const named = (prefix: string) => spans.filter((span) => span.name.startsWith(prefix));
    const [root] = named('invoke_agent');
    expect(root?.name).toBe('invoke_agent bookkeeper');
    expect(root?.parentSpanContext?.spanId).toBe(app.spanContext().spanId);
    const traceId = app.spanContext().traceId;
    const plans = named('plan');
    const tools = named('execute_tool');
    const own = named('ledger.write');
    expect(plans).toHaveLength(3);
    // The refused call never reaches a tool activity (the boundary runs in validation).
    expect(tools).toHaveLength(1);
    expect(own).toHaveLength(1);
    for (const span of [...plans, ...tools, ...own]) expect(span.spanContext().traceId).toBe(traceId);
    for (const span of [...plans, ...tools])
      expect(span.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    expect(own[0]?.parentSpanContext?.spanId).toBe(tools[0]?.spanContext().spanId);
    expect(tools[0]?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'ledger.book',
      'toolwarden.run.id': run.runId,
    });
    expect(plans.map((span) => span.attributes['toolwarden.plan.kind'])).toEqual([
      'start',
      'resume',
      'resume',
    ]);
    await client.connection.close();
  }, 60_000);
});
