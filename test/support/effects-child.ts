/**
 * A worker process for the effect trials (issue 34: `test/reliability/effects-kill.test.ts`,
 * `test/reliability/effects-trials.ts`): runs whose tool has a side effect, recorded in a ledger file
 * (JSON Lines, one line per effect, appended with `O_APPEND` so processes never interleave).
 *
 *     node --import tsx test/support/effects-child.ts '<EffectsChildConfig as JSON>'
 *
 * `start` starts `runs` runs of `steps` steps under `owner` and prints `READY` once every run is
 * stored executing a call; with `hangAfterEffect` the tool never returns after its effect and
 * the child prints `EFFECT <toolCallId>` for each (the parent kills it then). `recover` creates a
 * runtime with `durable: { owner, recover: true }` and nothing else; it settles calls left in
 * doubt from the ledger (`resolveFromLedger`, what a person would check) or lets the tool's
 * `reconcile` do it, and prints one {@link EffectsReport} line once the store holds no
 * unfinished run.
 *
 * @module
 */

import { appendFileSync, existsSync, readFileSync, writeSync } from 'node:fs';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import type { RunHandle } from '../../runtime/run-handle.ts';
import { postgresStore } from '../../stores/postgres-store.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { type LeaseOp, leaseLogged } from './effects-leases.ts';
import { readyWhenExecuting } from './ready-when-executing.ts';

export interface EffectsChildConfig {
  mode: 'start' | 'recover';
  /** A SQLite file, or a PostgreSQL URL with `schema`. */
  db: string;
  schema?: string;
  ledger: string;
  owner: string;
  /** A name for this worker in the ledger and its report. */
  worker: string;
  runs?: number;
  steps?: number;
  leaseMs?: number;
  /** `idempotent: true` on the tool (re-run under the same key after a crash); else an effect that must happen once. */
  idempotent?: boolean;
  /** The tool checks the ledger (`reconcile`) when its call is in doubt. */
  reconcile?: boolean;
  /** `start`: the tool's first call in each run never returns after its effect. */
  hangAfterEffect?: boolean;
}

/** One effect the tool had. */
export interface LedgerEntry {
  runId: string;
  toolCallId: string;
  idempotencyKey: string;
  worker: string;
  pid: number;
}

/** What `recover` prints. */
export interface EffectsReport {
  worker: string;
  recovered: string[];
  /** Runs this worker found held by another live instance, with what it was told. */
  held: { runId: string; owner?: string; instance?: string }[];
  /** Calls this worker found in doubt, and how they were settled. */
  inDoubt: { runId: string; toolCallId: string; settled: 'done' | 'not_done' }[];
  outcomes: { runId: string; status: string; text?: string }[];
  /** Errors the runtime reported (`onError`), as `where: message`. */
  errors: string[];
  /** This worker's lease holder (`runtime.instance`) and its store's lease calls (effects-leases.ts). */
  holder: string;
  leases: LeaseOp[];
}

const config = JSON.parse(process.argv[2] ?? '{}') as EffectsChildConfig;
const STEPS = config.steps ?? 3;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ledger = (): LedgerEntry[] =>
  existsSync(config.ledger)
    ? readFileSync(config.ledger, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LedgerEntry)
    : [];

const effectOf = (idempotencyKey: string) =>
  ledger().find((entry) => entry.idempotencyKey === idempotencyKey);

const step = defineTool({
  id: 'work.book',
  description: 'Books one step of work (a side effect: a row in the ledger)',
  input: z.object({ step: z.number().int() }),
  output: z.object({ booked: z.number().int() }),
  ...(config.idempotent ? { idempotent: true } : {}),
  ...(config.reconcile
    ? {
        reconcile: (input: { step: number }, ctx: { idempotencyKey: string }) =>
          effectOf(ctx.idempotencyKey) === undefined
            ? { status: 'not_done' as const }
            : { status: 'done' as const, output: { booked: input.step } },
      }
    : {}),
  execute: async ({ step: n }, ctx) => {
    await delay(40);
    const entry: LedgerEntry = {
      runId: ctx.meta.runId,
      toolCallId: ctx.meta.toolCallId,
      idempotencyKey: ctx.idempotencyKey,
      worker: config.worker,
      pid: process.pid,
    };
    appendFileSync(config.ledger, `${JSON.stringify(entry)}\n`);
    if (config.hangAfterEffect && n === 1) {
      writeSync(1, `EFFECT ${ctx.meta.toolCallId}\n`);
      await new Promise(() => {});
    }
    await delay(40);
    return { booked: n };
  },
});

