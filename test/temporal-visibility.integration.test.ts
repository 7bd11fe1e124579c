import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import {
  createTemporalWorker,
  TemporalRunAnswerError,
  temporalRuntime,
  writeWorkflowBundle,
} from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { connectTemporal, probeTemporal } from './support/temporal-server.ts';

/**
 * Issue 26 items 5 and 6 on the real dev server: what Temporal shows of a run. Runs awaiting a
 * person are found by `ToolwardenAwaiting = 'clarification'` (search attributes registered by
 * scripts/temporal.sh), runs canceled or failed by toolwarden are listed as such (Temporal says
 * COMPLETED), `list()` keeps to its task queue, every activity has a summary naming the tool or
 * the turn, the run's current details carry the question. Without a worker, `status()` reads the
 * memo the workflow keeps (before: 30 s, then an error), an answer is accepted as a signal, and the
 * worker that comes back runs it. Required under CI=true.
 */
const SUITE = 'What Temporal shows of a run (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const QUESTION = 'How much should I book?';

const booked: number[] = [];
const book = defineTool({
  id: 'ledger.book',
  description: 'Books an amount',
  input: z.object({ amount: z.number() }),
  execute: ({ amount }) => {
    booked.push(amount);
    return { booked: amount };
  },
});
let toolStarted = () => {};
/** Resolves when the next slow.export call starts. */
const nextSlowCall = () => new Promise<void>((resolve) => (toolStarted = resolve));
const slow = defineTool({
  id: 'slow.export',
  description: 'Exports until aborted',
  input: z.object({}),
  timeoutMs: 30_000,
  execute: (_input, { signal }) => {
    toolStarted();
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve({ aborted: true })));
  },
});

/** What to do follows the user's message: ask, book, fail, export (to be canceled). */
const planner: Planner = {
  planStart: async (input: PlanInput): Promise<PlanResult> => {
    const ask = input.messages.find((m) => m.role === 'user')?.content;
    if (ask === 'ask') return { await: { clarification: { id: 'amount', question: QUESTION } } };
    if (ask === 'book') return { toolCalls: [{ name: 'ledger.book', input: { amount: 7 } }] };
    if (ask === 'export') return { toolCalls: [{ name: 'slow.export', input: {} }] };
    return {}; // no calls, no answer: the run fails (PlannerError)
  },
  planResume: async (input: PlanResumeInput): Promise<PlanResult> => {
    if (input.clarification) {
      return { toolCalls: [{ name: 'ledger.book', input: { amount: Number(input.clarification.answer) } }] };
    }
    return { finalResponse: { text: `done: ${JSON.stringify(input.toolResults[0]?.result)}` } };
  },
};

