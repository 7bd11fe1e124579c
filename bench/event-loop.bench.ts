/**
 * `node --import tsx bench/event-loop.bench.ts [--runs N] [--store memory|sqlite]`: starts N
 * concurrent reference-loop runs (default 10,000, 3 steps each) and reports the longest
 * event-loop stall while they run, from `monitorEventLoopDelay` (issue 12, defect 4: 17.4 s on
 * the memory store and 106 s on SQLite before runs yielded between steps). Targets: ≤ 100 ms
 * (memory store), ≤ 250 ms (SQLite).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunStore } from '../stores/run-store.ts';
import { addTool } from './support/reference-loop.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, store: { type: 'string', default: 'memory' } },
});
const runs = Number(values.runs);
const STEPS = 3;

let dir: string | undefined;
let store: RunStore | undefined;
if (values.store === 'sqlite') {
  const { sqliteStore } = await import('../stores/sqlite-store.ts');
  dir = await mkdtemp(join(tmpdir(), 'tw-loop-'));
  store = sqliteStore({ path: join(dir, 'runs.db') });
}

// Each run gets its own script through a planner keyed by run id.
const scripts = new Map<string, ReturnType<typeof scriptedPlanner>>();
const script = () =>
  scriptedPlanner([
    ...Array.from({ length: STEPS }, (_, i) => ({
      toolCalls: [{ name: 'bench.add', input: { a: i, b: 1 } }],
    })),
    { finalResponse: { text: 'done' } },
  ]);
const planner = {
  planStart: (input: Parameters<ReturnType<typeof script>['planStart']>[0]) => {
    const own = script();
    scripts.set(input.runId, own);
    return own.planStart(input);
  },
  planResume: (input: Parameters<ReturnType<typeof script>['planResume']>[0]) =>
    scripts.get(input.runId)!.planResume(input),
};

const runtime = createRuntime({
  agent: { id: 'loop' },
  planner,
  tools: [addTool],
  telemetry: false,
  ...(store === undefined ? {} : { store }),
});
const started = performance.now();
const handles = Array.from({ length: runs }, () =>
  runtime.start({ messages: [{ role: 'user', content: 'go' }] }),
);
const startMs = performance.now() - started;
// Measured from here: the start() calls above are the app's own synchronous loop.
const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
// A heartbeat timer: its lateness is what a lease renewal or an HTTP request would suffer.
let worstLateMs = 0;
let last = performance.now();
const beat = setInterval(() => {
  const now = performance.now();
  worstLateMs = Math.max(worstLateMs, now - last - 10);
  last = now;
}, 10);

const outcomes = await Promise.all(handles.map((run) => run.result()));
const wallMs = performance.now() - started;
// Let the sampling timers that were held up fire, so the stall they saw is recorded.
await new Promise((resolve) => setTimeout(resolve, 50));
clearInterval(beat);
histogram.disable();
await runtime.close();
if (dir) await rm(dir, { recursive: true, force: true });

const completed = outcomes.filter((outcome) => outcome.status === 'completed').length;
console.log(`event loop under ${runs} concurrent ${STEPS}-step runs (${values.store} store)`);
console.log(
  `completed            ${completed}/${runs} in ${(wallMs / 1000).toFixed(1)} s (the ${runs} start() calls: ${startMs.toFixed(0)} ms)`,
);
console.log(`longest stall        ${worstLateMs.toFixed(1)} ms (lateness of a 10 ms timer)`);
console.log(
  `loop delay max / p99 ${(histogram.max / 1e6).toFixed(1)} / ${(histogram.percentile(99) / 1e6).toFixed(1)} ms (monitorEventLoopDelay)`,
);
