import { join } from 'node:path';
import { type Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { type NativeConnection, Worker as ReplayWorker, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTemporalWorker,
  TemporalRunAnswerError,
  temporalRuntime,
  WORKFLOWS_PATH,
} from '../temporal/index.ts';
import {
  eventTypesOf,
  runScenarios,
  type ScenarioEngine,
  scenarioTools,
  scriptsByRun,
} from './support/run-scenarios.ts';
import { connectTemporal, probeTemporal } from './support/temporal-server.ts';

/**
 * Runs on Temporal (issue 14, docs/temporal.md) against a real Temporal dev server (the CLI's
 * `server start-dev`, built by scripts/temporal.sh): the run-actor scenarios of
 * test/support/run-scenarios.ts, the very code test/run-scenarios.test.ts runs in process — repair
 * after a hint, each await with a wrong answer refused at the caller (TemporalRunAnswerError; a
 * confirmation by update, WorkflowUpdateFailedError), caps, cancel — then a replay of a recorded
 * history against the workflow bundle, and bad input. Required under CI=true.
 */
const SUITE = 'runs on Temporal (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const { planner, scripts, script } = scriptsByRun();
const tools = Object.values(scenarioTools);

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
    worker = await createTemporalWorker({ connection, taskQueue, tools, planner });
    running = worker.run();
    runtime = temporalRuntime({
      client,
      taskQueue,
      agent: { id: 'temporal-test' },
      tools,
    });
  }, 60_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await temporal?.close();
  });

  /** The scenarios' view of a Temporal run; wrong answers must fail with Temporal's errors. */
  const engine: ScenarioEngine = {
    waitMs: 15_000,
    async start({ runId, steps, messages, caps }) {
      script(runId, steps);
      const run = await runtime.start({ runId, messages, ...(caps ? { caps } : {}) });
      const refusedAs =
        (type: new (...args: never[]) => Error) =>
        (error: unknown): never => {
          expect(error).toBeInstanceOf(type);
          throw error;
        };
      return {
        runId,
        awaiting: async () => (await run.status()).awaiting,
        provideClarification: (answer) =>
          run.provideClarification(answer).catch(refusedAs(TemporalRunAnswerError)),
        provideToolResults: (results) =>
          run.provideToolResults(results).catch(refusedAs(TemporalRunAnswerError)),
        confirm: (answer) => run.confirm(answer).catch(refusedAs(WorkflowUpdateFailedError)),
        cancel: (reason) => run.cancel(reason),
        result: () => run.result(),
        eventTypes: () => eventTypesOf(run.events$),
      };
    },
  };
  for (const [name, scenario] of Object.entries(runScenarios)) {
    it(name, () => scenario(engine, unique), 60_000);
  }

  it('replays a recorded history; a nondeterministic change of the workflow fails the replay', async () => {
    const runId = unique('replay');
    script(runId, [
      { toolCalls: [{ name: 'ledger.book', input: { amount: -5 } }] },
      { toolCalls: [{ name: 'ledger.book', input: { amount: 5 } }] },
      { finalResponse: { text: 'booked 5' } },
    ]);
    const run = await runtime.start({ runId, messages: [{ role: 'user', content: 'book 5' }] });
    expect((await run.result()).status).toBe('completed');

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

  it('bad input: a duplicate answer is refused at the caller, an unknown tool is the planner’s to repair, a planner that keeps failing fails the run with its cause', async () => {
    const clarify = unique('duplicate');
    script(clarify, [
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

  it('a planner error keeps its named cause chain as in process: the provider error over fetch failed over ECONNREFUSED, in the outcome and run_failed (issue 38 item 5)', async () => {
    const runId = unique('cause');
    class ModelUnavailableError extends Error {
      override readonly name = 'ModelUnavailableError';
    }
    const unavailable = async (): Promise<never> => {
      // As Node's fetch fails on a refused connection: TypeError('fetch failed') over the socket's error.
      const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), {
        code: 'ECONNREFUSED',
      });
      const fetchFailed = new TypeError('fetch failed', { cause: refused });
      throw new ModelUnavailableError('model server unreachable', { cause: fetchFailed });
    };
    scripts.set(runId, { planStart: unavailable, planResume: unavailable });
    const run = await runtime.start({ runId, messages: [{ role: 'user', content: 'x' }] });
    const outcome = await run.result();
    // What the in-process runtime keeps for the same error (machines/run-actions.ts plannerErrorOf):
    // each cause named by its class (a plain Error as ToolError), its message kept.
    const expected = {
      name: 'ModelUnavailableError',
      message: 'Planner failed: model server unreachable',
      recoverable: false,
      cause: {
        name: 'TypeError',
        message: 'fetch failed',
        recoverable: false,
        cause: { name: 'ToolError', message: 'connect ECONNREFUSED 127.0.0.1:8080', recoverable: false },
      },
    };
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toEqual(expected);
    const { events } = await run.events(0);
    expect(events.find((event) => event.type === 'run_failed')).toMatchObject({ error: expected });
  }, 90_000);
});
