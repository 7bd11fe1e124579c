/**
 * A worker process for `test/telemetry-resume-link.integration.test.ts`: traced runs on a SQLite
 * file, exported over OTLP/HTTP (`startTelemetry`) to a real Jaeger, across a process restart.
 *
 *     node --import tsx test/support/traced-resume-child.ts '{"mode":"start","db":"...","runIds":{...},...}'
 *     node --import tsx test/support/traced-resume-child.ts '{"mode":"resume",...}'
 *
 * `start` runs two runs to the point of the kill, each in two segments (it asks `q1` and is
 * answered): the `awaiting` run then asks `q2`, the `midTool` run calls a tool that never returns
 * here. Once both are stored so and the spans ended so far are exported, it prints
 * `READY <awaiting trace id> <midTool trace id>`; the test kills it with SIGKILL (the runs' lease
 * is not released, the mid-tool segment's span never ends). `resume` is the restarted process
 * (same owner name, `durable: { recover: true }`): recovery restores both, the tool call runs
 * again (and returns), `runtime.resume` hands it the awaiting run, which it answers; it prints
 * `DONE <status> <status>` once its spans are exported.
 *
 * @module
 */

import { writeSync } from 'node:fs';
import { type ProxyTracerProvider, trace } from '@opentelemetry/api';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { RunConflictError } from '../../runtime/durable/durable-errors.ts';
import type { RunHandle } from '../../runtime/run-handle.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { startTelemetry } from '../../telemetry/setup.ts';
import { spanContextFromCarrier } from '../../telemetry/trace-context.ts';
import { defineTool } from '../../tools/define-tool.ts';

export interface TracedResumeConfig {
  mode: 'start' | 'resume';
  db: string;
  runIds: { awaiting: string; midTool: string };
  owner: string;
  serviceName: string;
  otlpEndpoint: string;
}

const config = JSON.parse(process.argv[2] ?? '{}') as TracedResumeConfig;
const say = (line: string) => writeSync(1, `${line}\n`);
const SCENARIO = 'scenario';

/** Decides from the run's label and what it was just given, so either process can go on with it. */
async function plan(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
  const resume = input as Partial<PlanResumeInput>;
  const ask = (id: string): PlanResult => ({
    await: { clarification: { id, question: `${id}?`, missingFields: ['plan'] } },
  });
  if (!('toolResults' in input)) return ask('q1');
  if (resume.clarification?.id === 'q1') {
    if (input.labels[SCENARIO] === 'awaiting') return ask('q2');
    return { toolCalls: [{ name: 'work.step', input: { step: 1 } }] };
  }
  return { finalResponse: { text: 'done' } };
}

let toolStarted = () => {};
const inTool = new Promise<void>((resolve) => {
  toolStarted = resolve;
});
const work = defineTool({
  id: 'work.step',
  // Safe to run again after a crash under the same key (docs/durability.md §Effects).
  idempotent: true,
  description: 'One step of work',
  input: z.object({ step: z.number().int() }),
  output: z.object({ done: z.number().int() }),
  execute: async ({ step }) => {
    if (config.mode === 'resume') return { done: step };
    toolStarted();
    return new Promise<never>(() => {}); // the process is killed in here
  },
});

/** Exports every span ended so far (the SDK's batch processor would wait for its timer). */
async function flushSpans(): Promise<void> {
  const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as {
    forceFlush?: () => Promise<void>;
  };
  await provider.forceFlush?.();
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const telemetry = startTelemetry({ serviceName: config.serviceName, otlpEndpoint: config.otlpEndpoint });
const store = sqliteStore({ path: config.db });
const runtime = createRuntime({
  agent: { id: 'support', name: 'Support agent' },
  planner: { planStart: plan, planResume: plan },
  tools: [work],
  store,
  // The same owner name as the killed worker: its runs are free once its lease lapses (one live
  // owner per run, docs/durability.md §Guarantees), so the lease is short here.
  durable: { owner: config.owner, recover: config.mode === 'resume', leaseMs: 2_000 },
});

if (config.mode === 'start') {
  const messages = [{ role: 'user' as const, content: 'Put me on a plan' }];
  const traceIds: string[] = [];
  for (const [scenario, runId] of Object.entries(config.runIds)) {
    const run = runtime.start({ runId, messages, labels: { [SCENARIO]: scenario } });
    await until(() => run.status === 'awaiting');
    await run.provideClarification({ id: 'q1', answer: 'pro' });
    traceIds.push(spanContextFromCarrier(run.context.traceContext)?.traceId ?? '');
  }
  await until(async () => {
    const awaiting = (await runtime.load(config.runIds.awaiting))?.awaiting;
    return awaiting?.kind === 'clarification' && awaiting.id === 'q2';
  });
  await inTool;
  await runtime.flush();
  await flushSpans();
  say(`READY ${traceIds.join(' ')}`);
  // Killed here: nothing is released, nothing more is exported.
  setInterval(() => {}, 60_000);
} else {
  const midTool = await resumeWhenFree(config.runIds.midTool);
  const awaiting = await resumeWhenFree(config.runIds.awaiting);
  await awaiting.provideClarification({ id: 'q2', answer: 'yes' });
  const outcomes = await Promise.all([awaiting.result(), midTool.result()]);
  await runtime.close();
  await store.close();
  await telemetry.shutdown();
  say(`DONE ${outcomes.map((outcome) => outcome.status).join(' ')}`);
}

/** `runtime.resume`, waiting out the killed worker's lease as an app would (RunConflictError's `leaseUntil`). */
async function resumeWhenFree(runId: string): Promise<RunHandle> {
  for (;;) {
    try {
      return await runtime.resume(runId);
    } catch (error) {
      const until = error instanceof RunConflictError ? error.leaseUntil : undefined;
      if (until === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.max(50, until - Date.now() + 50)));
    }
  }
}
