/**
 * `npm run bench -- --peers`: toolwarden beside the AI SDK, OpenAI Agents JS and LangGraph.js on
 * the reference loop (issue 17 item 3; docs/benchmarks.md). One process, the variants interleaved
 * in rounds so the load of a shared machine hits all alike; per variant the median and the
 * interquartile range of µs per step, and the ratio to AI SDK 6 `generateText` of the same run,
 * at 10 and at 500 steps. Then what a run holds and costs beyond the loop:
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
 * only (`bench/peers/package.json`), installed on first use with `npm ci --prefix bench/peers`.
 *
 *     npm run bench -- --peers
 *     npm run bench -- --peers --steps 10 --rounds 4 --runs 40    # quicker
 *
 * Options: `--steps 10,500` (run lengths), `--rounds N` (default 8), `--runs N` (measured runs per
 * variant at 10 steps, default 160; a 500-step run is measured once per round), `--idle N`
 * (default 10,000), `--concurrent N` (default 1,000), `--json path`, `--no-extras` (the loop only).
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { sqliteStore } from '../runtime/stores/sqlite-store.ts';
import { benchDurable } from './durable.bench.ts';
import { addTool, discardingStore } from './support/reference-loop.ts';
import { actorLoop, machineLoop, naiveLoop, plainLoop } from './support/toolwarden-loops.ts';

type Loop = () => Promise<void>;

/** The peer loops of `bench/peers/peer-loops.ts` (loaded by URL: its packages live in bench/peers). */
interface PeerModule {
  peerLoops: Record<string, (steps: number) => Loop>;
  aiSdkLoop: (steps: number) => Loop;
}

/** One variant at one run length: µs per step over the measured runs. */
export interface VariantFigures {
  name: string;
  steps: number;
  runs: number;
  medianUs: number;
  /** 25th and 75th percentile, µs per step. */
  p25Us: number;
  p75Us: number;
  /** Median ÷ AI SDK 6's median at the same length (below 1: faster than the AI SDK). */
  vsAiSdk: number;
}

export interface SideBySideResult {
  node: string;
  date: string;
  rounds: number;
  loops: VariantFigures[];
  /** Median µs per step at the longest length ÷ at the shortest, by variant. */
  growth: Record<string, number>;
  idle?: IdleHeap;
  concurrent?: { runs: number; steps: number; runsPerSecond: Record<string, number> };
  durable?: { storedSnapshotBytes: number; persistUsPerStep: number; sqliteRunUsPerStep: number };
}

const peersDir = join(dirname(new URL(import.meta.url).pathname), 'peers');

/** Installs the peers (bench/peers/package-lock.json) when they are not there yet. */
function ensurePeers(): void {
  if (existsSync(join(peersDir, 'node_modules', '@langchain', 'langgraph', 'package.json'))) return;
  console.log('installing the bench peers: npm ci --prefix bench/peers');
  const installed = spawnSync('npm', ['ci', '--prefix', peersDir, '--no-audit', '--no-fund'], {
    stdio: 'inherit',
  });
  if (installed.status !== 0) throw new Error(`npm ci --prefix bench/peers exited with ${installed.status}`);
}

