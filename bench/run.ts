/**
 * What the run actor costs per step (issue 3, "Show"): the same 10-step loop — one tool with zod
 * validation, a scripted planner giving 10 turns of one tool call each and then a final
 * response — run five ways:
 *
 * | variant                            | what runs                                                      |
 * |------------------------------------|----------------------------------------------------------------|
 * | run actor, default runtime         | `createRuntime` defaults + `start` + `result()`: in-memory store written at every state change, telemetry plugin (no SDK), durable runs |
 * | run actor, no store, no telemetry  | the same with a store that keeps nothing and `telemetry: false` |
 * | run machine alone                  | `createActor(runtime.machine)`: the machine and its `steps` actor, no runtime host |
 * | naive XState machine, same work    | one planner invoke and one tool invoke per step (FACTS.md's reference) |
 * | plain async loop                   | `prepareToolCall` + `executeToolCall` + the planner calls       |
 *
 *     npm run bench                      # node --import tsx bench/run.ts
 *     npm run bench -- --peers           # beside the AI SDK, OpenAI Agents, LangGraph (bench/side-by-side.ts)
 *     node --import tsx bench/run.ts --runs 2000 --warm-up 300
 *     node --import tsx bench/run.ts --finished 20000   # heap after fewer finished runs (default 100,000)
 *
 * Prints the median µs per step (wall clock and CPU time), the overhead over the plain loop and
 * the ratio, after a warm-up. Issue 3's target is a median run-actor overhead of at most 30 µs
 * per step; FACTS.md has peers on the same loop (naive XState ≈ 44, AI SDK 6 ≈ 208,
 * LangGraph.js ≈ 745). Then runs `benchStores()` from `bench/store.bench.ts` when that file exists,
 * and `benchRetention()` (`bench/retention.bench.ts`): the heap after 0, 10,000 and 100,000 finished runs.
 */

import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { discardingStore, STEPS } from './support/reference-loop.ts';
import { actorLoop, machineLoop, naiveLoop, plainLoop } from './support/toolwarden-loops.ts';

export { discardingStore, STEPS } from './support/reference-loop.ts';

/** One measured variant: median µs per step, by wall clock and by this process's CPU time. */
export interface LoopFigures {
  name: string;
  wallUsPerStep: number;
  cpuUsPerStep: number;
}

export interface RunBenchResult {
  steps: number;
  runs: number;
  /** The default runtime: in-memory store (persisted at every state change), telemetry plugin on (no SDK). */
  actor: LoopFigures;
  /** The runtime with a store that keeps nothing and `telemetry: false`. */
  actorBare: LoopFigures;
  /** `createActor(runtime.machine)` alone: the run machine and its `steps` actor, no runtime host. */
  machine: LoopFigures;
  /** A naive XState machine doing the same work: one planner invoke and one tool invoke per step. */
  naive: LoopFigures;
  plain: LoopFigures;
}

interface Sample {
  wall: number;
  cpu: number;
}

async function measure(loop: () => Promise<void>, warmUp: number, runs: number): Promise<Sample[]> {
  for (let i = 0; i < warmUp; i++) await loop();
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await loop();
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    samples.push({ wall: (wall * 1000) / STEPS, cpu: (used.user + used.system) / STEPS });
  }
  return samples;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const figures = (name: string, samples: Sample[]): LoopFigures => ({
  name,
  wallUsPerStep: round1(median(samples.map((s) => s.wall))),
  cpuUsPerStep: round1(median(samples.map((s) => s.cpu))),
});

/**
 * Runs the loops interleaved in rounds (so load from other processes hits all alike) and prints
 * the medians. CPU time is reported beside wall time because it is steadier on a shared machine;
 * it includes V8's helper threads (GC) and has 1 µs resolution per run.
 */
