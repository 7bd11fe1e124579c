import { describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { probeChromium } from './support/chromium.ts';
import { inspectorPages } from './support/inspector-page.ts';
import { refundTool } from './support/refund-tool.ts';

/**
 * Approve with edits from the inspector page (issue 24 item 4; docs/inspection.md §Page), in
 * Debian's Chromium: the call's input is an editable JSON box in the confirmation form; a bad edit
 * shows the tool boundary's hint next to the call and the run still waits; a good edit is approved,
 * the tool runs with it, and the run log shows the edit. Required under CI=true.
 */
const SUITE = 'inspector approve with edits (test/inspector-approve-edits.e2e.test.ts)';
const { available, required } = probeChromium(SUITE);

describe.skipIf(!available && !required)(SUITE, () => {
  const pages = inspectorPages();

  it('edits the input of a call to confirm: a bad edit shows its hint, a good one runs', async () => {
    const { tool: refund, refunded } = refundTool();
    const { runtime, page, problems } = await pages.open({
      runtime: {
        agent: { id: 'payments' },
        planner: scriptedPlanner([
          { toolCalls: [{ name: 'payments.refund', input: { orderId: 'A-17', amountEur: 500 } }] },
          { finalResponse: { text: 'Refunded.' } },
        ]),
        tools: [refund],
      },
    });
    const run = runtime.start({
      runId: 'refund-run',
      messages: [{ role: 'user', content: 'Refund A-17' }],
    });

    const box = '#await-body textarea.answer-edit[data-tool-call-id="refund-run:t1:c1"]';
    await page.waitForSelector(box);
    expect(JSON.parse(await page.inputValue(box))).toEqual({ orderId: 'A-17', amountEur: 500 });

    // A bad edit: refused by the tool boundary, its hint next to the call, the run still waits.
    await page.fill(box, JSON.stringify({ orderId: 'A-17', amountEur: 'a lot' }));
    await page.click('#answer-approve');
    const hint = '#await-body .edit-hint[data-tool-call-id="refund-run:t1:c1"]';
    await page.waitForSelector(`${hint}:not([hidden])`);
    expect(await page.textContent(hint)).toMatch(/amountEur/);
    expect(run.status).toBe('awaiting');
    expect(refunded).toEqual([]);
    expect(await page.isVisible('#answer-approve')).toBe(true);

    // A good edit, approved: the tool gets it, the run completes.
    await page.fill(box, JSON.stringify({ orderId: 'A-17', amountEur: 100 }));
    await page.click('#answer-approve');
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 100 }]);

    // The run log keeps the original, the edit and who made it; the page's log says so.
    const log: RunEvent[] = [];
    for await (const record of runtime.events(run.runId, { follow: false })) log.push(record.event);
    expect(log.find((event) => event.type === 'tool_call_scheduled')).toMatchObject({
      edited: {
        original: { orderId: 'A-17', amountEur: 500 },
        input: { orderId: 'A-17', amountEur: 100 },
        by: 'inspector',
      },
    });
    const scheduled = '#event-log li[data-type="tool_call_scheduled"] .summary';
    await page.waitForSelector(`${scheduled}:text("input edited by inspector")`);
    expect(problems).toEqual([]);
  });
});
