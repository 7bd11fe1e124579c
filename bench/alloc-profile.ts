/**
 * Bytes allocated per step of the reference loop, and where (issue 29 item 1: the garbage
 * collector is 16–21% of a step's CPU time, the largest single line of the CPU profile, and a
 * step's allocations are what it collects).
 *
 *     node --import tsx bench/alloc-profile.ts [floor|machine|bare|default|sqlite] [--runs 2000] [--top 25]
 *
 * Runs one variant under V8's sampling heap profiler with the objects that minor and major GCs
 * collected kept in the samples (`HeapProfiler.startSampling`'s
 * `includeObjectsCollectedByMinorGC/MajorGC`), so the profile counts every allocation, not only
 * what survives. Prints bytes per step in all, then by package, file and allocating function
 * (self bytes). Unlike CPU time, allocated bytes hardly move with the machine's load: an A/B of a
 * change that removes allocations can be read from two short runs.
 *
 * `floor` is the chart's floor (support/chart-floor.ts), `machine` the run machine alone, `bare`
 * the runtime without store or telemetry, `default` `createRuntime` defaults, `sqlite` the
 * default runtime on a SQLite file. The sampling interval (`--interval`, bytes, default 512) trades
 * precision for speed; a sampled object stands for `interval` bytes on average.
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { fileOf, packageOf } from './support/profile-frames.ts';
import { profileLoop } from './support/profile-variants.ts';
import { STEPS } from './support/reference-loop.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '2000' },
    top: { type: 'string', default: '25' },
    interval: { type: 'string', default: '512' },
  },
});
const variant = positionals[0] ?? 'default';
const runs = Number(values.runs);

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** Self bytes per key over the sampled allocation tree. */
function selfBytes(head: HeapNode, keyOf: (frame: HeapNode['callFrame']) => string): Map<string, number> {
  const totals = new Map<string, number>();
  const stack = [head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.selfSize > 0) {
      const key = keyOf(node.callFrame);
      totals.set(key, (totals.get(key) ?? 0) + node.selfSize);
    }
    stack.push(...node.children);
  }
  return totals;
}

function print(title: string, totals: Map<string, number>, steps: number, top: number): void {
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${title} (self bytes per step, % of ${(all / steps).toFixed(0)} B)`);
  for (const [key, bytes] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${(bytes / steps).toFixed(0).padStart(7)} B ${((100 * bytes) / all).toFixed(1).padStart(5)}%  ${key}`,
    );
  }
}

const step = await profileLoop(variant);
for (let i = 0; i < 300; i++) await step();
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', {
  samplingInterval: Number(values.interval),
  includeObjectsCollectedByMinorGC: true,
  includeObjectsCollectedByMajorGC: true,
});
for (let i = 0; i < runs; i++) await step();
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
  profile: { head: HeapNode };
};
session.disconnect();
const steps = runs * STEPS;
const top = Number(values.top);
console.log(`${variant}: ${runs} runs of ${STEPS} steps`);
print(
  'by package',
  selfBytes(profile.head, (f) => packageOf(f.url)),
  steps,
  top,
);
print(
  'by file',
  selfBytes(profile.head, (f) => fileOf(f.url)),
  steps,
  top,
);
print(
  'by function',
  selfBytes(profile.head, (f) => `${f.functionName || '(anonymous)'}  ${fileOf(f.url)}:${f.lineNumber + 1}`),
  steps,
  top,
);
