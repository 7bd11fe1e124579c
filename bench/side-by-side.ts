/**
 * `npm run bench -- --peers`: toolwarden beside its yardstick, the chart's floor
 * (support/chart-floor.ts), and beside the AI SDK, OpenAI Agents JS and LangGraph.js on the
 * reference loop (issue 17 item 3, issue 29; docs/benchmarks.md §Side by side).
 *
 * How it measures (issue 29 item 5): every variant in a process of its own
 * (support/variant-process.ts), for all run lengths, shortest first. At each length the processes
 * warm up at once (`--warm-up-steps` steps' worth of runs, or `--warm-up-cpu-ms` of their CPU
 * time: a wall-time bound would leave them cold on a loaded machine), then take turns in
 * fixed time blocks, A B C … A B C, round after round (support/rotation.ts); each run is timed by
 * its process's CPU time (GC included) per step. Per variant: the median, the interquartile range,
 * the range of block medians, and the ratios of the median to the chart floor's and to AI SDK 6
 * `generateText`'s, at 10 and at 500 steps.
 * `--one-process` measures all the variants in this process instead (the old way: the garbage of
 * one is collected in another's time). Then what a run holds and costs beyond the loop:
 *
 * - heap per idle run: 10,000 runs waiting in `awaiting.clarification`, bytes of heap each after a
 *   full GC: live in the default runtime, and evicted (`durable: { evictAfterMs }`) to the memory
 *   store and to SQLite;
 * - throughput: 1,000 concurrent 10-step runs (runs/s) on the default runtime, on SQLite, and
 *   with the AI SDK;
 * - durability: the stored snapshot's bytes and the persist time per step on SQLite
 *   (`benchDurable` of `bench/durable.bench.ts`).
 *
 * Printed as tables and written as JSON (`--json <path>`, default
 * `.artifacts/bench/side-by-side.json`). The peers are development dependencies of this bench
 * only (`bench/peers/package.json`), installed on first use with `bash scripts/bench-peers.sh`.
 *
 *     npm run bench -- --peers
 *     npm run bench -- --peers --steps 10 --rounds 3 --block-ms 500    # quicker
 *     npm run bench -- --peers --one-process                            # all variants in one process
 *
 * Options: `--steps 10,500` (run lengths), `--rounds N` (measured rounds, default 6),
 * `--block-ms N` (a variant's turn, default 1000; at least one run), `--warm-up-steps N` (default
 * 4,000), `--warm-up-cpu-ms N` (default 5,000), `--runs N` (at most N measured runs per variant and
 * length, spread over the rounds, and at most N warm-up runs; default: no bound),
 * `--variants a,b` (names containing these, default all), `--one-process`, `--idle N` (default
 * 10,000), `--concurrent N` (default 1,000), `--json path`, `--no-extras` (the loop only).
 *
 * @module
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { benchDurable } from './durable.bench.ts';
import { type BlockLimits, type BlockSamples, type Loop, runBlock } from './support/cpu-block.ts';
import { addTool } from './support/reference-loop.ts';
import { aggregateBlocks, type MeasuredBlock, rotationSchedule, summarize } from './support/rotation.ts';
import { startVariantProcess } from './support/variant-process.ts';
import {
  BASELINE,
  ensurePeers,
  loadPeers,
  makeVariantLoop,
  type PeerModule,
  variantNames,
  YARDSTICK,
} from './support/variants.ts';

/** One variant at one run length: CPU µs per step over its measured runs (GC included). */
export interface VariantFigures {
  name: string;
  steps: number;
  runs: number;
  /** Measured blocks (rounds). */
  blocks: number;
  medianUs: number;
  /** 25th and 75th percentile, µs per step. */
  p25Us: number;
  p75Us: number;
  minUs: number;
  maxUs: number;
  /** Lowest and highest median of one block. */
  blockMedianUs: { min: number; max: number };
  /** Median wall-clock µs per step of the same runs. */
  wallMedianUs: number;
  /** Median ÷ the chart floor's median at the same length. */
  vsFloor: number;
  /** Median ÷ AI SDK 6's median at the same length (below 1: faster than the AI SDK). */
  vsAiSdk: number;
}

export interface SideBySideResult {
  node: string;
  date: string;
  /** `processes`: each variant in its own process; `one-process`: all in the bench's. */
  mode: 'processes' | 'one-process';
  /** CPU time of the variant's process per step (user + system: every thread, GC included). */
  metric: 'cpu';
  rounds: number;
  blockMs: number;
  loops: VariantFigures[];
  /** Median µs per step at the longest length ÷ at the shortest, by variant. */
  growth: Record<string, number>;
  idle?: IdleHeap;
  concurrent?: { runs: number; steps: number; runsPerSecond: Record<string, number> };
  durable?: { storedSnapshotBytes: number; persistUsPerStep: number; sqliteRunUsPerStep: number };
}

