/**
 * Calls in doubt resolved from the inspector page (issue 34 item 3; docs/inspection.md §Page), in
 * Debian's Chromium: a run whose refund's outcome is unknown after its process died waits in
 * `awaiting.inDoubt`; the page lists the call (tool, id, start, input) with done / not done /
 * failed; an output the tool's schema refuses is shown by the call and the run still waits; the
 * refund's real output, sent as done, is recorded and the run completes, the refund made once.
 * Required under CI=true.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeChromium } from './support/chromium.ts';
import { crashAfterRefund, takeOverInDoubt } from './support/inspector-in-doubt.ts';
import { inspectorPages } from './support/inspector-page.ts';

const SUITE = 'inspector in-doubt form (test/inspector-in-doubt.e2e.test.ts)';
const { available, required } = probeChromium(SUITE);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwarden-inspector-in-doubt-e2e-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!available && !required)(SUITE, () => {
  const pages = inspectorPages();

  it('resolves a call in doubt from the page: a refused output is shown by its call, done completes the run', async () => {
    const { options, ledger } = await crashAfterRefund(dir, 'r1');
    let run!: Awaited<ReturnType<typeof takeOverInDoubt>>;
    const { runtime, page, problems } = await pages.open({
      runtime: options,
      before: async (runtime) => {
        run = await takeOverInDoubt(runtime, 'r1');
      },
    });
    try {
      await page.click('#run-list [data-key="r1"]');
      const call = '#await-body .in-doubt-call[data-tool-call-id="r1:t1:c1"]';
      await page.waitForSelector(call);
      expect(await page.textContent(`${call} .note`)).toMatch(
        /^payments\.refund \(r1:t1:c1\) · started \d{4}-\d\d-\d\dT[\d:.]+Z · restored$/,
      );
      expect(JSON.parse((await page.textContent(`${call} pre`))!)).toEqual({ orderId: 'A-17' });

      // Nothing chosen: the form says so by the call and sends nothing.
      await page.click('#in-doubt-send');
      await page.waitForSelector(`${call} .in-doubt-hint:not([hidden])`);
      expect(await page.textContent(`${call} .in-doubt-hint`)).toBe(
        'choose done, not done (run it) or failed',
      );

      // Done, with an output the tool's output schema refuses: the run's 409 by the call; it still waits.
      await page.check(`${call} input[value="done"]`);
      await page.fill(`${call} textarea.in-doubt-output`, '{ "refunded": 17 }');
      await page.click('#in-doubt-send');
      await page.waitForSelector(`${call} .in-doubt-hint:text("output schema")`);
      expect(run.state).toBe('awaiting.inDoubt');

      // The payment system says the refund went through: its output, sent as done.
      await page.fill(`${call} textarea.in-doubt-output`, '{ "refunded": "A-17" }');
      await page.click('#in-doubt-send');
      const outcome = await run.result();
      expect(outcome.status).toBe('completed');
      expect(outcome.finalResponse?.text).toBe('{"refunded":"A-17"}');
      expect(ledger).toEqual(['A-17']); // made once: never re-run blindly
      await page.waitForSelector('#run-list [data-key="r1"][data-status="completed"]');
      await page.waitForSelector('#await-panel[hidden]', { state: 'attached' });
      expect(problems).toEqual([]);
    } finally {
      await runtime.close();
      await runtime.store.close();
    }
  });
});
