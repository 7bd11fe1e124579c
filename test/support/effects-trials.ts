/**
 * The effect trials of issue 34 (docs/durability.md §Effects, §Recovery), one trial a call:
 * `test/reliability/effects-kill.test.ts` runs a few, `test/reliability/effects-trials.ts` runs many and
 * prints the counts. Each trial works in a fresh SQLite file or PostgreSQL schema, with the worker
 * processes of `effects-child.ts`.
 *
 * - {@link twoLiveInstancesTrial}: a worker starts 8 runs of 3 side-effecting steps under owner
 *   `pod-1` and is SIGKILLed while they run; two new workers, both `pod-1` with `recover`, start
 *   at once.
 * - {@link killAfterEffectTrial}: a worker is SIGKILLed while each of its 8 runs' first call has
 *   had its effect and not returned (a tool that must not run twice); one new worker recovers.
 *
 * Counted from the ledger of effects (one line per effect, with the call's idempotency key):
 * an effect is doubled when two lines share a key; a run is lost when the store does not hold it
 * `completed` with all its steps at the end.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresStore } from '../../stores/postgres-store.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import type { EffectsChildConfig, EffectsReport, LedgerEntry } from './effects-child.ts';
import { type Handover, handoversOf } from './effects-leases.ts';
import { dropSchema } from './postgres-test-database.ts';
import { readJsonLines, spawnWorker, waitForLine } from './worker-output.ts';

const CHILD = join(import.meta.dirname, 'effects-child.ts');
const RUNS = 8;
const STEPS = 3;

/** Where a trial keeps its runs: `sqlite`, or PostgreSQL at `url`. */
export type TrialStore = { kind: 'sqlite' } | { kind: 'postgres'; url: string };

/** What one trial found. */
export interface TrialOutcome {
  /** Idempotency keys with more than one effect in the ledger. */
  doubled: number;
  /** Runs not `completed` with all their steps at the end. */
  lost: number;
  /** Runs two recovering workers both hosted (handed to `onRecovered` in both). */
  recoveredTwice: number;
  /**
   * How runs passed between the recovering workers (effects-leases.ts): `overlap` (two live
   * holders at once: a bug), `takeover` (after the first one's lease lapsed), `release`, `unclear`.
   */
  handovers: Handover[];
  /** Calls one recovering worker found in doubt (and settled from the ledger). */
  inDoubt: number;
  /** Calls of the in-doubt list whose effect had happened (resolved `done`). */
  inDoubtDone: number;
  effects: number;
  /** What each recovering worker reported. */
  reports: EffectsReport[];
}

interface TrialSpace {
  base: Omit<EffectsChildConfig, 'mode' | 'worker'>;
  open(): RunStore;
  dispose(): Promise<void>;
}

function space(store: TrialStore, options: Partial<EffectsChildConfig>): TrialSpace {
  const dir = mkdtempSync(join(tmpdir(), 'toolwarden-effects-'));
  const ledger = join(dir, 'ledger.jsonl');
  const common = { ledger, owner: 'pod-1', runs: RUNS, steps: STEPS, leaseMs: 1000, ...options };
  if (store.kind === 'sqlite') {
    const db = join(dir, 'runs.db');
    return {
      base: { ...common, db },
      open: () => sqliteStore({ path: db }),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `tw_effects_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return {
    base: { ...common, db: store.url, schema },
    open: () => postgresStore({ connectionString: store.url, schema }),
    dispose: async () => {
      rmSync(dir, { recursive: true, force: true });
      await dropSchema(store.url, schema);
    },
  };
}

async function startAndKill(trial: TrialSpace, ready: RegExp, count: number): Promise<void> {
  const first = spawnWorker(CHILD, { ...trial.base, mode: 'start', worker: 'first' });
  for (let seen = 0; seen < count; ) {
    await waitForLine(first.lines, ready, first.exited, 60_000);
    seen = first.lines.filter((line) => ready.test(line)).length;
    if (seen < count) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  first.child.kill('SIGKILL');
  if ((await first.exited) !== 'SIGKILL') throw new Error('the first worker did not die by SIGKILL');
}

async function recoverWith(trial: TrialSpace, workers: string[], options: Partial<EffectsChildConfig> = {}) {
  const running = workers.map((worker) =>
    spawnWorker(CHILD, { ...trial.base, ...options, mode: 'recover', worker }),
  );
  return Promise.all(
    running.map(async (child) => {
      const line = await waitForLine(child.lines, /^\{/, child.exited, 180_000);
      await child.exited;
      return JSON.parse(line) as EffectsReport;
    }),
  );
}

async function outcomeOf(trial: TrialSpace, reports: EffectsReport[]): Promise<TrialOutcome> {
  const effects = readJsonLines<LedgerEntry>(trial.base.ledger);
  const perKey = new Map<string, number>();
  for (const entry of effects) perKey.set(entry.idempotencyKey, (perKey.get(entry.idempotencyKey) ?? 0) + 1);
  const store = trial.open();
  let lost = 0;
  try {
    for (let i = 0; i < RUNS; i++) {
      const run = await store.load(`run-${i}`);
      const booked = effects.filter((entry) => entry.runId === `run-${i}`);
      const keys = new Set(booked.map((entry) => entry.idempotencyKey));
      if (run?.status !== 'completed' || keys.size !== STEPS) lost++;
    }
  } finally {
    await store.close();
  }
  const hosts = new Map<string, number>();
  for (const report of reports)
    for (const runId of report.recovered) hosts.set(runId, (hosts.get(runId) ?? 0) + 1);
  const inDoubt = reports.flatMap((report) => report.inDoubt);
  const leaseMs = trial.base.leaseMs ?? 1000;
  return {
    doubled: [...perKey.values()].filter((n) => n > 1).length,
    lost,
    recoveredTwice: [...hosts.values()].filter((n) => n > 1).length,
    handovers: handoversOf(
      reports.map((report) => ({ worker: report.worker, holder: report.holder, ops: report.leases })),
      leaseMs,
    ),
    inDoubt: inDoubt.length,
    inDoubtDone: inDoubt.filter((call) => call.settled === 'done').length,
    effects: effects.length,
    reports,
  };
}

/**
 * Issue 34's first trial: SIGKILL with 8 runs in flight, then two workers under the same owner
 * name, both with `recover`, started at once. Calls left in doubt are settled from the ledger.
 */
export async function twoLiveInstancesTrial(store: TrialStore): Promise<TrialOutcome> {
  const trial = space(store, {});
  try {
    await startAndKill(trial, /^READY$/, 1);
    const reports = await recoverWith(trial, ['second', 'third']);
    return await outcomeOf(trial, reports);
  } finally {
    await trial.dispose();
  }
}

/**
 * SIGKILL while each run's first call (a tool that must not run twice) has had its effect and not
 * returned; one worker recovers. With `reconcile`, the tool's `reconcile` settles the calls;
 * without, they wait in `awaiting.inDoubt` and the worker resolves them from the ledger.
 */
export async function killAfterEffectTrial(store: TrialStore, reconcile = false): Promise<TrialOutcome> {
  const trial = space(store, { hangAfterEffect: true, ...(reconcile ? { reconcile: true } : {}) });
  try {
    await startAndKill(trial, /^EFFECT /, RUNS);
    const reports = await recoverWith(trial, ['second'], { hangAfterEffect: false });
    return await outcomeOf(trial, reports);
  } finally {
    await trial.dispose();
  }
}
