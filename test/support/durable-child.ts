/**
 * A worker process for the kill -9 test (`test/durable-crash.test.ts`): runs a multi-step run on
 * a SQLite file store and freezes at a chosen point so the test can SIGKILL it there, or resumes
 * every unfinished run in the file to completion.
 *
 *     node --import tsx test/support/durable-child.ts '{"mode":"start","db":"...","dir":"...","runId":"r","killAt":{"state":"executing","nth":2}}'
 *     node --import tsx test/support/durable-child.ts '{"mode":"resume-all","db":"...","dir":"..."}'
 *
 * The run (caps.maxToolCalls 4, a no-op policy so `validating` and `resuming` are states a
 * snapshot is taken in):
 *
 *     t1 ledger.append 10 → t2 ledger.append 20 ‖ ledger.append 30 → t3 asks a clarification
 *     → t4 ledger.append 40 → tool cap → finalizing → completed
 *
 * `ledger.append` is a tool with a side effect made idempotent by its key: it appends
 * `{ toolCallId, amount }` to `<dir>/ledger.jsonl` unless an entry with that `toolCallId` is
 * already there, and logs every attempt to `<dir>/attempts.jsonl`.
 *
 * Freezing: at the `nth` accepted write of state `killAt.state` (after the store has it), or in
 * the middle of the first `ledger.append 20` call (its effect applied, its result not returned),
 * the worker prints `FROZEN <label>` on stdout and blocks its thread for good (`Atomics.wait`):
 * nothing more reaches the store until the SIGKILL.
 *
 * @module
 */

