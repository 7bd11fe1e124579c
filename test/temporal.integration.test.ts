import { join } from 'node:path';
import { type Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { type NativeConnection, Worker as ReplayWorker, type Worker } from '@temporalio/worker';
import { firstValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type PlanInput, type Planner, type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import {
  createTemporalWorker,
  TemporalRunAnswerError,
  temporalRuntime,
  WORKFLOWS_PATH,
} from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { connectTemporal, probeTemporal } from './support/temporal-server.ts';

/**
 * Runs on Temporal (issue 14, docs/temporal.md) against a real Temporal dev server (the CLI's
 * `server start-dev`, built by scripts/temporal.sh): the run-actor scenarios — repair after a
 * hint, each await, confirmation by update (a wrong id rejected), caps, cancel — and a replay of a
 * recorded history against the workflow bundle. Required under CI=true.
 */
const SUITE = 'runs on Temporal (real dev server)';
const { available, required } = await probeTemporal(SUITE);

const booked: string[] = [];
const book = defineTool({
  id: 'ledger.book',
  description: 'Books an amount',
  input: z.object({ amount: z.number().int().positive() }),
  examples: [{ amount: 10 }],
  timeoutMs: 5_000,
  execute: ({ amount }, { meta }) => {
    booked.push(meta.toolCallId);
    return { booked: amount };
  },
});
const wipe = defineTool({
  id: 'disk.wipe',
  description: 'Wipes a disk',
  input: z.object({ disk: z.string() }),
  requiresConfirmation: true,
  execute: ({ disk }) => `wiped ${disk}`,
});
const lookup = defineTool({
  id: 'crm.lookup',
  description: 'Looks a customer up (run by the app)',
  input: z.object({ email: z.string() }),
  output: z.object({ plan: z.enum(['free', 'pro']) }),
});

/** One planner for the worker: each run follows its own script, by run id. */
const scripts = new Map<string, Planner>();
const planner: Planner = {
  planStart: (input: PlanInput) => scripts.get(input.runId)!.planStart(input),
  planResume: (input) => scripts.get(input.runId)!.planResume(input),
};
const script = (runId: string, steps: ScriptedStep[]) => {
  scripts.set(runId, scriptedPlanner(steps));
  return runId;
};

describe.skipIf(!available && !required)(SUITE, () => {
  const taskQueue = `toolwarden-test-${Date.now()}`;
  let connection: NativeConnection;
  let client: Client;
  let temporal: Awaited<ReturnType<typeof connectTemporal>> | undefined;
  let worker: Worker;
  let running: Promise<void>;
  let runtime: ReturnType<typeof temporalRuntime>;
  const unique = (name: string) => `${name}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    temporal = await connectTemporal(available);
    ({ connection, client } = temporal);
    worker = await createTemporalWorker({ connection, taskQueue, tools: [book, wipe, lookup], planner });
    running = worker.run();
    runtime = temporalRuntime({
      client,
      taskQueue,
      agent: { id: 'temporal-test' },
      tools: [book, wipe, lookup],
    });
  }, 60_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await temporal?.close();
  });

  it('repairs a call after its hint; events stream in order to the terminal one; the history replays', async () => {
    const runId = script(unique('repair'), [
      { toolCalls: [{ name: 'ledger.book', input: { amount: -5 } }] },
      { toolCalls: [{ name: 'ledger.book', input: { amount: 5 } }] },
      { finalResponse: { text: 'booked 5' } },
    ]);
    const run = await runtime.start({ runId, messages: [{ role: 'user', content: 'book 5' }] });
    const events = firstValueFrom(run.events$.pipe(toArray()));
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'booked 5' } });
    expect(outcome.toolResults.map((result) => result.retryHint?.reason ?? 'ok')).toEqual([
      'invalid_arguments',
      'ok',
    ]);
    expect(booked).toContain(`${runId}:t2:c1`);
    const types = (await events).map((event) => event.type);
    expect(types).toContain('retry_hint');
    expect(types.at(-1)).toBe('run_completed');

    // Replay: the recorded history runs against the bundle again without nondeterminism.
    const history = await client.workflow.getHandle(runId).fetchHistory();
    await ReplayWorker.runReplayHistory({ workflowsPath: WORKFLOWS_PATH }, history, runId);
    // …and a nondeterministic change of the workflow (a timer the history does not have) fails it.
    await expect(
      ReplayWorker.runReplayHistory(
        { workflowsPath: join(import.meta.dirname, 'support', 'temporal-changed-workflows.ts') },
        history,
        runId,
      ),
    ).rejects.toThrow(/[Nn]ondetermin/);
  }, 60_000);

  it('awaits a clarification; an answer with a wrong id is rejected at the caller, the right one resumes the run', async () => {
    const runId = script(unique('clarify'), [
      { await: { clarification: { id: 'amount', question: 'How much?', missingFields: ['amount'] } } },
      (input) => ({
        toolCalls: [
          {
            name: 'ledger.book',
            input: {
              amount: Number((input as { clarification?: { answer: string } }).clarification?.answer),
            },
          },
        ],
      }),
      { finalResponse: { text: 'done' } },
    ]);
    const run = await runtime.start({ runId, messages: [{ role: 'user', content: 'book it' }] });
    await expect
      .poll(async () => (await run.status()).awaiting, { timeout: 15_000 })
      .toEqual({ kind: 'clarification', id: 'amount' });
    await expect(run.provideClarification({ id: 'nope', answer: '7' })).rejects.toBeInstanceOf(
      TemporalRunAnswerError,
    );
    await run.provideClarification({ id: 'amount', answer: '7' });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.result).toEqual({ booked: 7 });
  }, 60_000);

  it('asks a confirmation with an update: a wrong id is rejected by the validator; approval runs the call', async () => {
    const runId = script(unique('confirm'), [
      { toolCalls: [{ name: 'disk.wipe', input: { disk: 'sdb' } }] },
      { finalResponse: { text: 'wiped' } },
    ]);
    const run = await runtime.start({ runId, messages: [{ role: 'user', content: 'wipe sdb' }] });
    await expect
      .poll(async () => (await run.status()).awaiting?.kind, { timeout: 15_000 })
      .toBe('confirmation');
    const { id } = (await run.status()).awaiting!;
    await expect(run.confirm({ id: 'wrong', approved: true })).rejects.toBeInstanceOf(
      WorkflowUpdateFailedError,
    );
    await run.confirm({ id: id!, approved: true, by: 'ops' });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.result).toBe('wiped sdb');
  }, 60_000);

  it('takes external tool results by signal, checked against the tool’s output schema by the run', async () => {
    const runId = script(unique('external'), [
      {
        await: {
          externalTools: {
            id: 'ext',
            calls: [{ name: 'crm.lookup', toolCallId: 'e1', input: { email: 'ada@example.com' } }],
          },
        },
      },
      { finalResponse: { text: 'ada is pro' } },
    ]);
    const run = await runtime.start({ runId, messages: [{ role: 'user', content: 'look ada up' }] });
    await expect
      .poll(async () => (await run.status()).awaiting?.kind, { timeout: 15_000 })
      .toBe('external_tools');
    await run.provideToolResults([{ toolCallId: 'e1', result: { plan: 'pro' } }]);
    expect((await run.result()).status).toBe('completed');
  }, 60_000);

  it('ends a run by its caps, and a canceled run ends canceled', async () => {
    const capped = script(unique('capped'), [
      { toolCalls: [{ name: 'ledger.book', input: { amount: 1 } }] },
      // The finalizing turn (tool cap reached after one call).
      { finalResponse: { text: 'stopped at the cap' } },
    ]);
    const run = await runtime.start({
      runId: capped,
      messages: [{ role: 'user', content: 'book' }],
      caps: { maxToolCalls: 1 },
    });
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'stopped at the cap' } });
    expect(outcome.toolResults.filter((result) => result.executed)).toHaveLength(1);

    const waiting = script(unique('cancel'), [
      { await: { clarification: { id: 'q', question: '?', missingFields: [] } } },
    ]);
    const toCancel = await runtime.start({ runId: waiting, messages: [{ role: 'user', content: 'x' }] });
    await expect.poll(async () => (await toCancel.status()).status, { timeout: 15_000 }).toBe('awaiting');
    await toCancel.cancel('not needed');
    expect((await toCancel.result()).status).toBe('canceled');
  }, 60_000);

  it('bad input: a duplicate answer is refused at the caller, an unknown tool is the planner’s to repair, a planner that keeps failing fails the run with its cause', async () => {
    const clarify = script(unique('duplicate'), [
      { await: { clarification: { id: 'q', question: 'How much?', missingFields: ['amount'] } } },
      { toolCalls: [{ name: 'ledger.transfer', input: { amount: 3 } }] },
      (input) => {
        const [result] = (input as { toolResults: { retryHint?: { reason: string } }[] }).toolResults;
        return { finalResponse: { text: `hint ${result?.retryHint?.reason}` } };
      },
    ]);
    const run = await runtime.start({ runId: clarify, messages: [{ role: 'user', content: 'book' }] });
    await expect.poll(async () => (await run.status()).status, { timeout: 15_000 }).toBe('awaiting');
    await run.provideClarification({ id: 'q', answer: '3' });
    const outcome = await run.result();
    // The tool the planner named is not in the worker: a hint, not a stuck workflow.
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'hint tool_unavailable' } });
    await expect(run.provideClarification({ id: 'q', answer: '3' })).rejects.toBeInstanceOf(
      TemporalRunAnswerError,
    );

    const failing = unique('failing');
    const down = async (): Promise<never> => {
      throw new Error('the model server is down');
    };
    scripts.set(failing, { planStart: down, planResume: down });
    const broken = await runtime.start({ runId: failing, messages: [{ role: 'user', content: 'x' }] });
    const failed = await broken.result();
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toContain('the model server is down');
  }, 90_000);
});
