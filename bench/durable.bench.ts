/**
 * What durable runs cost (issue 7, docs/durability.md), on the reference loop of `bench/run.ts` (10 steps of
 * one `bench.add` call with zod validation, then a final response):
 *
 * - snapshot size: the largest and the final snapshot of the run, in bytes of JSON, as XState
 *   persists it (`getPersistedSnapshot()`) and the store keeps it;
 * - persist cost: the time of each accepted write (`create`/`save` with its events) on a SQLite
 *   file, µs, and the write time per step; and the run's wall time per step on SQLite, memory
 *   and a store that keeps nothing, to show what waiting for the writes costs a run;
 * - resume latency: `runtime.resume(runId)` of an awaiting run from the SQLite file in a fresh
 *   runtime (claim = load, unpack, restore, start), ms.
 *
 * Targets (issue 7): snapshot ≤ 8 KB, persist ≤ 2 ms per step on SQLite, resume ≤ 5 ms.
 *
 *     node --import tsx bench/durable.bench.ts
 *     node --import tsx bench/durable.bench.ts --runs 100
 *
 * @module
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { PersistedWrite } from '../runtime/durable/run-persister.ts';
import { memoryStore } from '../stores/memory-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { discardingStore } from './support/reference-loop.ts';

export interface DurableBenchOptions {
  /** Measured 10-step runs per store (after warm-up). Default 50. */
  runs?: number;
  /** Measured resumes. Default 100. */
  resumes?: number;
  /** Print the tables to stdout. Default true. */
  print?: boolean;
}

export interface DurableBenchResult {
  snapshot: {
    /** Largest snapshot of the run, bytes of JSON, as XState persists it and the store keeps it. */
    maxBytes: number;
    /** The state the largest snapshot was taken in. */
    maxState: string;
    finalBytes: number;
  };
  persist: {
    /** Accepted writes per run (create + saves). */
    writesPerRun: number;
    /** Microseconds per write on the SQLite file. */
    writeMedianUs: number;
    writeP95Us: number;
    /** Write time per step: the median write times the writes per step, µs. */
    perStepUs: number;
    /** The same from the mean write (checkpoints and scheduling outliers included), µs. */
    perStepMeanUs: number;
  };
  /** Median wall time of a run per step, µs, by store. */
  runPerStepUs: { sqlite: number; memory: number; discard: number };
  resume: {
    /** Milliseconds per `runtime.resume(runId)` of an awaiting run, SQLite file. */
    medianMs: number;
    p95Ms: number;
  };
}

export const STEPS = 10;

const addTool = defineTool({
  id: 'bench.add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  output: z.object({ sum: z.number() }),
  execute: async ({ a, b }) => ({ sum: a + b }),
});

/** 10 turns of one call, then a final response; decided from the transcript. */
function loopPlanner(awaitAtEnd = false) {
  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const done = input.messages.filter((message) => message.role === 'tool').length;
    if (done < STEPS) return { toolCalls: [{ name: 'bench.add', input: { a: done, b: 1 } }] };
    if (awaitAtEnd && input.messages.at(-1)?.role !== 'user') {
      return { await: { clarification: { id: 'ok', question: 'Shall I answer?', missingFields: [] } } };
    }
    return { finalResponse: { text: `sum of ${STEPS} steps` } };
  };
  return { planStart: decide, planResume: decide };
}

const prompt = [{ role: 'user' as const, content: 'Add the numbers' }];

