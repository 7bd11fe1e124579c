/**
 * An interleaved A/B of two checkouts (issue 29: "an interleaved A/B against the commit before for
 * each change that claims a gain"): the same variants of the side-by-side (support/variants.ts),
 * each in a process of its own started from checkout A or B, taking turns in fixed time blocks
 * (A's floor, A's default, …, B's floor, B's default, … round after round). Prints per checkout and
 * variant the median CPU µs per step (GC included), its ratio to that checkout's chart floor, and
 * B ÷ A.
 *
 *     git worktree add --detach /tmp/base <commit>   # or: git archive <commit> | tar -x -C /tmp/base
 *     node --import tsx bench/ab.ts --a /tmp/base --b . --steps 10 --rounds 6 --block-ms 800
 *
 * Each checkout's workers are started by its own variant-process.ts: a checkout from before
 * 2026-11-25's "as built" change runs its workers under tsx (a few % more per step, up to 15% for
 * no store), so A/B across that change compares compilations too.
 *
 * Options: `--a`, `--b` (checkout directories; B defaults to this one), `--steps 10` (comma
 * separated), `--rounds N` (default 6), `--block-ms N` (default 800), `--warm-up-cpu-ms N` (default
 * 3,000), `--variants a,b` (names containing these; default the floor, the default runtime and
 * no store).
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { summarize } from './support/rotation.ts';
import type { VariantProcess } from './support/variant-process.ts';
import { YARDSTICK } from './support/variants.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    steps: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '6' },
    'block-ms': { type: 'string', default: '800' },
    'warm-up-cpu-ms': { type: 'string', default: '3000' },
    variants: { type: 'string', default: 'floor,default runtime,no store' },
  },
});
if (!values.a) throw new Error('--a <checkout directory> is required');
const checkouts = { A: resolve(values.a), B: resolve(values.b) } as const;
const wanted = values.variants.split(',');
const all = [
  YARDSTICK,
  'toolwarden: default runtime',
  'toolwarden: no store, no telemetry',
  'toolwarden: SQLite store',
  'toolwarden: run machine alone',
];
const variants = all.filter((name) => wanted.some((w) => name.includes(w)));
if (!variants.includes(YARDSTICK)) variants.unshift(YARDSTICK);
const rounds = Number(values.rounds);
const blockMs = Number(values['block-ms']);
const dir = mkdtempSync(join(tmpdir(), 'tw-ab-'));

/** Each checkout's own process harness, so that its workers load that checkout's code. */
const starters = Object.fromEntries(
  await Promise.all(
    Object.entries(checkouts).map(async ([side, root]) => {
      const url = new URL(`file://${join(root, 'bench/support/variant-process.ts')}`);
      const module = (await import(url.href)) as typeof import('./support/variant-process.ts');
      return [side, module.startVariantProcess] as const;
    }),
  ),
);

const processes: { side: 'A' | 'B'; process: VariantProcess }[] = [];
for (const side of ['A', 'B'] as const)
  for (const variant of variants) processes.push({ side, process: await starters[side]!(variant, dir) });

try {
  for (const steps of values.steps.split(',').map(Number)) {
    await Promise.all(
      processes.map(({ process }) =>
        process.runBlock(steps, { ms: Number.POSITIVE_INFINITY, cpuMs: Number(values['warm-up-cpu-ms']) }),
      ),
    );
    const samples = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      // Rotate the starting point each round so that neither side always follows the other.
      const order = round % 2 === 0 ? processes : [...processes].reverse();
      for (const { side, process } of order) {
        const block = await process.runBlock(steps, { ms: blockMs });
        const key = `${side} ${process.variant}`;
        samples.set(key, [...(samples.get(key) ?? []), ...block.cpuUsPerStep]);
      }
    }
    console.log(
      `\n${steps} steps, ${rounds} rounds of ${blockMs} ms blocks: CPU µs per step, median (p25–p75)`,
    );
    const median = (key: string) => summarize(samples.get(key) ?? []).median;
    for (const variant of variants) {
      const [a, b] = (['A', 'B'] as const).map((side) => summarize(samples.get(`${side} ${variant}`) ?? []));
      const floorA = median(`A ${YARDSTICK}`);
      const floorB = median(`B ${YARDSTICK}`);
      const cell = (s: typeof a, floor: number) =>
        `${s!.median.toFixed(1)} (${s!.p25.toFixed(0)}–${s!.p75.toFixed(0)}) ${(s!.median / floor).toFixed(2)}× floor, n=${s!.n}`;
      console.log(
        `${variant.padEnd(40)} A ${cell(a, floorA)} | B ${cell(b, floorB)} | B÷A ${(b!.median / a!.median).toFixed(2)}`,
      );
    }
  }
} finally {
  await Promise.all(processes.map(({ process }) => process.close()));
  rmSync(dir, { recursive: true, force: true });
}
