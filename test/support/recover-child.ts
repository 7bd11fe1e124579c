/**
 * A worker process for the recovery test (`test/durable-recover.test.ts`, issue 28 item 2).
 *
 *     node --import tsx test/support/recover-child.ts '{"mode":"start","db":"...","runs":20,"owner":"a"}'
 *     node --import tsx test/support/recover-child.ts '{"mode":"recover","db":"...","owner":"b","takeover":true}'
 *
 * `start` starts `runs` runs on a SQLite file and prints `READY` once every one of them is stored
 * executing its first tool call; the test then kills it with SIGKILL. Each run books four steps, one
 * tool call (~250 ms) per planner turn, so all are mid-flight at the kill.
 *
 * `recover` creates a runtime with `durable: { recover }` and nothing else: no list, no resume. It
 * prints a {@link RecoverReport} once every run it recovered has finished.
 *
 * @module
 */

import { writeSync } from 'node:fs';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import type { RunHandle } from '../../runtime/run-handle.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { readyWhenExecuting } from './ready-when-executing.ts';

export interface RecoverChildConfig {
  mode: 'start' | 'recover';
  db: string;
  owner: string;
  /** `start`: how many runs. */
  runs?: number;
  /** `recover`: take over runs of other owners once their lease lapsed. */
  takeover?: boolean;
  leaseMs?: number;
}

/** What `recover` prints (one JSON line). */
export interface RecoverReport {
  recovered: { runId: string; status: string; text?: string }[];
  /** Ms from the runtime's creation to the last recovered run's end. */
  elapsedMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as RecoverChildConfig;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const STEPS = 4;

const work = defineTool({
  id: 'work.step',
  // Safe to run again after a crash under the same key (docs/durability.md §Effects).
  idempotent: true,
  description: 'One slow step of work',
  input: z.object({ step: z.number().int() }),
  output: z.object({ done: z.number().int() }),
  execute: async ({ step }) => {
    await delay(250);
    return { done: step };
  },
});

/** Decides from the transcript alone, so any process can take the run over. */
async function plan(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
  const done = input.messages.filter((message) => message.role === 'tool').length;
  if (done < STEPS) return { toolCalls: [{ name: 'work.step', input: { step: done + 1 } }] };
  return { finalResponse: { text: `${done} steps done` } };
}

const store = sqliteStore({ path: config.db });
const recovered: RunHandle[] = [];
const createdAt = Date.now();
const runtime = createRuntime({
  agent: { id: 'worker' },
  planner: { planStart: plan, planResume: plan },
  tools: [work],
  store,
  telemetry: false,
  durable: {
    owner: config.owner,
    leaseMs: config.leaseMs ?? 1000,
    ...(config.mode === 'start' ? { onPersisted: readyWhenExecuting(config.runs ?? 1) } : {}),
    ...(config.mode === 'recover'
      ? {
          recover: {
            takeover: config.takeover ? 'lapsed' : 'none',
            sweepMs: 200,
            onRecovered: (run) => recovered.push(run),
          },
        }
      : {}),
  },
  onError: (error, where) => console.error(`[recover-child] ${where}:`, error),
});

const keepAlive = setInterval(() => {}, 60_000);

if (config.mode === 'start') {
  for (let i = 0; i < (config.runs ?? 1); i++) {
    runtime.start({ runId: `run-${i}`, messages: [{ role: 'user', content: `Do job ${i}` }] });
  }
  // Killed by the test before the runs finish.
} else {
  // Wait until the store holds no unfinished run, then for every recovered one to be written.
  while ((await runtime.list({ status: ['running', 'awaiting'] })).length > 0) await delay(50);
  const outcomes = await Promise.all(
    recovered.map(async (run) => {
      const outcome = await run.result();
      await run.persisted();
      return { runId: run.runId, status: outcome.status, text: outcome.finalResponse?.text };
    }),
  );
  const report: RecoverReport = { recovered: outcomes, elapsedMs: Date.now() - createdAt };
  await runtime.close();
  await store.close();
  clearInterval(keepAlive);
  writeSync(1, `${JSON.stringify(report)}\n`);
}