/** Decides from the transcript alone, so any process can take the run over. */
async function plan(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
  const done = input.messages.filter((message) => message.role === 'tool').length;
  if (done < STEPS) return { toolCalls: [{ name: 'work.book', input: { step: done + 1 } }] };
  return { finalResponse: { text: `${done} steps booked` } };
}

const leases: LeaseOp[] = [];
const store: RunStore = leaseLogged(
  config.schema === undefined
    ? sqliteStore({ path: config.db })
    : postgresStore({ connectionString: config.db, schema: config.schema }),
  leases,
);
const recovered: RunHandle[] = [];
const errors: string[] = [];
const runtime = createRuntime({
  agent: { id: 'worker' },
  planner: { planStart: plan, planResume: plan },
  tools: [step],
  store,
  telemetry: false,
  durable: {
    owner: config.owner,
    leaseMs: config.leaseMs ?? 1000,
    ...(config.mode === 'start' ? { onPersisted: readyWhenExecuting(config.runs ?? 1) } : {}),
    ...(config.mode === 'recover'
      ? { recover: { onRecovered: (run) => void (recovered.includes(run) || recovered.push(run)) } }
      : {}),
  },
  onError: (error, where) =>
    errors.push(`${where}: ${error instanceof Error ? error.message : String(error)}`),
});
const keepAlive = setInterval(() => {}, 60_000);

if (config.mode === 'start') {
  for (let i = 0; i < (config.runs ?? 1); i++) {
    runtime.start({ runId: `run-${i}`, messages: [{ role: 'user', content: `Book job ${i}` }] });
  }
  // Killed by the parent.
} else {
  const held = new Map<string, EffectsReport['held'][number]>();
  const inDoubt: EffectsReport['inDoubt'] = [];
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const unfinished = await runtime.list({ status: ['running', 'awaiting'] });
    if (unfinished.length === 0) break;
    for (const run of unfinished) {
      if (run.awaiting?.kind !== 'in_doubt' || runtime.get(run.runId) === undefined) continue;
      // What a person resolving it would check: did the effect happen under this call's key?
      const resolutions = Object.fromEntries(
        run.awaiting.calls.map((call) => {
          const found = effectOf(call.idempotencyKey);
          inDoubt.push({
            runId: run.runId,
            toolCallId: call.toolCallId,
            settled: found ? 'done' : 'not_done',
          });
          return [
            call.toolCallId,
            found
              ? { status: 'done' as const, output: { booked: (call.input as { step: number }).step } }
              : { status: 'not_done' as const },
          ];
        }),
      );
      await runtime
        .resolveInDoubt(run.runId, resolutions)
        .catch((error: unknown) => errors.push(`resolveInDoubt ${run.runId}: ${(error as Error).message}`));
    }
    const pass = await runtime.recover();
    for (const run of pass.recovered) if (!recovered.includes(run)) recovered.push(run);
    for (const entry of pass.held) held.set(entry.runId, entry);
    await delay(50);
  }
  const outcomes = await Promise.all(
    recovered.map(async (run) => {
      const outcome = await run.result();
      await run.persisted();
      return { runId: run.runId, status: outcome.status, text: outcome.finalResponse?.text };
    }),
  );
  const report: EffectsReport = {
    worker: config.worker,
    recovered: recovered.map((run) => run.runId),
    held: [...held.values()],
    inDoubt,
    outcomes,
    errors,
    holder: runtime.instance,
    leases,
  };
  await runtime.close();
  await store.close();
  clearInterval(keepAlive);
  writeSync(1, `${JSON.stringify(report)}\n`);
}