export async function benchRunActor(options: { runs?: number; warmUp?: number; print?: boolean } = {}) {
  const runs = options.runs ?? 1000;
  const warmUp = options.warmUp ?? 200;
  const loops = {
    actor: actorLoop({}),
    actorBare: actorLoop({ store: discardingStore(), telemetry: false }),
    machine: machineLoop(),
    naive: naiveLoop(),
    plain: plainLoop(),
  };
  type Key = keyof typeof loops;
  const keys = Object.keys(loops) as Key[];
  const samples = Object.fromEntries(keys.map((key) => [key, [] as Sample[]])) as Record<Key, Sample[]>;
  const rounds = 10;
  for (let round = 0; round < rounds; round++) {
    for (const key of keys) {
      samples[key].push(...(await measure(loops[key], round === 0 ? warmUp : 20, Math.ceil(runs / rounds))));
    }
  }
  const result: RunBenchResult = {
    steps: STEPS,
    runs: samples.actor.length,
    actor: figures('run actor, default runtime', samples.actor),
    actorBare: figures('run actor, no store, no telemetry', samples.actorBare),
    machine: figures('run machine alone (createActor)', samples.machine),
    naive: figures('naive XState machine, same work', samples.naive),
    plain: figures('plain async loop', samples.plain),
  };
  if (options.print ?? true) printResult(result);
  return result;
}

function printResult(result: RunBenchResult): void {
  console.log(
    `run loop: ${result.steps} steps (one tool call each, zod validation, scripted planner); median of ${result.runs} runs; µs per step`,
  );
  const plain = result.plain;
  const row = (cells: string[]) =>
    console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(36) : cell.padStart(12))).join(''));
  row(['', 'wall', 'cpu', 'overhead', 'ratio']);
  for (const f of [result.actor, result.actorBare, result.machine, result.naive, plain]) {
    const overhead = f === plain ? '' : (f.wallUsPerStep - plain.wallUsPerStep).toFixed(1);
    const ratio = f === plain ? '' : `${(f.wallUsPerStep / plain.wallUsPerStep).toFixed(1)}×`;
    row([f.name, f.wallUsPerStep.toFixed(1), f.cpuUsPerStep.toFixed(1), overhead, ratio]);
  }
  console.log(
    'overhead = variant − plain loop (wall clock); issue 3 target: run actor overhead ≤ 30 µs per step',
  );
}

const round1 = (value: number) => Math.round(value * 10) / 10;

function argument(name: string): number | undefined {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : Number.NaN;
  return Number.isFinite(value) ? value : undefined;
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(process.argv[1]).href &&
  process.argv.includes('--peers')
) {
  // `npm run bench -- --peers`: the side-by-side with the AI SDK, OpenAI Agents and LangGraph.
  const { benchSideBySide } = await import('./side-by-side.ts');
  await benchSideBySide();
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchRunActor({ runs: argument('runs'), warmUp: argument('warm-up') });
  // The store benchmark is another module's; run it when it is there.
  const storeBench = new URL('./store.bench.ts', import.meta.url);
  if (existsSync(storeBench)) {
    const { benchStores } = (await import(storeBench.href)) as { benchStores: () => Promise<unknown> };
    console.log('');
    await benchStores();
  }
  // One planner answer of 4,000 and 10,000 calls, admitted or refused (issue 36 item 5).
  const { benchBatchStall } = await import('./batch-stall.bench.ts');
  console.log('');
  await benchBatchStall({ rounds: 1 });
  // What finished runs leave on the heap (issue 24 item 7): flat past the memory store's bound.
  const { benchRetention } = await import('./retention.bench.ts');
  console.log('');
  console.log('heap after finished runs, default runtime (one tool call each, 100 at a time; full GC)');
  const finished = argument('finished') ?? 100_000;
  await benchRetention({ checkpoints: [0, ...[10_000].filter((n) => n < finished), finished] });
  // What an app pays to install and import the package (issue 16; docs/packaging.md §Cost).
  const { packageCost } = await import('../scripts/package-cost.mjs');
  console.log('');
  packageCost();
}