import { appendFileSync, existsSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { definePolicy } from '../../policies/define-policy.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { RunConflictError } from '../../runtime/durable/durable-errors.ts';
import type { RunHandle, RunOutcome } from '../../runtime/run-handle.ts';
import { postgresStore } from '../../stores/postgres-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool } from '../../tools/define-tool.ts';

export interface ChildConfig {
  mode: 'start' | 'resume-all';
  /** The SQLite file; ignored when `pg` is given. */
  db: string;
  /** A PostgreSQL store instead of SQLite: its URL and a schema of the run's own. */
  pg?: { url: string; schema: string };
  dir: string;
  runId?: string;
  /** Where to freeze: the nth write of a state, or `mid-tool`. */
  killAt?: { state: string; nth: number } | 'mid-tool';
  /** This process's lease, ms (short, so the resumer need not wait long after a kill). */
  leaseMs?: number;
}

/** What `resume-all` prints as its last stdout line (JSON). */
export interface ResumeReport {
  outcomes: { runId: string; status: RunOutcome['status']; resumedFrom: string; toolMessages: string[] }[];
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const ledgerPath = join(config.dir, 'ledger.jsonl');
const attemptsPath = join(config.dir, 'attempts.jsonl');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freeze(label: string): never {
  writeSync(1, `FROZEN ${label}\n`);
  // Blocks this thread: no timer, no promise, no write runs again before the SIGKILL.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  throw new Error('unreachable');
}

function ledgerKeys(): Set<string> {
  if (!existsSync(ledgerPath)) return new Set();
  return new Set(
    readFileSync(ledgerPath, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { toolCallId: string }).toolCallId),
  );
}

const ledgerAppend = defineTool({
  id: 'ledger.append',
  // Safe to run again after a crash under the same key (docs/durability.md §Effects).
  idempotent: true,
  description: 'Books an amount on the ledger (idempotent by toolCallId)',
  input: z.object({ amount: z.number().int() }),
  output: z.object({ booked: z.number().int() }),
  execute: async ({ amount }, { meta }) => {
    appendFileSync(attemptsPath, `${JSON.stringify({ toolCallId: meta.toolCallId, pid: process.pid })}\n`);
    await delay(15);
    // The idempotency key: an entry already booked under this toolCallId is not booked again.
    if (!ledgerKeys().has(meta.toolCallId)) {
      appendFileSync(
        ledgerPath,
        `${JSON.stringify({ runId: meta.runId, toolCallId: meta.toolCallId, amount })}\n`,
      );
    }
    if (config.killAt === 'mid-tool' && config.mode === 'start' && amount === 20) freeze('mid-tool');
    return { booked: amount };
  },
});

/** Decides from the transcript alone, so any process can take the run over. */
async function plan(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
  await delay(15);
  if ('finalize' in input && input.finalize) return { finalResponse: { text: 'Booked 100 in total.' } };
  const tools = input.messages.filter((message) => message.role === 'tool').length;
  const last = input.messages[input.messages.length - 1];
  const call = (amount: number) => ({ name: 'ledger.append', input: { amount } });
  if (tools === 0) return { toolCalls: [call(10)] };
  if (tools === 1) return { toolCalls: [call(20), call(30)] };
  if (tools === 3 && last?.role !== 'user') {
    return { await: { clarification: { id: 'book-40', question: 'Book the last 40?', missingFields: [] } } };
  }
  if (tools === 3) return { toolCalls: [call(40)] };
  return { finalResponse: { text: 'unexpected' } };
}

const writesByState = new Map<string, number>();
let stored = false;
const store = config.pg
  ? postgresStore({ connectionString: config.pg.url, schema: config.pg.schema })
  : sqliteStore({ path: config.db });
const runtime = createRuntime({
  agent: { id: 'bookkeeper' },
  planner: { planStart: plan, planResume: plan },
  tools: [ledgerAppend],
  // A policy that never decides: `validating` and `resuming` then invoke the policy engine, so
  // they are states the run stands in (and is persisted in) too.
  policies: [definePolicy({ name: 'observe-only', onToolResult: () => undefined })],
  caps: { maxToolCalls: 4 },
  store,
  telemetry: false,
  durable: {
    leaseMs: config.leaseMs ?? 1500,
    onPersisted: (write) => {
      if (!stored && config.mode === 'start') writeSync(1, 'STORED\n'); // the run is durable from here
      stored = true;
      const kill = config.killAt;
      if (config.mode !== 'start' || kill === undefined || kill === 'mid-tool') return;
      const nth = (writesByState.get(write.state) ?? 0) + 1;
      writesByState.set(write.state, nth);
      if (write.state === kill.state && nth === kill.nth) freeze(`${kill.state}#${kill.nth}`);
    },
  },
  onError: (error, where) => console.error(`[durable-child] ${where}:`, error),
});

// A waiting run holds no timer; keep the worker alive until it is done (or killed).
const keepAlive = setInterval(() => {}, 60_000);

if (config.mode === 'start') {
  const run = runtime.start({
    runId: config.runId,
    messages: [{ role: 'user', content: 'Book 10, 20, 30, 40' }],
  });
  // The person answers a moment after the question is stored, unless the test kills the worker there.
  const killedWhileAsking =
    typeof config.killAt === 'object' && config.killAt.state === 'awaiting.clarification';
  if (!killedWhileAsking) answerWhenAsked(run, 30);
  await run.result();
  await run.persisted();
  writeSync(1, 'FINISHED without being killed\n');
  await runtime.close();
  await store.close();
  clearInterval(keepAlive);
} else {
  const report: ResumeReport = { outcomes: [] };
  const unfinished = await runtime.list({ status: ['running', 'awaiting'] });
  await Promise.all(
    unfinished.map(async (stored) => {
      const run = await claim(stored.runId);
      const resumedFrom = run.state;
      answerWhenAsked(run, 0);
      const outcome = await run.result();
      await run.persisted();
      report.outcomes.push({
        runId: stored.runId,
        status: outcome.status,
        resumedFrom,
        toolMessages: outcome.transcript.flatMap((message) =>
          message.role === 'tool' ? [message.toolCallId] : [],
        ),
      });
    }),
  );
  await runtime.close();
  await store.close();
  clearInterval(keepAlive);
  writeSync(1, `${JSON.stringify(report)}\n`);
}

/** Answers the run's question (now or when it is asked), `afterMs` after it is asked. */
function answerWhenAsked(run: RunHandle, afterMs: number): void {
  let answered = false;
  const answer = () => {
    if (answered) return;
    answered = true;
    setTimeout(() => void run.provideClarification({ id: 'book-40', answer: 'yes' }), afterMs);
  };
  if (run.state === 'awaiting.clarification') answer();
  run.events$.subscribe((event) => {
    if (event.type === 'await_clarification') answer();
  });
}

/** Resumes a run, waiting out the lease of the killed process that held it. */
async function claim(runId: string): Promise<RunHandle> {
  for (;;) {
    try {
      return await runtime.resume(runId);
    } catch (error) {
      if (!(error instanceof RunConflictError) || error.leaseUntil === undefined) throw error;
      await delay(Math.max(10, error.leaseUntil - Date.now() + 20));
    }
  }
}
