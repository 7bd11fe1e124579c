/**
 * The inspector under a realistic load (issue 27 item 1): real runs (a runtime, its run actors, a
 * scripted planner and a real tool; not synthetic events) of `--turns` turns × `--calls` calls,
 * `--runs` of them through an inspector keeping `--max-runs`; then the page in Debian's Chromium
 * at 1600×1000. Reports:
 *
 * - the first SSE message's size (target ≤ 256 KB),
 * - the time from navigation to the first run row drawn (target ≤ 1 s), median of 3 loads,
 * - opening a run from the list until its timeline and log are drawn (target ≤ 300 ms), median,
 * - both also as the page times them (navigation start or click → drawn, → painted), without
 *   Playwright's own round trips, and Playwright's floor: the same steps on a page that does nothing,
 * - with `--stream N`: clicks on runs while N more runs stream in (lost clicks, and the page's times),
 * - the inspection store's heap after 25 %, 50 % and 100 % of the runs (bounded by `maxRuns`:
 *   flat once `maxRuns` runs are kept), measured as the heap it holds (GC'd, with and without it).
 *
 *     node --expose-gc --import tsx bench/inspector.bench.ts [--runs 1000] [--turns 10] [--calls 3] [--max-runs 100] [--profile DIR] [--stream N]
 *
 * The default size takes a minute or two on a busy 2-core machine; docs/inspection.md records the
 * 10,000-run figure.
 *
 * @module
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { type Profiler, Session } from 'node:inspector/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type CDPSession, chromium, type Page } from 'playwright-core';
import { createRuntime } from '../create-runtime.ts';
import type { InspectionStore } from '../inspector/inspection-store.ts';
import { busyPlanner, lookupTool, runBusyRuns } from '../test/support/busy-runs.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    turns: { type: 'string', default: '10' },
    calls: { type: 'string', default: '3' },
    'max-runs': { type: 'string', default: '100' },
    profile: { type: 'string' },
    stream: { type: 'string', default: '0' },
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
 * The heap the store's runs hold: heap used (after GC) with them, minus without them, and how many
 * it keeps. It lets them go: the runs that follow fill the store again, so a figure shows the bound
 * only when at least `maxRuns` runs came since the one before.
 */
function storeHeapReleasing(of: InspectionStore): string {
  const records = (of as unknown as { records: Map<string, unknown> }).records;
  const kept = records.size;
  gc!();
  const withRuns = process.memoryUsage().heapUsed;
  records.clear();
  gc!();
  const heap = (withRuns - process.memoryUsage().heapUsed) / 1024 / 1024;
  return `${heap.toFixed(1)} MB for ${kept} runs kept after ${done}`;
}

const heaps: string[] = [];
const t0 = Date.now();
let done = 0;
for (const share of [0.25, 0.5, 1]) {
  const upTo = Math.round(runCount * share);
  await runBusyRuns(runtime, upTo - done, 4, done);
  done = upTo;
  if (share < 1) heaps.push(storeHeapReleasing(store));
}
const runSeconds = (Date.now() - t0) / 1000;

const server = await inspector.start();
const inspectorUrl = server.url;
const first = await fetch(`${server.origin}/events?token=${server.token}`);
const reader = first.body!.pipeThrough(new TextDecoderStream()).getReader();
let text = '';
while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
await reader.cancel();
const helloBytes = Buffer.byteLength(text.slice(0, text.indexOf('\n\n')));

/**
 * Runs in the page before its own script: `window.__timed.row` is [drawn, painted] for the first
 * run row after navigation start; `opens` the same for each run opened (`body[data-opened]`
 * set), from its click. A string: it must not carry the bundler's helpers.
 */
const PAGE_TIMER = `
  window.__timed = { row: null, opens: [] };
  const painted = (at, into) => requestAnimationFrame(() => setTimeout(() => into.push(Math.round(performance.now() - at)), 0));
  new MutationObserver(() => {
    if (window.__timed.row || !document.querySelector('#run-list li[data-key]')) return;
    window.__timed.row = [Math.round(performance.now())];
    painted(0, window.__timed.row);
  }).observe(document, { childList: true, subtree: true });
  let click;
  addEventListener('click', (event) => { if (event.target.closest('#run-list li[data-key]')) click = event.timeStamp; }, true);
  addEventListener('DOMContentLoaded', () => new MutationObserver(() => {
    if (click === undefined) return;
    const timed = [Math.round(performance.now() - click)];
    painted(click, timed);
    window.__timed.opens.push(timed);
    click = undefined;
  }).observe(document.body, { attributes: true, attributeFilter: ['data-opened'] }));
`;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
/** What one page load and three opens took: seen by Playwright, and timed by the page itself. */
interface Timings {
  firstRows: number[];
  opens: number[];
  /** [drawn, painted], ms from navigation start (the page's `performance.now()`). */
  inPageRows: [number, number][];
  /** [drawn, painted], ms from the click's event. */
  inPageOpens: [number, number][];
}

