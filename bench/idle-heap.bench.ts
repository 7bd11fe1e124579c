/**
 * Heap per run waiting for a person (issue 29 item 3): `--runs` runs, each `--steps` tool steps of
 * the reference loop's tool and then awaiting a clarification, bytes of heap per run after a full
 * GC, three ways:
 *
 * | variant | what stays in memory |
 * | --- | --- |
 * | `live`   | default runtime: the actor, its `steps` actor, the handle (held by the app), the memory store's snapshot |
 * | `memory` | `durable: { evictAfterMs: 1 }` on the memory store: the app keeps run ids only; what stays is the store's |
 * | `sqlite` | the same on a SQLite file: what stays is the store's caches |
 *
 *     node --import ./bench/as-built.mjs bench/idle-heap.bench.ts [--runs 2000] [--steps 0,10,50] [--stores live,memory,sqlite]
 *
 * `as-built.mjs` compiles the TypeScript as `npm run build` does; under `--import tsx` (which keeps
 * function names by redefining `name` on every closure) a live run measures ~4.6 KB more.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { addTool } from './support/reference-loop.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type IdleVariant = 'live' | 'memory' | 'sqlite';

export const collectGarbage = (() => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
})();

/** Whether this code was compiled with esbuild's `keepNames` (tsx does): closures then weigh more. */
function keepsNames(): boolean {
  const probe = () => {
    const named = () => 0;
    return named;
  };
  return probe.toString().includes('__name');
}

/** `steps` tool calls per run, then a clarification; turns counted by run id, forgotten at the await. */
function stepsThenAwait(steps: number) {
  const turns = new Map<string, number>();
  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const turn = (turns.get(input.runId) ?? 0) + 1;
    if (turn <= steps) {
      turns.set(input.runId, turn);
      return { toolCalls: [{ name: 'bench.add', input: { a: turn, b: 1 } }] };
    }
    turns.delete(input.runId);
    if (turn === steps + 1)
      return { await: { clarification: { id: 'q', question: 'Which numbers?', missingFields: ['a'] } } };
    return { finalResponse: { text: 'done' } };
  };
  return { planStart: decide, planResume: decide };
}

/** Bytes of heap per run after `runs` runs took `steps` steps and wait for a clarification. */
export async function idleHeapPerRun(variant: IdleVariant, runs: number, steps: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'toolwarden-idle-'));
  const store = variant === 'sqlite' ? sqliteStore({ path: join(dir, 'idle.db') }) : undefined;
  const runtime = createRuntime({
    agent: { id: 'bench' },
    planner: stepsThenAwait(steps),
    tools: [addTool],
    caps: { maxToolCalls: steps + 5, maxTurns: steps + 5 },
    ...(store ? { store } : {}),
    ...(variant === 'live' ? {} : { durable: { evictAfterMs: 1 } }),
  });
  /** Every run awaiting (or ended) with everything written. */
  const settled = async (runs: RunHandle[]) => {
    while (runs.some((run) => run.awaiting === null && run.status === 'running')) await sleep(10);
    await Promise.all(runs.map((run) => run.persisted()));
  };
  /** Every run dropped from memory, and its claim released (a write after the eviction). */
  const evicted = async (ids: string[]) => {
    while (ids.some((id) => runtime.get(id) !== undefined)) await sleep(10);
    await sleep(100);
  };
  try {
    // Batches start in a function of their own: a suspended async frame keeps its locals, and
    // a handle left in one would keep its whole run alive.
    const startBatch = async (prefix: string, count: number) => {
      const started = Array.from({ length: count }, (_, i) =>
        runtime.start({ runId: `${prefix}-${i}`, messages: [{ role: 'user', content: 'Add' }] }),
      );
      await settled(started);
      return variant === 'live' ? started : started.map((run) => run.runId);
    };
    // Open the store and warm the code (20 runs to their await, and their eviction) before the baseline.
    const warm = await startBatch('warm', 20);
    if (variant !== 'live') await evicted(warm as string[]);
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    const kept: (RunHandle | string)[] = [];
    for (let at = 0; at < runs; at += 200)
      kept.push(...(await startBatch(`idle-${at}`, Math.min(200, runs - at))));
    if (variant !== 'live') await evicted(kept as string[]);
    collectGarbage();
    const perRun = Math.round((process.memoryUsage().heapUsed - before) / runs);
    if (variant === 'live') {
      const handles = [...kept, ...warm] as RunHandle[];
      for (const run of handles) run.cancel('bench done');
      await Promise.all(handles.map((run) => run.result()));
    }
    return perRun;
  } finally {
    await runtime.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '2000' },
      steps: { type: 'string', default: '0,10,50' },
      stores: { type: 'string', default: 'live,memory,sqlite' },
    },
  });
  const runs = Number(values.runs);
  const compiled = keepsNames() ? 'under tsx (keepNames: not as built)' : 'as built';
  console.log(`heap per run awaiting a clarification (${runs} runs, full GC, code ${compiled}), bytes`);
  for (const steps of values.steps.split(',').map(Number)) {
    const cells: string[] = [];
    for (const variant of values.stores.split(',') as IdleVariant[])
      cells.push(`${variant} ${await idleHeapPerRun(variant, runs, steps)}`);
    console.log(`after ${String(steps).padStart(3)} steps: ${cells.join('   ')}`);
  }
}