describe.skipIf(!available && !required)(SUITE, () => {
  let temporal: Awaited<ReturnType<typeof connectTemporal>>;
  let dir: string;
  let codePath: string;
  const running: { worker: Worker; done: Promise<void> }[] = [];
  const startWorker = async (taskQueue: string) => {
    const worker = await createTemporalWorker({
      connection: temporal.connection,
      taskQueue,
      tools: [book, slow],
      planner,
      worker: { workflowBundle: { codePath } },
    });
    const entry = { worker, done: worker.run() };
    running.push(entry);
    return entry;
  };

  beforeAll(async () => {
    temporal = await connectTemporal(available);
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-visibility-'));
    ({ codePath } = await writeWorkflowBundle(join(dir, 'workflows.js')));
  }, 120_000);
  afterAll(async () => {
    for (const { worker } of running) if (worker.getState() === 'RUNNING') worker.shutdown();
    await Promise.all(running.map(({ done }) => done));
    await temporal?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('finds runs awaiting a person; lists canceled and failed runs as such, on its task queue only; names each activity', async () => {
    const taskQueue = `toolwarden-visible-${randomUUID().slice(0, 8)}`;
    await startWorker(taskQueue);
    const { client } = temporal;
    const runtime = temporalRuntime({ client, taskQueue, agent: { id: 'visible' }, tools: [book, slow] });
    const elsewhere = temporalRuntime({ client, taskQueue: `${taskQueue}-other`, agent: { id: 'visible' } });
    const other = await elsewhere.start({ messages: [{ role: 'user', content: 'book' }] }); // no worker there
    const asking = await runtime.start({ messages: [{ role: 'user', content: 'ask' }] });
    const booking = await runtime.start({ messages: [{ role: 'user', content: 'book' }] });
    const failing = await runtime.start({ messages: [{ role: 'user', content: 'fail' }] });
    const inSlowTool = nextSlowCall();
    const exporting = await runtime.start({ messages: [{ role: 'user', content: 'export' }] });
    await inSlowTool;
    await exporting.cancel('changed my mind');
    expect((await booking.result()).status).toBe('completed');
    expect((await failing.result()).status).toBe('failed');
    expect((await exporting.result()).status).toBe('canceled');

    // `temporal workflow list --query "ToolwardenAwaiting = 'clarification'"`, as the client does it.
    const query = `ToolwardenAwaiting = 'clarification' AND TaskQueue = '${taskQueue}'`;
    let awaitingIds: string[] = [];
    for (let i = 0; i < 50 && awaitingIds.length === 0; i++) {
      awaitingIds = [];
      for await (const info of client.workflow.list({ query })) awaitingIds.push(info.workflowId);
      if (awaitingIds.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(awaitingIds).toEqual([asking.runId]);

    // list(): toolwarden's status, this task queue only (visibility catches up within a moment).
    let listed: Awaited<ReturnType<typeof runtime.list>> = [];
    for (let i = 0; i < 50; i++) {
      listed = await runtime.list();
      if (listed.length === 4 && listed.every((run) => run.status !== 'running')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const byId = Object.fromEntries(listed.map((run) => [run.runId, run]));
    expect(byId[other.runId]).toBeUndefined();
    expect(byId[asking.runId]).toMatchObject({ status: 'awaiting', awaiting: 'clarification' });
    expect(byId[booking.runId]).toMatchObject({ status: 'completed', temporalStatus: 'COMPLETED' });
    expect(byId[failing.runId]).toMatchObject({ status: 'failed', temporalStatus: 'COMPLETED' });
    expect(byId[exporting.runId]).toMatchObject({ status: 'canceled', temporalStatus: 'COMPLETED' });

    // The Web UI's lines: the start summary, the current details with the question, activity summaries.
    const handle = client.workflow.getHandle(asking.runId);
    expect(await (await handle.describe()).staticSummary()).toBe('visible: ask');
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toContain(QUESTION);
    const history = await client.workflow.getHandle(booking.runId).fetchHistory();
    const summaries = (history.events ?? [])
      .filter((event) => event.activityTaskScheduledEventAttributes)
      .map((event) => Buffer.from(event.userMetadata?.summary?.data ?? new Uint8Array()).toString('utf8'));
    expect(summaries).toEqual(['"turn 1 · plan"', '"ledger.book · t1:c1"', '"turn 2 · plan"']);

    await asking.provideClarification({ id: 'amount', answer: '3' });
    expect((await asking.result()).status).toBe('completed');
    await client.workflow.getHandle(other.runId).terminate('test cleanup');
  }, 90_000);

  it('without a worker: status() reads the memo, an answer is accepted, the worker back runs it', async () => {
    const taskQueue = `toolwarden-workerless-${randomUUID().slice(0, 8)}`;
    const first = await startWorker(taskQueue);
    const runtime = temporalRuntime({
      client: temporal.client,
      taskQueue,
      agent: { id: 'workerless' },
      tools: [book],
    });
    const run = await runtime.start({ messages: [{ role: 'user', content: 'ask' }] });
    for (let i = 0; i < 100 && (await run.status()).status !== 'awaiting'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    first.worker.shutdown();
    await first.done;

    let at = Date.now();
    const status = await run.status();
    const statusMs = Date.now() - at;
    expect(status).toMatchObject({
      status: 'awaiting',
      awaiting: { kind: 'clarification', id: 'amount' },
      question: QUESTION,
      fromMemo: true,
    });
    await expect(run.provideClarification({ id: 'other', answer: '1' })).rejects.toBeInstanceOf(
      TemporalRunAnswerError,
    );
    at = Date.now();
    await run.provideClarification({ id: 'amount', answer: '40' });
    const answerMs = Date.now() - at;
    console.log(
      `[issue 26] no worker: status() from the memo in ${statusMs} ms, the answer accepted in ${answerMs} ms`,
    );
    expect(statusMs).toBeLessThan(5_000);
    expect(answerMs).toBeLessThan(5_000);

    await startWorker(taskQueue);
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'done: {"booked":40}' } });
  }, 90_000);

  it('sizes a call’s activity by the timeout the worker reports, with no tools given to the client', async () => {
    const taskQueue = `toolwarden-timeouts-${randomUUID().slice(0, 8)}`;
    await startWorker(taskQueue);
    // The client knows no tools: before, every call's activity got the 65 s fallback.
    const runtime = temporalRuntime({ client: temporal.client, taskQueue, agent: { id: 'timeouts' } });
    const inSlowTool = nextSlowCall();
    const run = await runtime.start({ messages: [{ role: 'user', content: 'export' }] });
    await inSlowTool;
    await run.cancel();
    await run.result();
    const history = await temporal.client.workflow.getHandle(run.runId).fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => {
      const attributes = event.activityTaskScheduledEventAttributes;
      return attributes?.activityType?.name === 'executeTool' ? [attributes] : [];
    });
    expect(scheduled).toHaveLength(1);
    // slow.export's timeoutMs (30 s) + the 5 s backstop margin.
    expect(Number(scheduled[0]!.startToCloseTimeout?.seconds)).toBe(35);
  }, 60_000);
});
