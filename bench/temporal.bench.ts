/**
 * What a run costs on Temporal (issue 14 "Show"; docs/temporal.md §Cost), against the Temporal dev
 * server (`bash scripts/temporal.sh start`) with one worker in this process:
 *
 * - per step: the reference loop (one zod-validated tool call per turn, a scripted planner) at
 *   10 and 50 steps, wall ms per step on Temporal beside the in-process runtime;
 * - history: events and bytes of the finished workflow's history, per step — what decides when a
 *   long run must continue as new (Temporal's limits: 50,000 events, 50 MB);
 * - one long run (`--long 500` steps, 0 to skip) with Temporal's own continue-as-new
 *   suggestion, each call returning `--long-kb` KB (default 50; results over 16 KB go to a folder
 *   payload store, issue 26 item 3; `--long-kb 0`: the small sum), continuing as new also every
 *   `--long-max-events` events: executions (continue-as-new count), the largest execution's
 *   history, the largest single payload, each execution's input, bytes for the whole run;
 * - recovery after a kill (`--kills 1`, 0 to skip): two worker processes, the one in a planner
 *   turn (then: in a tool call) SIGKILLed; ms from the kill to the 3-call run's completion;
 * - 100 concurrent 10-step runs on the one worker: runs per second.
 *
 *     node --import tsx bench/temporal.bench.ts [--runs 5] [--steps 10,100] [--long 500] [--long-kb 50]
 *       [--long-max-events N] [--kills 1] [--concurrent 100]
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import {
  createTemporalWorker,
  folderPayloadStore,
  type PayloadStore,
  temporalRuntime,
  writeWorkflowBundle,
} from '../temporal/index.ts';
import { historyPayloads } from '../test/support/temporal-history-size.ts';
import { killWorkerDuring } from '../test/support/temporal-kill.ts';
import { defineTool } from '../tools/define-tool.ts';
import { addTool } from './support/reference-loop.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    concurrent: { type: 'string', default: '100' },
    long: { type: 'string', default: '500' },
    'long-kb': { type: 'string', default: '50' },
    'long-max-events': { type: 'string', default: '' },
    steps: { type: 'string', default: '10,100' },
    kills: { type: 'string', default: '1' },
    address: { type: 'string', default: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' },
  },
});
const runs = Number(values.runs);

/** `steps` calls per run, counted from the transcript: any worker can plan any turn. */
function loopPlanner(steps: number) {
  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    let done = 0;
    for (const message of input.messages) if (message.role === 'tool') done++;
    if (done < steps) return { toolCalls: [{ name: 'bench.add', input: { a: done, b: 1 } }] };
    return { finalResponse: { text: 'done' } };
  };
  return { planStart: decide, planResume: decide };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const connection = await NativeConnection.connect({ address: values.address });
const client = new Client({ connection: await Connection.connect({ address: values.address }) });
const rows: string[] = [];

/** A worker on a queue of its own running the `steps`-step loop, and a runtime on that queue. */
async function loopOnTemporal(
  name: string,
  steps: number,
  resultKb = 0,
  store?: PayloadStore,
  history?: { maxEvents: number },
) {
  const taskQueue = `bench-${name}-${Date.now()}`;
  // With `resultKb`, each call also returns that much text (a page of a report, say).
  const padding = 'r'.repeat(resultKb * 1000);
  const tool = resultKb
    ? defineTool({
        id: addTool.id,
        description: 'Adds, and returns a large page',
        input: z.object({ a: z.number(), b: z.number() }),
        execute: ({ a, b }) => ({ sum: a + b, page: padding }),
      })
    : addTool;
  const worker = await createTemporalWorker({
    connection,
    taskQueue,
    tools: [tool],
    planner: loopPlanner(steps),
    ...(store ? { payloads: { store } } : {}),
  });
  const running = worker.run();
  const runtime = temporalRuntime({
    client,
    taskQueue,
    agent: { id: 'bench' },
    tools: [addTool],
    ...(history ? { history } : {}),
    ...(store ? { payloadStore: store } : {}),
    caps: {
      maxToolCalls: steps + 1,
      maxTurns: steps + 2,
      maxConsecutiveFailedToolCalls: 5,
      maxRetriesPerTool: 3,
      timeBudgetMs: 3_600_000,
    },
  });
  const stop = async () => {
    worker.shutdown();
    await running;
  };
  return { taskQueue, runtime, stop };
}

for (const steps of values.steps.split(',').filter(Boolean).map(Number)) {
  const { taskQueue, runtime, stop } = await loopOnTemporal(String(steps), steps);
  const local = createRuntime({
    agent: { id: 'bench' },
    planner: loopPlanner(steps),
    tools: [addTool],
    caps: { maxToolCalls: steps + 1, maxTurns: steps + 1 },
  });
  const temporalMs: number[] = [];
  const localMs: number[] = [];
  let events = 0;
  let bytes = 0;
  for (let i = 0; i <= runs; i++) {
    let started = performance.now();
    const run = await runtime.start({
      runId: `${taskQueue}-${i}`,
      messages: [{ role: 'user', content: 'add' }],
    });
    const outcome = await run.result();
    if (outcome.status !== 'completed') throw new Error(`run ${run.runId} ${outcome.status}`);
    const took = performance.now() - started;
    started = performance.now();
    await local.start({ messages: [{ role: 'user', content: 'add' }] }).result();
    const tookLocal = performance.now() - started;
    if (i === 0) continue; // warm-up
    temporalMs.push(took / steps);
    localMs.push(tookLocal / steps);
    const history = await client.workflow.getHandle(run.runId).fetchHistory();
    events = history.events?.length ?? 0;
    bytes = JSON.stringify(history).length;
  }
  rows.push(
    `${String(steps).padStart(5)} steps  Temporal ${median(temporalMs).toFixed(1).padStart(7)} ms/step  in-process ${median(localMs).toFixed(2).padStart(6)} ms/step  history ${events} events (${(events / steps).toFixed(1)}/step), ${(bytes / 1024).toFixed(0)} KB (${(bytes / steps / 1024).toFixed(1)} KB/step)`,
  );
  await local.close();
  await stop();
}

