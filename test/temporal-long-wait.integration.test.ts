import type { Client, WorkflowHandle } from '@temporalio/client';
import { type NativeConnection, Worker as ReplayWorker, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { createTemporalWorker, temporalRuntime, WORKFLOWS_PATH } from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { connectTemporal, probeTemporal } from './support/temporal-server.ts';

/**
 * A clarification answered after a long wait (issue 14 "Show"), against the real dev server: the
 * run waits past its whole time budget for a person, who answers; the run goes on with its tools
 * (the wait is not the run's time, docs/architecture.md §Caps). Then the day: the recorded history
 * is replayed with the answer arriving a day later (every event after the wait moved by 24 h,
 * which is the time the workflow sees on replay) and must replay as recorded — a workflow that
 * counted the wait would have finalized instead. Required under CI=true.
 */
const SUITE = 'Temporal: an answer after a long wait (real dev server)';
const { available, required } = await probeTemporal(SUITE);

const DAY_S = 24 * 3600;
const booked: number[] = [];
const book = defineTool({
  id: 'ledger.book',
  description: 'Books an amount',
  input: z.object({ amount: z.number().int().positive() }),
  execute: ({ amount }) => {
    booked.push(amount);
    return { booked: amount };
  },
});

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type EventTime = { seconds: { add(seconds: number): unknown }; nanos?: number };

/** The history with every event from the first that has `attributes` on moved by `seconds`. */
function shifted(history: History, attributes: string, seconds: number): History {
  const events = (history.events ?? []).map((event) => ({ ...event }));
  const from = events.findIndex((event) => attributes in event && event[attributes as keyof typeof event]);
  expect(from).toBeGreaterThan(0);
  for (const event of events.slice(from)) {
    const time = event.eventTime as EventTime;
    event.eventTime = { ...time, seconds: time.seconds.add(seconds) } as typeof event.eventTime;
  }
  return { ...history, events };
}

describe.skipIf(!available && !required)(SUITE, () => {
  const taskQueue = `long-wait-${Date.now().toString(36)}`;
  let connection: NativeConnection;
  let client: Client;
  let temporal: Awaited<ReturnType<typeof connectTemporal>> | undefined;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    temporal = await connectTemporal(available);
    ({ connection, client } = temporal);
    worker = await createTemporalWorker({
      connection,
      taskQueue,
      tools: [book],
      planner: scriptedPlanner([
        { await: { clarification: { id: 'amount', question: 'How much?', missingFields: ['amount'] } } },
        (input) => ({
          toolCalls: [
            {
              name: 'ledger.book',
              input: { amount: Number((input as PlanResumeInput).clarification?.answer) },
            },
          ],
        }),
        { finalResponse: { text: 'booked' } },
      ]),
    });
    running = worker.run();
  }, 60_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await temporal?.close();
  });

  it('goes on with its tools when the answer comes after the time budget; a day-long wait replays the same', async () => {
    const runtime = temporalRuntime({
      client,
      taskQueue,
      agent: { id: 'long-wait' },
      tools: [book],
      caps: { maxToolCalls: 5, maxConsecutiveFailedToolCalls: 3, maxRetriesPerTool: 3, timeBudgetMs: 2_000 },
    });
    const run = await runtime.start({ messages: [{ role: 'user', content: 'book it' }] });
    await expect
      .poll(async () => (await run.status()).awaiting, { timeout: 15_000 })
      .toEqual({ kind: 'clarification', id: 'amount' });
    // A real wait past the whole budget.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await run.provideClarification({ id: 'amount', answer: '7' });

    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'booked' } });
    expect(outcome.toolResults).toMatchObject([{ executed: true, result: { booked: 7 } }]);
    expect(booked).toEqual([7]);

    const history = await client.workflow.getHandle(run.runId).fetchHistory();
    await ReplayWorker.runReplayHistory({ workflowsPath: WORKFLOWS_PATH }, history, run.runId);
    const aDayLater = shifted(history, 'workflowExecutionSignaledEventAttributes', DAY_S);
    await ReplayWorker.runReplayHistory({ workflowsPath: WORKFLOWS_PATH }, aDayLater, run.runId);
  }, 90_000);
});