/**
 * Loads `url` three times; each time, waits for the first run row and the newest run opened, then
 * opens runs further down the list (from the click to its timeline and log drawn). Playwright's
 * figures include its own round trips (the script it injects in each page, its actionability
 * checks and selector polling over CDP); the page's own figures do not.
 */
async function measure(
  url: string,
  prepare: (page: Page) => Promise<unknown> = async () => {},
  finish: (page: Page, round: number) => Promise<unknown> = async () => {},
): Promise<Timings> {
  const timings: Timings = { firstRows: [], opens: [], inPageRows: [], inPageOpens: [] };
  for (let round = 0; round < 3; round++) {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await prepare(page);
    await page.addInitScript(PAGE_TIMER);
    const started = Date.now();
    await page.goto(url);
    await page.waitForSelector('#run-list li[data-key]');
    timings.firstRows.push(Date.now() - started);
    await page.waitForSelector('body[data-opened]');
    for (const nth of [5, 20, 60]) {
      const row = page.locator('#run-list li[data-key]').nth(nth);
      const key = await row.getAttribute('data-key');
      const clicked = Date.now();
      await row.click();
      await page.waitForSelector(`body[data-opened="${key}"]`);
      await page.waitForSelector('#timeline li.call');
      timings.opens.push(Date.now() - clicked);
    }
    await page.waitForFunction(
      'window.__timed.row.length === 2 && window.__timed.opens.length === 3 && window.__timed.opens.every((x) => x.length === 2)',
    );
    const timed = (await page.evaluate('window.__timed')) as {
      row: [number, number];
      opens: [number, number][];
    };
    timings.inPageRows.push(timed.row);
    timings.inPageOpens.push(...timed.opens);
    await finish(page, round);
    await page.close();
  }
  return timings;
}

/**
 * Playwright's floor on this machine at this load: the same steps on a page that does nothing
 * (100 rows in its HTML; a click marks its row opened at once), served by Playwright itself.
 */
const FLOOR_PAGE = `<!doctype html><body data-opened="r0"><ul id="run-list">${Array.from(
  { length: 100 },
  (_, i) => `<li data-key="r${i}">run ${i}</li>`,
).join('')}</ul><ol id="timeline"><li class="call">call</li></ol><script>
  for (const li of document.querySelectorAll('li[data-key]')) li.onclick = () => { document.body.dataset.opened = li.dataset.key; };
</script></body>`;

/**
 * `--profile DIR`: the same, with the V8 sampling profiler on both sides, written as
 * `DIR/page-N.cpuprofile` (Chromium, over CDP) and `DIR/server.cpuprofile` (this process: the
 * inspector server, and Playwright's client); open them in Chrome DevTools' Performance panel.
 */
async function profiled(dir: string): Promise<Timings> {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  const cdps = new Map<Page, CDPSession>();
  try {
    return await measure(
      inspectorUrl,
      async (page) => {
        const cdp = await page.context().newCDPSession(page);
        cdps.set(page, cdp);
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.start');
      },
      async (page, round) => {
        const { profile } = await cdps.get(page)!.send('Profiler.stop');
        writeFileSync(join(dir, `page-${round}.cpuprofile`), JSON.stringify(profile));
        console.log(`page ${round}, self time:\n${selfTime(profile)}`);
      },
    );
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, 'server.cpuprofile'), JSON.stringify(profile));
    console.log(`server process, self time:\n${selfTime(profile)}`);
    session.disconnect();
  }
}

