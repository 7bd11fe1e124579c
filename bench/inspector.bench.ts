/**
 * The inspector under a realistic load (issue 27 item 1): real runs (a runtime, its run actors, a
 * scripted planner and a real tool; not synthetic events) of `--turns` turns × `--calls` calls,
 * `--runs` of them through an inspector keeping `--max-runs`; then the page in Debian's Chromium
 * at 1600×1000. Reports:
 *
 * - the first SSE message's size (target ≤ 256 KB),
 * - the time from navigation to the first run row drawn (target ≤ 1 s), median of 3 loads,
 * - opening a run from the list until its timeline and log are drawn (target ≤ 300 ms), median,
 * - the inspection store's heap after 25 %, 50 % and 100 % of the runs (bounded by `maxRuns`:
 *   flat once `maxRuns` runs are kept), measured as the heap it holds (GC'd, with and without it).
 *
 *     node --expose-gc --import tsx bench/inspector.bench.ts [--runs 1000] [--turns 10] [--calls 3] [--max-runs 100]
 *
 * The default size takes a minute or two on a busy 2-core machine; docs/inspection.md records the
 * 10,000-run figure.
 *
 * @module
 */

import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import type { InspectionStore } from '../inspector/inspection-store.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { busyPlanner, lookupTool, runBusyRuns } from '../test/support/busy-runs.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    turns: { type: 'string', default: '10' },
    calls: { type: 'string', default: '3' },
    'max-runs': { type: 'string', default: '100' },
  },
});
const runCount = Number(values.runs);
const turns = Number(values.turns);
const calls = Number(values.calls);
const maxRuns = Number(values['max-runs']);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const runtime = createRuntime({
  agent: { id: 'busy' },
  planner: busyPlanner(turns, calls),
  tools: [lookupTool],
  telemetry: false,
  caps: { maxToolCalls: turns * calls + 1 },
  inspector: { port: 0, onListening: () => {}, maxRuns },
});
const inspector = runtime.inspector!;
const store = inspector.store;

/**
 * The heap the store's runs hold: heap used (after GC) with them, minus without them. It lets
 * them go: the runs that follow fill the store again (measure after at least `maxRuns` more).
 */
function storeHeapReleasing(of: InspectionStore): number {
  const records = (of as unknown as { records: Map<string, unknown> }).records;
  gc!();
  const withRuns = process.memoryUsage().heapUsed;
  records.clear();
  gc!();
  return withRuns - process.memoryUsage().heapUsed;
}

const heaps: string[] = [];
const t0 = Date.now();
let done = 0;
for (const share of [0.25, 0.5, 1]) {
  const upTo = Math.round(runCount * share);
  await runBusyRuns(runtime, upTo - done, 4, done);
  done = upTo;
  if (share < 1) heaps.push(`${done} runs: ${(storeHeapReleasing(store) / 1024 / 1024).toFixed(1)} MB`);
}
const runSeconds = (Date.now() - t0) / 1000;

const server = await inspector.start();
const first = await fetch(`${server.origin}/events?token=${server.token}`);
const reader = first.body!.pipeThrough(new TextDecoderStream()).getReader();
let text = '';
while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
await reader.cancel();
const helloBytes = Buffer.byteLength(text.slice(0, text.indexOf('\n\n')));

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const firstRows: number[] = [];
const opens: number[] = [];
try {
  for (let round = 0; round < 3; round++) {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const started = Date.now();
    await page.goto(server.url);
    await page.waitForSelector('#run-list li[data-key]');
    firstRows.push(Date.now() - started);
    await page.waitForSelector('body[data-opened]');
    // Open runs further down the list: from the click to its timeline and log drawn.
    for (const nth of [5, 20, 60]) {
      const row = page.locator('#run-list li[data-key]').nth(nth);
      const key = await row.getAttribute('data-key');
      const clicked = Date.now();
      await row.click();
      await page.waitForSelector(`body[data-opened="${key}"]`);
      await page.waitForSelector('#timeline li.call');
      opens.push(Date.now() - clicked);
    }
    await page.close();
  }
} finally {
  await browser.close();
  heaps.push(`${done} runs: ${(storeHeapReleasing(store) / 1024 / 1024).toFixed(1)} MB`);
  await inspector.close();
  await runtime.close();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `inspector, ${runCount} real runs × ${turns} turns × ${calls} calls (${runSeconds.toFixed(0)} s to run), maxRuns ${maxRuns}, Chromium 1600×1000`,
);
console.log(`first SSE message: ${(helloBytes / 1024).toFixed(1)} KB (target ≤ 256 KB)`);
console.log(`first run row: median ${median(firstRows)} ms of ${firstRows.join(', ')} (target ≤ 1000 ms)`);
console.log(
  `opening a run: median ${median(opens)} ms, max ${Math.max(...opens)} ms over ${opens.length} (target ≤ 300 ms)`,
);
console.log(`inspection store heap: ${heaps.join('; ')} (bounded by maxRuns ${maxRuns})`);
