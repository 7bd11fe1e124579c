/**
 * A CPU profile of the reference loop (issue 17 "Show"): runs one variant of `bench/run.ts` under
 * the V8 sampling profiler and prints the top self time by package and by file.
 *
 *     node --import tsx bench/profile.ts [default|bare|machine|sqlite|floor] [--runs 3000] [--save x.cpuprofile]
 *
 * `default` is `createRuntime` defaults (memory store, telemetry plugin), `bare` has no store and
 * no telemetry, `machine` is the run machine alone, `sqlite` the default runtime on a SQLite file, `floor` the chart's floor (bench/support/chart-floor.ts). Self time is the time a function ran itself,
 * not in what it called, summed by the file (and the npm package) it is defined in.
 */

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { fileOf, packageOf } from './support/profile-frames.ts';
import { profileLoop } from './support/profile-variants.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '3000' },
    top: { type: 'string', default: '25' },
    /** Also write the profile here (a `.cpuprofile` DevTools and speedscope open). */
    save: { type: 'string' },
  },
});
const variant = positionals[0] ?? 'default';
const runs = Number(values.runs);
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Self time per key from a V8 CPU profile: samples × their time deltas, by the node's frame. */
function selfTime(
  profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] },
  keyOf: (frame: ProfileNode['callFrame']) => string,
): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const key = keyOf(byId.get(id)!.callFrame);
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}

function print(title: string, totals: Map<string, number>, top: number): void {
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${title} (self time, % of ${(all / 1000).toFixed(0)} ms sampled)`);
  for (const [key, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / all).toFixed(1).padStart(6)}%  ${key}`);
  }
}

const step = await profileLoop(variant);
for (let i = 0; i < 300; i++) await step();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const started = performance.now();
for (let i = 0; i < runs; i++) await step();
const elapsed = performance.now() - started;
const { profile } = await session.post('Profiler.stop');
session.disconnect();
if (values.save) writeFileSync(values.save, JSON.stringify(profile));
console.log(
  `${variant}: ${runs} runs of 10 steps, ${((elapsed * 1000) / runs / 10).toFixed(1)} µs per step (profiled)`,
);
const top = Number(values.top);
print(
  'by package',
  selfTime(profile as never, (f) => packageOf(f.url)),
  top,
);
print(
  'by file',
  selfTime(profile as never, (f) => fileOf(f.url)),
  top,
);
print(
  'by function',
  selfTime(
    profile as never,
    (f) => `${f.functionName || '(anonymous)'}  ${fileOf(f.url)}:${f.lineNumber + 1}`,
  ),
  top,
);
