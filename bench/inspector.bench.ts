/**
 * The inspector page under load (issue 15): 1,000 runs with 10 events each (10,000 events) in the
 * store, the page opened in Debian's Chromium at 1280×800; reports the time to first render (the
 * runs listed and the newest run's log drawn) and to apply an update (a new event of the selected
 * run appearing in its log), median of several. Targets: first render ≤ 1 s, an update ≤ 50 ms.
 *
 *     node --import tsx bench/inspector.bench.ts [--runs 1000] [--events 10] [--updates 20]
 *
 * @module
 */

import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { inspectorPlugin } from '../inspector/inspector-plugin.ts';
import type { RunEvent } from '../run/run-events.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    events: { type: 'string', default: '10' },
    updates: { type: 'string', default: '20' },
  },
});
const runCount = Number(values.runs);
const perRun = Number(values.events);
const inspector = inspectorPlugin({ port: 0, onListening: () => {} });
const store = inspector.store;
const t0 = Date.now() - runCount * 1000;
for (let r = 0; r < runCount; r++) {
  const runId = `load-${String(r).padStart(4, '0')}`;
  const at = t0 + r * 1000;
  store.recordRunEvent({
    type: 'run_started',
    runId,
    at,
    agentId: 'load',
    labels: { tenant: `t${r % 7}` },
  } as RunEvent);
  for (let e = 1; e < perRun; e++) {
    store.recordRunEvent({
      type: 'planner_note',
      runId,
      at: at + e,
      turnId: `${runId}:t1`,
      note: `note ${e} of run ${r}`,
    } as RunEvent);
  }
}
const server = await inspector.start();
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const firstRenders: number[] = [];
const updates: number[] = [];
try {
  for (let round = 0; round < 3; round++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const started = Date.now();
    await page.goto(server.url);
    await page.waitForSelector(`#event-log li >> nth=${perRun - 1}`);
    await page.waitForSelector('#run-list li[data-key]');
    firstRenders.push(Date.now() - started);
    if (round === 0) {
      const newest = `load-${String(runCount - 1).padStart(4, '0')}`;
      for (let u = 0; u < Number(values.updates); u++) {
        const note = `update ${u}`;
        const seen = page.evaluate(
          (text) =>
            new Promise<number>((resolve) => {
              const log = document.getElementById('event-log')!;
              const observer = new MutationObserver(() => {
                if (log.lastElementChild?.textContent?.includes(text)) {
                  observer.disconnect();
                  resolve(Date.now());
                }
              });
              observer.observe(log, { childList: true });
            }),
          note,
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
        const sent = Date.now();
        store.recordRunEvent({
          type: 'planner_note',
          runId: newest,
          at: sent,
          turnId: `${newest}:t1`,
          note,
        } as RunEvent);
        updates.push((await seen) - sent);
      }
    }
    await page.close();
  }
} finally {
  await browser.close();
  await inspector.close();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `inspector page, ${runCount} runs × ${perRun} events (${runCount * perRun} events), Chromium 1280×800`,
);
console.log(
  `first render: median ${median(firstRenders)} ms of ${firstRenders.join(', ')} (target ≤ 1000 ms)`,
);
console.log(
  `update (an event of the selected run drawn): median ${median(updates)} ms, max ${Math.max(...updates)} ms over ${updates.length} (target ≤ 50 ms)`,
);
