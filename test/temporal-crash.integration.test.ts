import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { startTelemetry } from '../telemetry/setup.ts';
import { temporalRuntime } from '../temporal/index.ts';
import {
  JAEGER_OTLP_HTTP_URL,
  JAEGER_QUERY_URL,
  JAEGER_START_HINT,
  JaegerClient,
  jaegerAvailable,
  parentSpanId,
} from './support/jaeger.ts';
import { probeTemporal, TEMPORAL_ADDRESS } from './support/temporal-server.ts';

/**
 * A worker SIGKILLed in the middle of a tool call (issue 14, docs/temporal.md §Workflow): a second
 * worker process takes the run over once the activity's start-to-close timeout passes, the tool
 * runs again with the same toolCallId, the ledger keyed by it books once, and the run completes —
 * and the run is one trace in a real Jaeger: the client's spans, the killed worker's planner turn
 * and the second worker's tool call and turn, one tree (every span's parent is in the trace).
 * Against the real Temporal dev server and Jaeger; both required under CI=true.
 */
const SUITE = 'Temporal: a worker killed mid-tool-call (real dev server, real Jaeger)';
const { available: temporalUp, required } = await probeTemporal(SUITE);
const jaegerUp = await jaegerAvailable();
if (!jaegerUp && !required) {
  console.warn(`[skip] ${SUITE}: no Jaeger query API at ${JAEGER_QUERY_URL}. Start it: ${JAEGER_START_HINT}`);
}
const available = temporalUp && jaegerUp;
const CHILD = join(import.meta.dirname, 'support', 'temporal-worker-child.ts');
const SERVICE = `toolwarden-temporal-${randomUUID().slice(0, 8)}`;

function worker(config: object): { child: ChildProcess; ready: Promise<void>; inTool: Promise<void> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, JSON.stringify({ address: TEMPORAL_ADDRESS, ...config })],
    {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Spans leave the worker as they end: a SIGKILL loses only those still open.
      env: { ...process.env, OTEL_BSP_SCHEDULE_DELAY: '20' },
    },
  );
  let out = '';
  const seen = (marker: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (out.includes(marker)) resolve();
      };
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        check();
      });
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before ${marker}`)));
    });
  child.stderr!.resume();
  return { child, ready: seen('READY'), inTool: seen('IN_TOOL') };
}

describe.skipIf(!available && !required)(SUITE, () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('a second worker finishes the run; the side effect happened once; the run is one trace in Jaeger', async () => {
    if (!available)
      throw new Error(`CI=true: needs Temporal at ${TEMPORAL_ADDRESS} and Jaeger at ${JAEGER_QUERY_URL}`);
    const telemetry = startTelemetry({
      serviceName: `${SERVICE}-client`,
      otlpEndpoint: JAEGER_OTLP_HTTP_URL,
    });
    const dir = await mkdtemp(join(tmpdir(), 'toolwarden-temporal-crash-'));
    dirs.push(dir);
    const taskQueue = `toolwarden-crash-${Date.now()}`;
    const traced = (name: string) => ({
      serviceName: `${SERVICE}-${name}`,
      otlpEndpoint: JAEGER_OTLP_HTTP_URL,
    });
    const first = worker({ taskQueue, dir, freeze: true, ...traced('worker-1') });
    children.push(first.child);
    await first.ready;
    const client = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
    const runtime = temporalRuntime({
      client,
      taskQueue,
      agent: { id: 'crash' },
      tools: [{ id: 'ledger.book', timeoutMs: 2_000 }],
    });
    // The app's own span: the run's root span is its child, so the whole run hangs under it.
    const { run, traceId } = await trace
      .getTracer('crash-test')
      .startActiveSpan('app.request', async (span) => {
        const started = await runtime.start({ messages: [{ role: 'user', content: 'book 40' }] });
        span.end();
        return { run: started, traceId: span.spanContext().traceId };
      });
    await first.inTool;
    // Let the worker's finished spans (its planner turn) reach Jaeger, then kill it mid-call.
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.child.kill('SIGKILL');

    const second = worker({ taskQueue, dir, ...traced('worker-2') });
    children.push(second.child);
    await second.ready;
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'booked 40' } });

    const read = (file: string) =>
      existsSync(join(dir, file))
        ? readFileSync(join(dir, file), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { toolCallId: string; pid?: number })
        : [];
    const attempts = read('attempts.jsonl');
    const ledger = read('ledger.jsonl');
    expect(new Set(attempts.map((attempt) => attempt.pid)).size).toBe(2); // ran in both workers
    expect(new Set(attempts.map((attempt) => attempt.toolCallId))).toEqual(new Set([`${run.runId}:t1:c1`]));
    expect(ledger).toEqual([{ toolCallId: `${run.runId}:t1:c1`, amount: 40 }]); // booked once

    // One trace, one tree, across the client and both workers.
    await telemetry.shutdown();
    const found = await new JaegerClient().waitForTrace(traceId, {
      until: (t) =>
        t.spans.filter((s) => s.operationName.startsWith('plan ')).length >= 2 &&
        t.spans.some((s) => s.operationName.startsWith('execute_tool ')),
      timeoutMs: 30_000,
    });
    const ids = new Set(found.spans.map((span) => span.spanID));
    const roots = found.spans.filter((span) => !parentSpanId(span));
    expect(roots.map((span) => span.operationName)).toEqual(['app.request']);
    for (const span of found.spans) if (span !== roots[0]) expect(ids).toContain(parentSpanId(span));
    const where = (span: (typeof found.spans)[number]) =>
      `${span.operationName} @ ${found.processes[span.processID]?.serviceName.replace(`${SERVICE}-`, '')}`;
    const seen = found.spans.map(where);
    expect(seen).toEqual(
      expect.arrayContaining([
        'app.request @ client',
        'invoke_agent crash @ client',
        'plan crash @ worker-1',
        'execute_tool ledger.book @ worker-2',
        'plan crash @ worker-2',
      ]),
    );
  }, 120_000);
});