/** The functions that took most of a profile's time themselves, `ms  name file:line`. */
function selfTime(profile: Profiler.Profile, top = 12): string {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map<string, number>();
  profile.samples?.forEach((id, i) => {
    const frame = nodes.get(id)!;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.split(/[/?]/).at(-1) || frame.url}:${frame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas?.[i] ?? 0));
  });
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`)
    .join('\n');
}

/**
 * `--stream N`: opening runs while N more runs stream in (8 at a time), clicked as a person clicks
 * (the pointer moved onto a row that is not open, pressed for 60 ms, released): how many clicks
 * opened nothing within 3 s, and click → drawn, painted in the page for the others.
 */
async function duringStream(
  count: number,
): Promise<{ clicks: number; lost: number; opens: [number, number][] }> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.addInitScript(PAGE_TIMER);
  await page.goto(inspectorUrl);
  await page.waitForSelector('body[data-opened]');
  await page.uncheck('#follow');
  let streaming = true;
  const stream = runBusyRuns(runtime, count, 8, done).finally(() => {
    streaming = false;
  });
  let clicks = 0;
  let lost = 0;
  while (streaming && clicks < 30) {
    const box = await page.evaluate(
      (nth) => {
        const rows = [...document.querySelectorAll('#run-list li[data-key]:not(.selected)')];
        const r = rows[nth]!.getBoundingClientRect();
        return { x: r.x + 20, y: r.y + r.height / 2 };
      },
      (clicks * 3) % 12,
    );
    const before = await page.getAttribute('body', 'data-opened');
    await page.mouse.move(box.x, box.y);
    await page.mouse.down();
    await page.waitForTimeout(60);
    await page.mouse.up();
    clicks++;
    await page
      .waitForFunction((key) => document.body.dataset.opened !== key, before, { timeout: 3000 })
      .catch(() => lost++);
    await page.waitForTimeout(300);
  }
  await stream;
  done += count;
  const timed = (await page.evaluate('window.__timed')) as { opens: [number, number][] };
  await page.close();
  return { clicks, lost, opens: timed.opens.filter((open) => open.length === 2) };
}

let timings: Timings;
let floor: Timings;
let streamed: Awaited<ReturnType<typeof duringStream>> | undefined;
try {
  timings = values.profile === undefined ? await measure(server.url) : await profiled(values.profile);
  floor = await measure('http://floor.test/', (page) =>
    page.route('http://floor.test/', (route) =>
      route.fulfill({ contentType: 'text/html', body: FLOOR_PAGE }),
    ),
  );
  if (Number(values.stream) > 0) streamed = await duringStream(Number(values.stream));
} finally {
  await browser.close();
  heaps.push(storeHeapReleasing(store));
  await inspector.close();
  await runtime.close();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `inspector, ${runCount} real runs × ${turns} turns × ${calls} calls (${runSeconds.toFixed(0)} s to run), maxRuns ${maxRuns}, Chromium 1600×1000`,
);
console.log(`first SSE message: ${(helloBytes / 1024).toFixed(1)} KB (target ≤ 256 KB)`);
const { firstRows, opens, inPageRows, inPageOpens } = timings;
console.log(`first run row: median ${median(firstRows)} ms of ${firstRows.join(', ')} (target ≤ 1000 ms)`);
console.log(
  `opening a run: median ${median(opens)} ms, max ${Math.max(...opens)} ms over ${opens.length} (target ≤ 300 ms)`,
);
const drawnPainted = (xs: [number, number][]) =>
  `drawn median ${median(xs.map((x) => x[0]))} ms, painted median ${median(xs.map((x) => x[1]))} ms (max ${Math.max(...xs.map((x) => x[1]))})`;
console.log(`  in the page: first row ${drawnPainted(inPageRows)}; opening ${drawnPainted(inPageOpens)}`);
console.log(
  `  Playwright's floor (a page that does nothing): first row median ${median(floor.firstRows)} ms, opening median ${median(floor.opens)} ms`,
);
const load = loadavg()
  .map((x) => x.toFixed(1))
  .join(' ');
if (streamed) {
  console.log(
    `while ${values.stream} more runs streamed in: ${streamed.lost} of ${streamed.clicks} clicks opened nothing; opening in the page ${streamed.opens.length > 0 ? drawnPainted(streamed.opens) : '–'}`,
  );
}
console.log(`load average (1, 5, 15 min) at the end: ${load} on ${availableParallelism()} cores`);
console.log(`inspection store heap: ${heaps.join('; ')} (bounded by maxRuns ${maxRuns})`);
