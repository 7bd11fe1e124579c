/**
 * `node --import ./bench/as-built.mjs bench/hibernation.bench.ts [--runs 10000] [--rate 0.01] [--seconds 10] [--store sqlite|postgres]`
 * (issue 36 item 3; docs/benchmarks.md §Hibernation): `runs` runs wait for a clarification on a
 * durable store and hibernate (`durable.hibernateAfterMs`, 200 ms here instead of the default
 * 60 s); the app keeps their ids only. Then `rate` of them a second (1%: 100 a second of 10,000)
 * are answered by id (`runtime.provideClarification`) for `seconds`, each answer finishing its run
 * (the planner's next turn is its final response). Reported:
 *
 * - heap per hibernated run: heapUsed after a full GC with every run hibernated, less before
 *   they started (after 20 warm-up runs), over `runs`;
 * - answer latency p50 / p99: from the call until it resolves (the run restored from the store
 *   and the answer taken), and until the run's result (its remaining step and writes);
 * - throughput: answered runs completed per second, at the rate, and for a burst of 1,000 at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { PlanInput, Planner, PlanResult } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { collectGarbage } from './idle-heap.bench.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
};

/** First turn: ask; after the answer: done. */
const planner: Planner = {
  planStart: async (_: PlanInput): Promise<PlanResult> => ({
    await: { clarification: { id: 'q', question: 'Which order?', missingFields: ['order'] } },
  }),
  planResume: async (): Promise<PlanResult> => ({ finalResponse: { text: 'done' } }),
};

export interface HibernationFigures {
  runs: number;
  heapBytesPerRun: number;
  answerMs: { p50: number; p99: number };
  completedMs: { p50: number; p99: number };
  answeredPerSecond: number;
  /** 1,000 answers at once: how long they took, and each one's latency to its completed run. */
  burst: { runs: number; seconds: number; perSecond: number; completedMs: { p50: number; p99: number } };
}

export async function benchHibernation(options: {
  runs: number;
  rate: number;
  seconds: number;
  store: RunStore;
}): Promise<HibernationFigures> {
  const { runs, rate, seconds, store } = options;
  const runtime = createRuntime({
    agent: { id: 'bench' },
    planner,
    store,
    telemetry: false,
    durable: { hibernateAfterMs: 200 },
  });
  const hibernated = async (ids: string[]) => {
    while (ids.some((id) => runtime.get(id) !== undefined)) await sleep(50);
    await sleep(300); // the releases that follow each hibernation
  };
  const startBatch = async (prefix: string, count: number): Promise<string[]> => {
    const started = Array.from({ length: count }, (_, i) =>
      runtime.start({ runId: `${prefix}-${i}`, messages: [{ role: 'user', content: 'Refund my order' }] }),
    );
    await Promise.all(started.map((run) => run.persisted()));
    return started.map((run) => run.runId);
  };
  try {
    await hibernated(await startBatch('warm', 20));
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    const ids: string[] = [];
    for (let at = 0; at < runs; at += 250)
      ids.push(...(await startBatch(`h-${at}`, Math.min(250, runs - at))));
    await hibernated(ids);
    collectGarbage();
    const heapBytesPerRun = Math.round((process.memoryUsage().heapUsed - before) / runs);

    // Answers at `rate` of the runs a second, spread evenly.
    const perSecond = Math.max(1, Math.round(runs * rate));
    let answer: number[] = [];
    let completed: number[] = [];
    const pending: Promise<void>[] = [];
    let next = 0;
    const answerOne = async (runId: string) => {
      const at = performance.now();
      const run = await runtime.provideClarification(runId, { id: 'q', answer: '42' });
      answer.push(performance.now() - at);
      const outcome = await run.result();
      if (outcome.status !== 'completed') throw new Error(`run ${runId} ${outcome.status}`);
      completed.push(performance.now() - at);
    };
    const started = performance.now();
    for (let tick = 0; tick < seconds * perSecond && next < ids.length; tick++) {
      const due = started + (tick * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(answerOne(ids[next++]!));
    }
    await Promise.all(pending);
    const answeredPerSecond = Math.round((completed.length / (performance.now() - started)) * 1000);
    const atRate = {
      answerMs: { p50: round(quantile(answer, 0.5)), p99: round(quantile(answer, 0.99)) },
      completedMs: { p50: round(quantile(completed, 0.5)), p99: round(quantile(completed, 0.99)) },
    };
    answer = [];
    completed = [];

    const burstIds = ids.slice(next, next + 1000);
    const burstStarted = performance.now();
    await Promise.all(burstIds.map(answerOne));
    const burstSeconds = (performance.now() - burstStarted) / 1000;
    return {
      runs,
      heapBytesPerRun,
      ...atRate,
      answeredPerSecond,
      burst: {
        runs: burstIds.length,
        seconds: round(burstSeconds),
        perSecond: Math.round(burstIds.length / burstSeconds),
        completedMs: { p50: round(quantile(completed, 0.5)), p99: round(quantile(completed, 0.99)) },
      },
    };
  } finally {
    await runtime.close();
  }
}

const round = (value: number) => Math.round(value * 100) / 100;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '10000' },
      rate: { type: 'string', default: '0.01' },
      seconds: { type: 'string', default: '10' },
      store: { type: 'string', default: 'sqlite' },
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'toolwarden-hibernate-'));
  let store: RunStore;
  let schema: string | undefined;
  if (values.store === 'postgres') {
    const { postgresStore } = await import('../stores/postgres-store.ts');
    const { DEFAULT_POSTGRES_TEST_URL } = await import('../test/support/postgres-test-database.ts');
    schema = `tw_hibernate_${process.pid}`;
    store = postgresStore({
      connectionString: process.env.TOOLWARDEN_PG_URL || DEFAULT_POSTGRES_TEST_URL,
      schema,
    });
  } else {
    store = sqliteStore({ path: join(dir, 'hibernate.db') });
  }
  try {
    const figures = await benchHibernation({
      runs: Number(values.runs),
      rate: Number(values.rate),
      seconds: Number(values.seconds),
      store,
    });
    console.log(
      `hibernation (${values.store} store, ${figures.runs} waiting runs, the app keeps run ids only)`,
    );
    console.log(`  heap per hibernated run      ${figures.heapBytesPerRun} bytes (target ≤ 1,024)`);
    console.log(
      `  answer (restore + take it)   p50 ${figures.answerMs.p50} ms, p99 ${figures.answerMs.p99} ms`,
    );
    console.log(
      `  answer to completed run      p50 ${figures.completedMs.p50} ms, p99 ${figures.completedMs.p99} ms`,
    );
    console.log(
      `  throughput at ${Number(values.rate) * 100}% a second  ${figures.answeredPerSecond} runs/s`,
    );
    console.log(
      `  burst of ${figures.burst.runs} answers at once  ${figures.burst.seconds} s: ${figures.burst.perSecond} runs/s (to completed p50 ${figures.burst.completedMs.p50} ms, p99 ${figures.burst.completedMs.p99} ms)`,
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