/** Runs blocks of one variant: in its own process or in this one. */
interface BlockRunner {
  runBlock(steps: number, limits: BlockLimits): Promise<BlockSamples>;
  close(): Promise<void>;
}

function inThisProcess(name: string, dir: string): BlockRunner {
  const loops = new Map<number, Loop>();
  return {
    async runBlock(steps, limits) {
      if (!loops.has(steps)) loops.set(steps, await makeVariantLoop(name, steps, dir));
      return runBlock(loops.get(steps)!, steps, limits);
    },
    close: async () => {},
  };
}

interface MeasureOptions {
  rounds: number;
  blockMs: number;
  /** Measured runs per variant at most (spread over the rounds), and warm-up runs at most. */
  runs?: number;
  /** Warm-up per variant and length: this many steps' worth of runs (at least one run) … */
  warmUpSteps: number;
  /** … or this much CPU time of the variant's process (ms), whichever comes first. */
  warmUpCpuMs: number;
  oneProcess: boolean;
}

/** A runner per variant: its process (started in parallel), or this process with `--one-process`. */
async function startRunners(names: string[], options: MeasureOptions, dir: string) {
  const runners = new Map<string, BlockRunner>();
  if (options.oneProcess) {
    for (const name of names) runners.set(name, inThisProcess(name, dir));
    return runners;
  }
  const started = await Promise.allSettled(names.map((name) => startVariantProcess(name, dir)));
  for (const [i, s] of started.entries()) if (s.status === 'fulfilled') runners.set(names[i]!, s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await closeRunners(runners);
    throw failed.reason;
  }
  return runners;
}

const closeRunners = (runners: Map<string, BlockRunner>) =>
  Promise.all([...runners.values()].map((runner) => runner.close()));

/**
 * Every variant at one length: a warm-up (the processes at once; one after another in one
 * process), then the rotation of fixed time blocks, A B C … A B C; aggregated per variant.
 */
async function measureLength(
  runners: Map<string, BlockRunner>,
  steps: number,
  options: MeasureOptions,
): Promise<VariantFigures[]> {
  const names = [...runners.keys()];
  const warmUp: BlockLimits = {
    ms: Number.POSITIVE_INFINITY,
    cpuMs: options.warmUpCpuMs,
    maxRuns: Math.min(
      Math.max(1, Math.ceil(options.warmUpSteps / steps)),
      options.runs ?? Number.POSITIVE_INFINITY,
    ),
  };
  process.stdout.write(`  ${steps} steps: warming up`);
  if (options.oneProcess) for (const runner of runners.values()) await runner.runBlock(steps, warmUp);
  else await Promise.all([...runners.values()].map((runner) => runner.runBlock(steps, warmUp)));
  const limits: BlockLimits = {
    ms: options.blockMs,
    ...(options.runs ? { maxRuns: Math.max(1, Math.ceil(options.runs / options.rounds)) } : {}),
  };
  const schedule = rotationSchedule(names, options.rounds);
  const measured: MeasuredBlock[] = [];
  const wall = new Map<string, number[]>(names.map((name) => [name, []]));
  for (const [i, block] of schedule.entries()) {
    const samples = await runners.get(block.variant)!.runBlock(steps, limits);
    measured.push({ ...block, samples: samples.cpuUsPerStep });
    wall.get(block.variant)!.push(...samples.wallUsPerStep);
    process.stdout.write(`\r  ${steps} steps: block ${i + 1}/${schedule.length}`);
  }
  process.stdout.write('\n');
  return aggregateBlocks(measured, { yardstick: YARDSTICK, baseline: BASELINE }).map((a) => ({
    name: a.variant,
    steps,
    runs: a.n,
    blocks: a.blocks,
    medianUs: round1(a.median),
    p25Us: round1(a.p25),
    p75Us: round1(a.p75),
    minUs: round1(a.min),
    maxUs: round1(a.max),
    blockMedianUs: { min: round1(a.blockMedians.min), max: round1(a.blockMedians.max) },
    wallMedianUs: round1(summarize(wall.get(a.variant)!).median),
    vsFloor: round2(a.vsYardstick),
    vsAiSdk: round2(a.vsBaseline),
  }));
}

/** A planner for many runs at once: `steps` calls per run, counted by run id. */
function countingPlanner(steps: number, awaitFirst = false) {
  const turns = new Map<string, number>();
  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const turn = (turns.get(input.runId) ?? 0) + 1;
    turns.set(input.runId, turn);
    if (awaitFirst && turn === 1)
      return { await: { clarification: { id: 'q', question: 'Which numbers?', missingFields: ['a'] } } };
    if (turn <= steps) return { toolCalls: [{ name: 'bench.add', input: { a: turn, b: 1 } }] };
    turns.delete(input.runId);
    return { finalResponse: { text: 'done' } };
  };
  return { planStart: decide, planResume: decide };
}

