/**
 * A CPU profile of the reference loop (issue 17 "Show"): runs one variant of `bench/run.ts` under
 * the V8 sampling profiler and prints the top self time by package and by file.
 *
 *     node --import tsx bench/profile.ts [default|bare|machine|sqlite] [--runs 3000] [--save x.cpuprofile]
 *
 * `default` is `createRuntime` defaults (memory store, telemetry plugin), `bare` has no store and
 * no telemetry, `machine` is the run machine alone, `sqlite` the default runtime on a SQLite file. Self time is the time a function ran itself,
 * not in what it called, summed by the file (and the npm package) it is defined in.
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createActor, waitFor } from 'xstate';
import type { Message } from '../run/message.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { sqliteStore } from '../runtime/stores/sqlite-store.ts';
import { addTool, discardingStore, resettablePlanner } from './support/reference-loop.ts';

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
const prompt: Message[] = [{ role: 'user', content: 'Add the numbers' }];

function loop(): () => Promise<void> {
  const planner = resettablePlanner();
  const options =
    variant === 'default'
      ? {}
      : variant === 'sqlite'
        ? { store: sqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'tw-profile-')), 'runs.db') }) }
        : { store: discardingStore(), telemetry: false as const };
  const runtime = createRuntime({ agent: { id: 'bench' }, planner, tools: [addTool], ...options });
  let n = 0;
  if (variant === 'machine') {
    return async () => {
      planner.reset();
      const actor = createActor(runtime.machine, {
        input: { runId: `m-${++n}`, agent: { id: 'bench' }, messages: prompt, caps: runtime.caps },
      });
      actor.start();
      await waitFor(actor, (s) => s.status !== 'active');
    };
  }
  return async () => {
    planner.reset();
    await runtime.start({ runId: `p-${++n}`, messages: prompt }).result();
  };
}

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

function fileOf(url: string): string {
  if (url === '') return '(native / gc / idle)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) return path.slice(nm + 'node_modules/'.length);
  if (path.startsWith('node:')) return path;
  return path.replace(`${process.cwd()}/`, '');
}

function packageOf(url: string): string {
  const file = fileOf(url);
  if (file.startsWith('(') || file.startsWith('node:')) return file.startsWith('node:') ? 'node' : file;
  if (!url.includes('node_modules/')) return 'toolwarden';
  const parts = file.split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

function print(title: string, totals: Map<string, number>, top: number): void {
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${title} (self time, % of ${(all / 1000).toFixed(0)} ms sampled)`);
  for (const [key, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / all).toFixed(1).padStart(6)}%  ${key}`);
  }
}

const step = loop();
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