// One long run: how many executions, how large each one's history (limits: 50,000 events, 50 MB).
if (Number(values.long) > 0) {
  const steps = Number(values.long);
  const resultKb = Number(values['long-kb']);
  const dir = await mkdtemp(join(tmpdir(), 'toolwarden-bench-payloads-'));
  const maxEvents = Number(values['long-max-events']);
  const { taskQueue, runtime, stop } = await loopOnTemporal(
    'long',
    steps,
    resultKb,
    folderPayloadStore(dir),
    maxEvents > 0 ? { maxEvents } : undefined,
  );
  const started = performance.now();
  const run = await runtime.start({ runId: taskQueue, messages: [{ role: 'user', content: 'add' }] });
  const outcome = await run.result();
  const seconds = (performance.now() - started) / 1000;
  let largestEvents = 0;
  let largestBytes = 0;
  let totalBytes = 0;
  for await (const info of client.workflow.list({ query: `WorkflowId = '${run.runId}'` })) {
    const history = await client.workflow.getHandle(run.runId, info.runId).fetchHistory();
    const bytes = JSON.stringify(history).length;
    largestEvents = Math.max(largestEvents, history.events?.length ?? 0);
    largestBytes = Math.max(largestBytes, bytes);
    totalBytes += bytes;
  }
  const executions = await historyPayloads(client, run.runId);
  const largestPayload = Math.max(...executions.map((execution) => execution.largestPayload));
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  // What crossed each continue-as-new: flat once the event buffer is full (the transcript by reference).
  const inputs = executions.slice(1).map((execution) => execution.inputBytes);
  const half = inputs.slice(Math.floor(inputs.length / 2));
  rows.push(
    `${steps}-step run, ${resultKb} KB results${maxEvents > 0 ? `, maxEvents ${maxEvents}` : ''}: continue-as-new inputs first ${kb(inputs[0] ?? 0)}, largest ${kb(Math.max(0, ...inputs))}, second half ${kb(Math.min(...half))}–${kb(Math.max(...half))}; result ${kb(executions.at(-1)?.resultBytes ?? 0)}`,
  );
  rows.push(
    `${steps}-step run, ${resultKb} KB results: ${outcome.status} in ${seconds.toFixed(0)} s (${((seconds * 1000) / steps).toFixed(0)} ms/step), ${outcome.executions} execution(s) (${outcome.executions - 1} continue-as-new); largest history ${largestEvents} events, ${(largestBytes / 1024).toFixed(0)} KB; all executions ${(totalBytes / 1024).toFixed(0)} KB (${(totalBytes / steps / 1024).toFixed(1)} KB/step); largest payload ${kb(largestPayload)}; execution inputs ${(executions.length > 12 ? [...executions.slice(0, 6), ...executions.slice(-6)] : executions).map((execution) => kb(execution.inputBytes)).join(' → ')}`,
  );
  await stop();
  await rm(dir, { recursive: true, force: true });
}

// Recovery after a kill -9 of the worker in a planner turn, then in a tool call (heartbeat timeout 5 s).
if (Number(values.kills) > 0) {
  const dir = await mkdtemp(join(tmpdir(), 'toolwarden-bench-kills-'));
  const { codePath: bundlePath } = await writeWorkflowBundle(join(dir, 'workflows.js'));
  const children: ChildProcess[] = [];
  for (const where of ['plan', 'tool'] as const) {
    const ms: number[] = [];
    for (let i = 0; i < Number(values.kills); i++) {
      const killed = await killWorkerDuring({
        client,
        where,
        dir,
        bundlePath,
        amounts: [10, 20, 30],
        budgetMs: 60_000,
        children,
      });
      if (killed.outcome.status !== 'completed')
        throw new Error(`run ${killed.runId} ${killed.outcome.status}`);
      ms.push(killed.recoveryMs);
    }
    rows.push(
      `worker killed in a ${where === 'plan' ? 'planner turn' : 'tool call'}: the run completed ${median(ms).toFixed(0)} ms after the kill (median of ${ms.length})`,
    );
  }
  for (const child of children) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
}

// 100 concurrent 10-step runs on one worker.
if (Number(values.concurrent) > 0) {
  const count = Number(values.concurrent);
  const { taskQueue, runtime, stop } = await loopOnTemporal('concurrent', 10);
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: count }, async (_, i) =>
      (
        await runtime.start({ runId: `${taskQueue}-${i}`, messages: [{ role: 'user', content: 'add' }] })
      ).result(),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const completed = outcomes.filter((outcome) => outcome.status === 'completed').length;
  rows.push(
    `${count} concurrent 10-step runs on one worker: ${completed} completed in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)} runs/s)`,
  );
  await stop();
}
console.log('runs on Temporal (dev server, one worker in this process):');
for (const row of rows) console.log(row);
await connection.close();
await client.connection.close();