const collectGarbage = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** Heap per idle run: live in the default runtime, and evicted to a memory or SQLite store. */
export interface IdleHeap {
  runs: number;
  /** The default runtime: every run's actor stays in memory. */
  bytesPerRun: number;
  /** `durable: { evictAfterMs }`: the actors are dropped; what remains is the store's (docs/durability.md §Eviction). */
  evicted: { memory: number; sqlite: number };
}

/**
 * Heap per run waiting for a person: `count` runs, each in `awaiting.clarification`, after a full
 * GC. Live: the app holds every handle. Evicted: the app keeps run ids only (as a server does)
 * and the runtime evicts runs that wait; an answer restores them (docs/durability.md §Eviction).
 */
async function idleHeap(count: number, dir: string): Promise<IdleHeap> {
  const measure = async (store?: 'memory' | 'sqlite') => {
    const runtime = createRuntime({
      agent: { id: 'bench' },
      planner: countingPlanner(1, true),
      tools: [addTool],
      ...(store === 'sqlite' ? { store: sqliteStore({ path: join(dir, 'idle.db') }) } : {}),
      ...(store ? { durable: { evictAfterMs: 1 } } : {}),
    });
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    let runs: RunHandle[] = [];
    for (let i = 0; i < count; i++)
      runs.push(runtime.start({ runId: `idle-${i}`, messages: [{ role: 'user', content: 'Add' }] }));
    while (runs.some((run) => run.awaiting === null)) await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all(runs.map((run) => run.persisted()));
    if (store) {
      runs = [];
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    collectGarbage();
    const bytesPerRun = Math.round((process.memoryUsage().heapUsed - before) / count);
    for (const run of runs) run.cancel('bench done');
    await Promise.all(runs.map((run) => run.result()));
    await runtime.close();
    return bytesPerRun;
  };
  const bytesPerRun = await measure();
  return {
    runs: count,
    bytesPerRun,
    evicted: { memory: await measure('memory'), sqlite: await measure('sqlite') },
  };
}

/** Runs per second of `count` concurrent `steps`-step runs, by variant. */
async function concurrentRuns(count: number, steps: number, dir: string, peers: PeerModule) {
  const runtimeRuns = async (options: Parameters<typeof createRuntime>[0]['store']) => {
    const runtime = createRuntime({
      agent: { id: 'bench' },
      planner: countingPlanner(steps),
      tools: [addTool],
      ...(options ? { store: options } : {}),
    });
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        runtime.start({ runId: `c-${i}`, messages: [{ role: 'user', content: 'Add' }] }).result(),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    await runtime.close();
    const failed = outcomes.filter((o) => o.status !== 'completed').length;
    if (failed > 0) throw new Error(`${failed} of ${count} concurrent runs did not complete`);
    return Math.round(count / seconds);
  };
  const aiSdk = async () => {
    const started = performance.now();
    await Promise.all(Array.from({ length: count }, () => peers.aiSdkLoop(steps)()));
    return Math.round(count / ((performance.now() - started) / 1000));
  };
  return {
    runs: count,
    steps,
    runsPerSecond: {
      'toolwarden: default runtime': await runtimeRuns(undefined),
      'toolwarden: SQLite store': await runtimeRuns(sqliteStore({ path: join(dir, 'concurrent.db') })),
      'AI SDK 6 generateText': await aiSdk(),
    },
  };
}

/**
 * Runs the side-by-side and the extras; prints tables, writes the JSON report, returns it.
 * @throws when the peers cannot be installed or a variant's run does not end as scripted.
 */
export async function benchSideBySide(argv: string[] = process.argv.slice(2)): Promise<SideBySideResult> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: {
      steps: { type: 'string', default: '10,500' },
      rounds: { type: 'string', default: '6' },
      'block-ms': { type: 'string', default: '1000' },
      'warm-up-steps': { type: 'string', default: '4000' },
      'warm-up-cpu-ms': { type: 'string', default: '5000' },
      runs: { type: 'string' },
      variants: { type: 'string' },
      'one-process': { type: 'boolean', default: false },
      idle: { type: 'string', default: '10000' },
      concurrent: { type: 'string', default: '1000' },
      json: { type: 'string', default: '.artifacts/bench/side-by-side.json' },
      'no-extras': { type: 'boolean', default: false },
    },
  });
  ensurePeers();
  const peers = await loadPeers();
  // Shortest first: a process's longer runs (their heap, their retained runs) come after its short ones.
  const lengths = String(values.steps)
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
  const wanted = values.variants ? String(values.variants).split(',') : [];
  const names = (await variantNames()).filter(
    (name) => wanted.length === 0 || wanted.some((part) => name.includes(part)),
  );
  const options: MeasureOptions = {
    rounds: Number(values.rounds),
    blockMs: Number(values['block-ms']),
    ...(values.runs ? { runs: Number(values.runs) } : {}),
    warmUpSteps: Number(values['warm-up-steps']),
    warmUpCpuMs: Number(values['warm-up-cpu-ms']),
    oneProcess: values['one-process'] === true,
  };
  const dir = mkdtempSync(join(tmpdir(), 'tw-side-by-side-'));
  const result: SideBySideResult = {
    node: process.version,
    date: new Date().toISOString(),
    mode: options.oneProcess ? 'one-process' : 'processes',
    metric: 'cpu',
    rounds: options.rounds,
    blockMs: options.blockMs,
    loops: [],
    growth: {},
  };
  try {
    console.log(
      `side by side: the reference loop (one zod-validated tool call per step); ${names.length} variants, ${
        options.oneProcess ? 'all in this process' : 'each in its own process'
      }, warmed up, then rotated in ${options.blockMs} ms blocks, ${options.rounds} rounds`,
    );
    const runners = await startRunners(names, options, dir);
    try {
      for (const steps of lengths) result.loops.push(...(await measureLength(runners, steps, options)));
    } finally {
      await closeRunners(runners);
    }
    printLoops(result.loops, lengths);
    const shortest = Math.min(...lengths);
    const longest = Math.max(...lengths);
    if (longest > shortest) {
      for (const f of result.loops.filter((l) => l.steps === longest)) {
        const base = result.loops.find((l) => l.steps === shortest && l.name === f.name);
        if (base) result.growth[f.name] = round2(f.medianUs / base.medianUs);
      }
    }
    if (!values['no-extras']) {
      result.idle = await idleHeap(Number(values.idle), dir);
      result.concurrent = await concurrentRuns(Number(values.concurrent), 10, dir, peers);
      const durable = await benchDurable({ runs: 30, resumes: 20, print: false });
      result.durable = {
        storedSnapshotBytes: durable.snapshot.maxBytes,
        persistUsPerStep: round1(durable.persist.perStepUs),
        sqliteRunUsPerStep: round1(durable.runPerStepUs.sqlite),
      };
      printExtras(result);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const json = String(values.json);
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwritten: ${json}`);
  return result;
}

function printLoops(loops: VariantFigures[], lengths: number[]): void {
  const us = (value: number) => value.toFixed(value < 100 ? 1 : 0);
  const ratio = (value: number) => (Number.isNaN(value) ? '–' : `${value.toFixed(2)}×`);
  const row = (cells: string[]) =>
    console.log(
      cells.map((cell, i) => (i === 0 ? cell.padEnd(36) : cell.padStart(i === 2 ? 16 : 12))).join(''),
    );
  for (const steps of lengths) {
    console.log(
      `\n${steps} steps: CPU µs per step (GC included), median, interquartile range, block medians; ratio of the median to the chart floor and to AI SDK 6`,
    );
    row(['variant', 'median', 'IQR', 'blocks', '× floor', '× AI SDK']);
    for (const f of loops.filter((l) => l.steps === steps))
      row([
        f.name,
        us(f.medianUs),
        `${us(f.p25Us)}–${us(f.p75Us)}`,
        `${us(f.blockMedianUs.min)}–${us(f.blockMedianUs.max)}`,
        ratio(f.vsFloor),
        ratio(f.vsAiSdk),
      ]);
  }
}

function printExtras(result: SideBySideResult): void {
  if (result.idle)
    console.log(
      `\nheap per idle awaiting run (${result.idle.runs} runs): ${result.idle.bytesPerRun} bytes live; evicted to the memory store ${result.idle.evicted.memory} bytes, to SQLite ${result.idle.evicted.sqlite} bytes`,
    );
  if (result.concurrent) {
    console.log(`${result.concurrent.runs} concurrent ${result.concurrent.steps}-step runs:`);
    for (const [name, perSecond] of Object.entries(result.concurrent.runsPerSecond))
      console.log(`  ${name.padEnd(34)} ${perSecond} runs/s`);
  }
  if (result.durable)
    console.log(
      `SQLite: stored snapshot ${result.durable.storedSnapshotBytes} bytes, persist ${result.durable.persistUsPerStep} µs/step, run ${result.durable.sqliteRunUsPerStep} µs/step`,
    );
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const round2 = (value: number) => Math.round(value * 100) / 100;