/** The toolwarden variants, made for a run length. */
function toolwardenLoops(steps: number, dir: string): Record<string, Loop> {
  return {
    'toolwarden: default runtime': actorLoop({}, steps),
    'toolwarden: no store, no telemetry': actorLoop({ store: discardingStore(), telemetry: false }, steps),
    'toolwarden: SQLite store': actorLoop(
      { store: sqliteStore({ path: join(dir, `runs-${steps}.db`) }) },
      steps,
    ),
    'toolwarden: run machine alone': machineLoop(steps),
    'naive XState machine': naiveLoop(steps),
    'plain async loop': plainLoop(steps),
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;

async function timeRuns(loop: Loop, runs: number, steps: number, into: number[]): Promise<void> {
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await loop();
    into.push(((performance.now() - started) * 1000) / steps);
  }
}

/** Every variant at one length, interleaved in rounds; the first round warms up. */
async function measureLoops(
  loops: Record<string, Loop>,
  steps: number,
  rounds: number,
  runsPerRound: number,
): Promise<VariantFigures[]> {
  const samples = new Map<string, number[]>(Object.keys(loops).map((name) => [name, []]));
  for (const loop of Object.values(loops)) await timeRuns(loop, runsPerRound, steps, []);
  for (let round = 0; round < rounds; round++) {
    for (const [name, loop] of Object.entries(loops))
      await timeRuns(loop, runsPerRound, steps, samples.get(name)!);
    process.stdout.write(`\r  ${steps} steps: round ${round + 1}/${rounds}`);
  }
  process.stdout.write('\n');
  const figures = [...samples].map(([name, values]) => {
    const sorted = values.sort((a, b) => a - b);
    return {
      name,
      steps,
      runs: sorted.length,
      medianUs: round1(percentile(sorted, 0.5)),
      p25Us: round1(percentile(sorted, 0.25)),
      p75Us: round1(percentile(sorted, 0.75)),
      vsAiSdk: Number.NaN,
    };
  });
  const aiSdk = figures.find((f) => f.name.startsWith('AI SDK'))?.medianUs ?? Number.NaN;
  for (const f of figures) f.vsAiSdk = Math.round((f.medianUs / aiSdk) * 100) / 100;
  return figures;
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
      rounds: { type: 'string', default: '8' },
      runs: { type: 'string', default: '160' },
      idle: { type: 'string', default: '10000' },
      concurrent: { type: 'string', default: '1000' },
      json: { type: 'string', default: '.artifacts/bench/side-by-side.json' },
      'no-extras': { type: 'boolean', default: false },
    },
  });
  ensurePeers();
  const peers = (await import(new URL('./peers/peer-loops.ts', import.meta.url).href)) as PeerModule;
  const lengths = String(values.steps)
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  const rounds = Number(values.rounds);
  const runs = Number(values.runs);
  const dir = mkdtempSync(join(tmpdir(), 'tw-side-by-side-'));
  const result: SideBySideResult = {
    node: process.version,
    date: new Date().toISOString(),
    rounds,
    loops: [],
    growth: {},
  };
  try {
    console.log(`side by side: the reference loop (one zod-validated tool call per step), ${rounds} rounds`);
    for (const steps of lengths) {
      const loops: Record<string, Loop> = { ...toolwardenLoops(steps, dir) };
      for (const [name, make] of Object.entries(peers.peerLoops)) loops[name] = make(steps);
      // A 500-step run of a peer takes seconds: one run per variant per round beyond 10 steps.
      const perRound = steps <= 10 ? Math.max(1, Math.ceil(runs / rounds)) : 1;
      result.loops.push(...(await measureLoops(loops, steps, rounds, perRound)));
    }
    printLoops(result.loops, lengths);
    const shortest = Math.min(...lengths);
    const longest = Math.max(...lengths);
    if (longest > shortest) {
      for (const f of result.loops.filter((l) => l.steps === longest)) {
        const base = result.loops.find((l) => l.steps === shortest && l.name === f.name);
        if (base) result.growth[f.name] = Math.round((f.medianUs / base.medianUs) * 100) / 100;
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
  const names = [...new Set(loops.map((l) => l.name))];
  const cell = (name: string, steps: number) => {
    const f = loops.find((l) => l.name === name && l.steps === steps);
    return f
      ? `${f.medianUs.toFixed(1)} (${f.p25Us.toFixed(0)}–${f.p75Us.toFixed(0)}) ${f.vsAiSdk.toFixed(2)}×`
      : '';
  };
  console.log(
    '\nµs per step: median (interquartile range), ratio to AI SDK 6 generateText at the same length',
  );
  console.log(['variant'.padEnd(36), ...lengths.map((n) => `${n} steps`.padStart(30))].join(''));
  for (const name of names)
    console.log([name.padEnd(36), ...lengths.map((n) => cell(name, n).padStart(30))].join(''));
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
