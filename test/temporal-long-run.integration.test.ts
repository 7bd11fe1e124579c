import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Worker as ReplayWorker, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import {
  createTemporalWorker,
  memoryPayloadStore,
  type PayloadStore,
  type TemporalRuntimeOptions,
  type TemporalWorkerOptions,
  temporalRuntime,
  WORKFLOWS_PATH,
} from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { historyPayloads } from './support/temporal-history-size.ts';
import { connectTemporal, probeTemporal } from './support/temporal-server.ts';

/**
 * Issue 26 item 3 on the real dev server: a long run with realistic results (50 KB each)
 * completes, and what crosses continue-as-new and the workflow's result stays bounded — results
 * travel by reference through a payload store the activities read, the result keeps the last 100.
 * Before: every result rode in the continue-as-new input (transcript, all tool results), which
 * passed 2 MB within a few dozen steps and the server refused it (`BadContinueAsNewAttributes`),
 * the run stuck. Prints the continue-as-new count and the largest payload. The 1,000-step figure
 * is bench/temporal.bench.ts's. Required under CI=true.
 */
const SUITE = 'Temporal long runs with large results (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const STEPS = 60;
const RESULT_BYTES = 50_000;
const SMALL_STEPS = 150;

const smallPage = defineTool({
  id: 'report.page',
  description: 'Fetches a short report page',
  input: z.object({ page: z.number() }),
  execute: ({ page }) => ({ page, line: `page ${page}` }),
});

/** One call a turn, counted from the transcript; records the transcript's length each turn saw. */
function countingPlanner(steps: number, seen: number[]): Planner {
  const decide = async (input: PlanInput | PlanResumeInput) => countingTurn(input, steps, seen);
  return { planStart: decide, planResume: decide };
}

function countingTurn(input: PlanInput | PlanResumeInput, steps: number, seen: number[]): PlanResult {
  seen.push(input.messages.length);
  const done = input.messages.filter((message) => message.role === 'tool').length;
  if (input.messages[0]?.content !== 'read every page')
    throw new Error('the transcript lost its first message');
  if (done < steps) return { toolCalls: [{ name: 'report.page', input: { page: done } }] };
  return { finalResponse: { text: `read ${done} pages` } };
}

const fetchReport = defineTool({
  id: 'report.fetch',
  description: 'Fetches a 50 KB report page',
  input: z.object({ page: z.number() }),
  execute: ({ page }) => ({ page, body: 'r'.repeat(RESULT_BYTES) }),
});

/** One call a turn, counted from the transcript; every turn checks the last result came back whole. */
function pagingPlanner(steps: number, bytes = RESULT_BYTES): Planner {
  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const results = input.messages.filter((message) => message.role === 'tool');
    const last = results.at(-1)?.content as { page?: number; body?: string } | undefined;
    if (last && last.body?.length !== bytes) throw new Error('the planner got a result by reference');
    if (results.length < steps)
      return { toolCalls: [{ name: 'report.fetch', input: { page: results.length } }] };
    return { finalResponse: { text: `read ${results.length} pages` } };
  };
  return { planStart: decide, planResume: decide };
}

