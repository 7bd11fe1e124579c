/**
 * What issue 27 asked for, as a person sees it: in the Jaeger UI (the shared peer's, jaeger-ui
 * v1.76.0; Chromium at 1600×1000), the segment a restarted process resumed lists the segment the
 * killed process ran before it among its References, and a click there goes to that segment. The
 * runs are `restarted-runs.ts`'s (a worker killed with SIGKILL while the run awaits, a second one
 * resuming it from the same SQLite file; docs/telemetry.md §Spans). The screenshot lands in
 * `.artifacts/jaeger-ui/resume-link.png` (docs/images/jaeger-resume-link.png is a copy).
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, probeChromium } from './support/chromium.ts';
import {
  JAEGER_OTLP_HTTP_URL,
  JAEGER_QUERY_URL,
  JaegerClient,
  type JaegerSpan,
  jaegerSuite,
  parentSpanId,
} from './support/jaeger.ts';
import { type RestartedRuns, runAcrossRestart } from './support/restarted-runs.ts';

const SUITE = 'Jaeger UI in Chromium: a resumed segment links the one before the restart';
const jaegerGate = await jaegerSuite(SUITE);
const chromium = probeChromium(SUITE);
const ARTIFACTS = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), '.artifacts/jaeger-ui');
const SEGMENT = 'invoke_agent Support agent';

describe.skipIf(!jaegerGate.run || !(chromium.available || chromium.required))(SUITE, () => {
  let restarted: RestartedRuns | undefined;
  let traceId: string;
  let segments: JaegerSpan[];
  let spanCount: number;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jaegerGate.assertAvailable();
    const html = await (await fetch(`${JAEGER_QUERY_URL}/search`)).text();
    if (!html.includes('<title>Jaeger UI</title>')) {
      throw new Error(
        `the Jaeger at ${JAEGER_QUERY_URL} serves no UI: start it with scripts/jaeger.sh (UI assets)`,
      );
    }
    restarted = await runAcrossRestart(JAEGER_OTLP_HTTP_URL);
    traceId = restarted.traceIds.awaiting;
    const trace = await new JaegerClient().waitForTrace(traceId, {
      until: (t) => t.spans.filter((span) => span.operationName === SEGMENT).length >= 3,
    });
    spanCount = trace.spans.length;
    segments = trace.spans
      .filter((span) => span.operationName === SEGMENT)
      .sort((a, b) => a.startTime - b.startTime);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    restarted?.dispose();
  });

  it('lists the killed process’s segment under the resumed one’s References; a click goes to it', {
    timeout: 60_000,
  }, async () => {
    const [first, second, third] = segments as [JaegerSpan, JaegerSpan, JaegerSpan];
    expect(parentSpanId(third)).toBe(first.spanID);
    await page.goto(`${JAEGER_QUERY_URL}/trace/${traceId}`);
    await page.waitForFunction(
      (count) => document.querySelectorAll('.span-row .endpoint-name').length >= count,
      spanCount,
      { timeout: 30_000 },
    );
    // The resumed segment is the third invoke_agent row (rows follow start time).
    await page.locator('.span-row', { hasText: SEGMENT }).nth(2).locator('.span-name').click();
    const detail = page.locator('.detail-row').first();
    await detail.waitFor({ timeout: 10_000 });
    await detail.locator('.AccordianReferences--header').click();
    const references = detail.locator('.ReferencesList--Item');
    await references.first().waitFor({ timeout: 10_000 });
    const items = (await references.allInnerTexts()).map((text) => text.replace(/\s+/g, ' '));
    // Its parent (segment 1) and the segment before it (segment 2, from the killed process).
    expect(items).toHaveLength(2);
    expect(items.find((text) => text.includes(first.spanID))).toContain('CHILD_OF');
    const link = items.find((text) => text.includes(second.spanID));
    expect(link).toContain('FOLLOWS_FROM');
    expect(link).toContain(SEGMENT);
    await page.screenshot({ path: join(ARTIFACTS, 'resume-link.png') });

    // Following the reference focuses segment 2 in the trace view.
    await references.filter({ hasText: second.spanID }).locator('a[role="button"]').click();
    await page.waitForURL((url) => url.searchParams.get('uiFind') === second.spanID, { timeout: 10_000 });
  });
});