/** Runs the benchmark on a temporary SQLite file. */
export async function benchDurable(options: DurableBenchOptions = {}): Promise<DurableBenchResult> {
  const runs = options.runs ?? 50;
  const resumes = options.resumes ?? 100;
  const dir = await mkdtemp(join(tmpdir(), 'toolwarden-durable-bench-'));
  try {
    const snapshot = await measureSnapshots();
    const sqlite = await measureRuns(sqliteStore({ path: join(dir, 'runs.db') }), runs);
    const memory = await measureRuns(memoryStore(), runs);
    const discard = await measureRuns(discardingStore(), runs);
    const writes = sqlite.writes.map((write) => write.durationMs);
    const perRun = writes.length / (runs + WARM_UP);
    const result: DurableBenchResult = {
      snapshot,
      persist: {
        writesPerRun: Math.round(perRun * 10) / 10,
        writeMedianUs: quantile(writes, 0.5) * 1000,
        writeP95Us: quantile(writes, 0.95) * 1000,
        perStepUs: (quantile(writes, 0.5) * 1000 * perRun) / STEPS,
        perStepMeanUs: ((writes.reduce((sum, ms) => sum + ms, 0) / (runs + WARM_UP)) * 1000) / STEPS,
      },
      runPerStepUs: {
        sqlite: (quantile(sqlite.runMs, 0.5) * 1000) / STEPS,
        memory: (quantile(memory.runMs, 0.5) * 1000) / STEPS,
        discard: (quantile(discard.runMs, 0.5) * 1000) / STEPS,
      },
      resume: await measureResume(join(dir, 'resume.db'), resumes),
    };
    if (options.print ?? true) print(result);
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const WARM_UP = 5;

/** Sizes of every snapshot of one 10-step run. */
async function measureSnapshots(): Promise<DurableBenchResult['snapshot']> {
  const runtime = createRuntime({
    agent: { id: 'bench' },
    planner: loopPlanner(),
    tools: [addTool],
    telemetry: false,
  });
  const run = runtime.start({ messages: prompt });
  let maxBytes = 0;
  let maxState = '';
  const measure = () => {
    const bytes = JSON.stringify(run.getPersistedSnapshot()).length;
    if (bytes > maxBytes) {
      maxBytes = bytes;
      maxState = run.state;
    }
  };
  run.actor.subscribe(measure);
  measure();
  await run.result();
  const final = run.getPersistedSnapshot();
  await runtime.close();
  return { maxBytes, maxState, finalBytes: JSON.stringify(final).length };
}

/** Wall time of `runs` 10-step runs (after warm-up), and every write they made. */
async function measureRuns(
  store: RunStore,
  runs: number,
): Promise<{ runMs: number[]; writes: PersistedWrite[] }> {
  const writes: PersistedWrite[] = [];
  const runtime = createRuntime({
    agent: { id: 'bench' },
    planner: loopPlanner(),
    tools: [addTool],
    store,
    telemetry: false,
    durable: { onPersisted: (write) => writes.push(write) },
  });
  const runMs: number[] = [];
  try {
    for (let i = 0; i < WARM_UP + runs; i++) {
      const started = performance.now();
      const run = runtime.start({ messages: prompt });
      await run.result();
      await run.persisted();
      if (i >= WARM_UP) runMs.push(performance.now() - started);
    }
  } finally {
    await runtime.close();
    await store.close();
  }
  return { runMs, writes };
}

/** `resume` of awaiting runs stored by one runtime, in a fresh runtime on the same file. */
async function measureResume(path: string, resumes: number): Promise<DurableBenchResult['resume']> {
  const first = sqliteStore({ path });
  const writer = createRuntime({
    agent: { id: 'bench' },
    planner: loopPlanner(true),
    tools: [addTool],
    store: first,
    telemetry: false,
  });
  const ids: string[] = [];
  for (let i = 0; i < WARM_UP + resumes; i++) {
    const run = writer.start({ messages: prompt });
    ids.push(run.runId);
    await new Promise<void>((resolve) => {
      const subscription = run.events$.subscribe((event) => {
        if (event.type === 'await_clarification') resolve();
      });
      if (run.state === 'awaiting.clarification') resolve();
      void subscription;
    });
    await run.persisted();
  }
  await writer.close();
  await first.close();

  const store = sqliteStore({ path });
  const reader = createRuntime({
    agent: { id: 'bench' },
    planner: loopPlanner(true),
    tools: [addTool],
    store,
    telemetry: false,
  });
  const times: number[] = [];
  try {
    for (const [index, runId] of ids.entries()) {
      const started = performance.now();
      const run = await reader.resume(runId);
      const elapsed = performance.now() - started;
      if (run.state !== 'awaiting.clarification') throw new Error(`resumed into ${run.state}`);
      if (index >= WARM_UP) times.push(elapsed);
    }
    await reader.flush();
  } finally {
    await reader.close();
    await store.close();
  }
  return { medianMs: quantile(times, 0.5), p95Ms: quantile(times, 0.95) };
}

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function print(result: DurableBenchResult): void {
  const { snapshot, persist, runPerStepUs, resume } = result;
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB (${bytes} B)`;
  const rows: [string, string, string][] = [
    ['snapshot, largest', kb(snapshot.maxBytes), `in ${snapshot.maxState}; target ≤ 8 KB`],
    ['snapshot, final', kb(snapshot.finalBytes), ''],
    ['writes per 10-step run', String(persist.writesPerRun), 'create + saves, events included'],
    [
      'write, SQLite file, median / p95',
      `${persist.writeMedianUs.toFixed(0)} / ${persist.writeP95Us.toFixed(0)} µs`,
      '',
    ],
    [
      'persist cost per step, SQLite file, median / mean',
      `${persist.perStepUs.toFixed(0)} / ${persist.perStepMeanUs.toFixed(0)} µs`,
      'target ≤ 2 ms',
    ],
    [
      'run wall time per step: SQLite / memory / none',
      `${runPerStepUs.sqlite.toFixed(0)} / ${runPerStepUs.memory.toFixed(0)} / ${runPerStepUs.discard.toFixed(0)} µs`,
      'tools wait for their call to be stored',
    ],
    [
      'resume (claim, restore, start), median / p95',
      `${resume.medianMs.toFixed(2)} / ${resume.p95Ms.toFixed(2)} ms`,
      'target ≤ 5 ms',
    ],
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const [name, value, note] of rows) {
    console.log(`${name.padEnd(widths[0]!)}  ${value.padStart(widths[1]!)}  ${note}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runsFlag = process.argv.indexOf('--runs');
  await benchDurable(runsFlag > 0 ? { runs: Number(process.argv[runsFlag + 1]) } : {});
}