describe.skipIf(!available && !required)(SUITE, () => {
  let temporal: Awaited<ReturnType<typeof connectTemporal>>;
  let client: Client;
  const workers: { worker: Worker; running: Promise<void> }[] = [];
  beforeAll(async () => {
    temporal = await connectTemporal(available);
    client = temporal.client;
  });
  afterAll(async () => {
    for (const { worker } of workers) worker.shutdown();
    await Promise.all(workers.map(({ running }) => running));
    await temporal?.close();
  });

  /** A worker on a queue of its own and one run on it asking for `steps` pages, to its outcome. */
  const readPages = async (
    name: string,
    steps: number,
    worker: Omit<TemporalWorkerOptions, 'connection' | 'taskQueue'>,
    runtime: Partial<TemporalRuntimeOptions> = {},
  ) => {
    const taskQueue = `toolwarden-${name}-${randomUUID().slice(0, 8)}`;
    const created = await createTemporalWorker({ connection: temporal.connection, taskQueue, ...worker });
    workers.push({ worker: created, running: created.run() });
    const started = Date.now();
    const run = await temporalRuntime({ client, taskQueue, agent: { id: name }, ...runtime }).start({
      messages: [{ role: 'user', content: 'read every page' }],
      caps: { maxToolCalls: steps + 1, maxTurns: steps + 2, timeBudgetMs: 600_000 },
    });
    const outcome = await run.result();
    return { run, outcome, msPerStep: Math.round((Date.now() - started) / steps) };
  };

  it(`a ${STEPS}-step run with 50 KB results completes; continue-as-new input and result stay bounded`, async () => {
    const store = memoryPayloadStore(); // one process: the worker and the client share it
    const { run, outcome, msPerStep } = await readPages(
      'long',
      STEPS,
      { tools: [fetchReport], planner: pagingPlanner(STEPS), payloads: { store } },
      // Continue as new every ~10 steps.
      { tools: [fetchReport], payloadStore: store, history: { maxEvents: 150 } },
    );
    if (outcome.status !== 'completed') console.log(outcome.error);
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: `read ${STEPS} pages` } });
    expect(outcome.toolResultCount).toBe(STEPS);
    expect(outcome.toolResults.length).toBeLessThanOrEqual(100);
    // Read back through the store: the client sees the values.
    expect((outcome.toolResults.at(-1)!.result as { body: string }).body).toHaveLength(RESULT_BYTES);

    const executions = await historyPayloads(client, run.runId);
    const largest = Math.max(...executions.map((execution) => execution.largestPayload));
    const inputs = executions.map((execution) => execution.inputBytes);
    console.log(
      `[issue 26] ${STEPS} steps × ${RESULT_BYTES / 1000} KB results: ${msPerStep} ms/step, ${executions.length - 1} continue-as-new, largest payload ${(largest / 1024).toFixed(1)} KB, execution inputs ${inputs.map((b) => `${(b / 1024).toFixed(1)} KB`).join(' → ')}`,
    );
    expect(executions.length).toBeGreaterThanOrEqual(4);
    // 3 MB of results went through; no single payload holds more than a few results' worth.
    expect(largest).toBeLessThan(150_000);
  }, 300_000);

  it('a run of many small steps: the continue-as-new input and the result do not grow with the run', async () => {
    // ~0.35 KB of transcript a step (an assistant message with its call, a tool message): before
    // the transcript crossed continue-as-new by reference, every execution's input carried all of
    // it, so a 4,000-step run reached Temporal's 2 MB limit. Here the inputs after the event
    // buffer filled must stay flat while the run grows by ~50 KB of transcript.
    const steps = SMALL_STEPS;
    const store = memoryPayloadStore();
    const seen: number[] = [];
    const { run, outcome, msPerStep } = await readPages(
      'small',
      steps,
      // Every turn reads its transcript back (the store's archive, then the workflow by query).
      {
        tools: [smallPage],
        planner: countingPlanner(steps, seen),
        payloads: { store },
        transcriptCacheRuns: 0,
      },
      // Continue as new every ~5 steps.
      { payloadStore: store, history: { maxEvents: 60 }, resultToolResults: 10 },
    );
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: `read ${steps} pages` } });
    expect(outcome.toolResultCount).toBe(steps);
    expect(outcome.toolResults).toHaveLength(10);
    // Every turn saw the whole transcript: the first message, then two a step.
    expect(seen).toEqual(Array.from({ length: steps + 1 }, (_, i) => 1 + 2 * i));

    const executions = await historyPayloads(client, run.runId);
    const inputs = executions.slice(1).map((execution) => execution.inputBytes);
    const result = executions.at(-1)!.resultBytes;
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    console.log(
      `[issue 26] ${steps} small steps: ${msPerStep} ms/step, ${inputs.length} continue-as-new, inputs ${inputs.map(kb).join(' → ')}, result ${kb(result)}`,
    );
    expect(inputs.length).toBeGreaterThanOrEqual(20);
    // Once the events carried (the last 100) are full, ~20 steps in: flat, give or take a few
    // digits of counters; the transcript alone would add ~0.35 KB a step (~35 KB here).
    const settled = inputs.slice(Math.floor(inputs.length / 4));
    expect(Math.max(...settled) - Math.min(...settled)).toBeLessThan(3_000);
    expect(result).toBeLessThan(10_000);
    for (const execution of executions) expect(execution.largestPayload).toBeLessThan(64_000);
    // Every execution, the archive activity at its continue-as-new included, replays against the bundle.
    const histories = await Promise.all(
      executions.map(async (execution) => ({
        workflowId: run.runId,
        history: await client.workflow.getHandle(run.runId, execution.runId).fetchHistory(),
      })),
    );
    for await (const replay of ReplayWorker.runReplayHistories({ workflowsPath: WORKFLOWS_PATH }, histories))
      expect(replay.error).toBeUndefined();
  }, 300_000);

  it('a store that fails the archive: the run goes on, carrying the transcript as before', async () => {
    const steps = 12;
    const store = memoryPayloadStore();
    let refused = 0;
    const failing: PayloadStore = {
      get: (key) => store.get(key),
      put: async (key, json) => {
        if (key.includes('.transcript.')) {
          refused++;
          throw new Error('the bucket is read-only today');
        }
        await store.put(key, json);
      },
    };
    const seen: number[] = [];
    const { outcome } = await readPages(
      'archive-fails',
      steps,
      {
        tools: [smallPage],
        planner: countingPlanner(steps, seen),
        payloads: { store: failing },
        transcriptCacheRuns: 0,
      },
      { history: { maxEvents: 60 } },
    );
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: `read ${steps} pages` } });
    expect(seen).toEqual(Array.from({ length: steps + 1 }, (_, i) => 1 + 2 * i));
    expect(outcome.executions).toBeGreaterThanOrEqual(3);
    // Each continue-as-new tried (3 attempts), then carried the messages.
    expect(refused).toBeGreaterThanOrEqual(3 * (outcome.executions - 1));
  }, 180_000);

  it('results that ride inline: what crosses continue-as-new and the result stays under its configured bytes', async () => {
    // 30 KB results under an `inlineBytes` of 40 KB stay inline. Before the byte bounds, every
    // continue-as-new input carried the last 100 results and 100 events whole: past 2 MB by
    // step ~50, and the server refused it (the run terminated).
    const steps = 70;
    const inlinePage = defineTool({
      id: 'report.fetch',
      description: 'Fetches a 30 KB report page',
      input: z.object({ page: z.number() }),
      execute: ({ page }) => ({ page, body: 'i'.repeat(30_000) }),
    });
    const { run, outcome } = await readPages(
      'inline',
      steps,
      {
        tools: [inlinePage],
        planner: pagingPlanner(steps, 30_000),
        payloads: { store: memoryPayloadStore(), inlineBytes: 40_000 },
      },
      { history: { maxEvents: 150 } },
    );
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: `read ${steps} pages` } });
    expect(outcome.toolResultCount).toBe(steps);
    // The newest results that fit in 512 KiB of JSON: 17 of 30 KB.
    expect(outcome.toolResults.length).toBeGreaterThan(10);
    expect(outcome.toolResults.length).toBeLessThan(20);
    expect((outcome.toolResults.at(-1)!.result as { page: number }).page).toBe(steps - 1);

    const executions = await historyPayloads(client, run.runId);
    const inputs = executions.slice(1).map((execution) => execution.inputBytes);
    const result = executions.at(-1)!.resultBytes;
    console.log(
      `[issue 26] ${steps} steps × 30 KB inline results: ${inputs.length} continue-as-new, inputs ${inputs.map((b) => `${(b / 1024).toFixed(0)} KB`).join(' → ')}, result ${(result / 1024).toFixed(0)} KB`,
    );
    expect(inputs.length).toBeGreaterThanOrEqual(5);
    // 512 KiB of results, 256 KiB of events, one turn's messages and the context.
    expect(Math.max(...inputs)).toBeLessThan(1_000_000);
    expect(result).toBeLessThan(600_000);
  }, 300_000);

  it('without a store, a result over the cap is an error result the planner sees, not a stuck run', async () => {
    const taskQueue = `toolwarden-cap-${randomUUID().slice(0, 8)}`;
    const huge = defineTool({
      id: 'report.export',
      description: 'Exports 300 KB',
      input: z.object({}),
      execute: () => ({ body: 'x'.repeat(300_000) }),
    });
    const planner: Planner = {
      planStart: async () => ({ toolCalls: [{ name: 'report.export', input: {} }] }),
      planResume: async (input) => ({
        finalResponse: { text: `export: ${input.toolResults[0]?.error?.name ?? 'ok'}` },
      }),
    };
    const worker = await createTemporalWorker({
      connection: temporal.connection,
      taskQueue,
      tools: [huge],
      planner,
    });
    workers.push({ worker, running: worker.run() });
    const runtime = temporalRuntime({ client, taskQueue, agent: { id: 'cap' } });
    const outcome = await (await runtime.start({ messages: [{ role: 'user', content: 'export' }] })).result();
    expect(outcome).toMatchObject({
      status: 'completed',
      finalResponse: { text: 'export: PayloadTooLargeError' },
    });
    expect(outcome.toolResults[0]?.error?.message).toMatch(
      /300\d{3} bytes, over the 262144 .* payload store/,
    );
  }, 60_000);
});
