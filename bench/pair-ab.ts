/**
 * A same-process A/B of two checkouts on the reference loop (issue 29 item 1: "an interleaved
 * A/B against the commit before"), for gains of a few percent that rotated processes
 * (`bench/ab.ts`) cannot resolve on a loaded machine: single runs alternate A B, B A, … so both
 * sides see the same load, each timed by the process's CPU time per step (GC included). Prints
 * per variant the medians, their ratio to each side's chart floor (the floor is the control:
 * its B ÷ A should be 1.00), B ÷ A, and the median of the paired ratios (run i of B ÷ run i of A).
 *
 *     git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/
 *     node --import tsx bench/pair-ab.ts --a /tmp/base --b . --runs 1500
 *
 * Options: `--a`, `--b` (checkout directories; B defaults to this one), `--runs N` (pairs per
 * variant after 200 warm-up pairs, default 1,500), `--variants floor,default,bare,machine`.
 *
 * @module
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Loop } from './support/cpu-block.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    runs: { type: 'string', default: '1500' },
    variants: { type: 'string', default: 'floor,default,bare,machine' },
  },
});
if (!values.a) throw new Error('--a <checkout directory> is required');
const names = values.variants.split(',');
if (!names.includes('floor')) names.unshift('floor');
const runs = Number(values.runs);

/** A checkout's loops, from its own modules. */
async function loopsOf(dir: string): Promise<Record<string, Loop>> {
  const root = resolve(dir);
  const loops = await import(`${root}/bench/support/toolwarden-loops.ts`);
  const { discardingStore } = await import(`${root}/bench/support/reference-loop.ts`);
  const { chartFloorLoop } = await import(`${root}/bench/support/chart-floor.ts`);
  const make: Record<string, () => Loop> = {
    floor: () => chartFloorLoop(10),
    default: () => loops.actorLoop({}, 10),
    bare: () => loops.actorLoop({ store: discardingStore(), telemetry: false }, 10),
    machine: () => loops.machineLoop(10),
  };
  return Object.fromEntries(names.map((name) => [name, make[name]!()]));
}

async function cpuUsPerStep(loop: Loop): Promise<number> {
  const before = process.cpuUsage();
  await loop();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 10;
}

const median = (samples: readonly number[]) => [...samples].sort((x, y) => x - y)[samples.length >> 1]!;

const sides = { A: await loopsOf(values.a), B: await loopsOf(values.b) };
const measured = new Map<string, { A: number[]; B: number[] }>();
for (const name of names) {
  for (let i = 0; i < 200; i++) {
    await cpuUsPerStep(sides.A[name]!);
    await cpuUsPerStep(sides.B[name]!);
  }
  const samples = { A: [] as number[], B: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? (['B', 'A'] as const) : (['A', 'B'] as const);
    for (const side of order) samples[side].push(await cpuUsPerStep(sides[side][name]!));
  }
  measured.set(name, samples);
}
const floor = measured.get('floor')!;
for (const name of names) {
  const { A, B } = measured.get(name)!;
  const [a, b] = [median(A), median(B)];
  const paired = median(A.map((x, i) => B[i]! / x));
  console.log(
    `${name.padEnd(8)} A ${a.toFixed(1)} (${(a / median(floor.A)).toFixed(2)}x floor) | B ${b.toFixed(1)} (${(b / median(floor.B)).toFixed(2)}x floor) | B/A ${(b / a).toFixed(3)}, paired ${paired.toFixed(3)}, n=${runs}`,
  );
}
