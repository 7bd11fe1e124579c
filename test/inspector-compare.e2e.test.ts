/**
 * A fork beside its parent in the inspector page (issue 38 item 3; docs/inspection.md §Page), in
 * Debian's Chromium: a 20-step run forked at step 5 with another scripted planner (600 instead of
 * 6 at step 6, replaying the parent's record up to there); from the fork's `compare with parent` the page shows both runs step by step, each
 * step labelled same or changed, the first difference (step 6: its input and result) marked and
 * scrolled to; two runs picked in the list compare the same way. The screenshot goes to
 * .artifacts/inspector-compare.png (and examples/inspection/compare.png with
 * TOOLWARDEN_UPDATE_SCREENSHOTS=1). Required under CI=true.
 */
import { describe, expect, it } from 'vitest';
import { probeChromium } from './support/chromium.ts';
import { inspectorPages } from './support/inspector-page.ts';
import { divergingAtStep6, ledgerRuntimeOptions, runParent } from './support/ledger-runs.ts';

const SUITE = 'inspector compare runs (test/inspector-compare.e2e.test.ts)';
const { available, required } = probeChromium(SUITE);
const screenshots = process.env.TOOLWARDEN_UPDATE_SCREENSHOTS === '1';

describe.skipIf(!available && !required)(SUITE, () => {
  const pages = inspectorPages();

  it('shows a fork forked at step 5 with another planner beside its parent, step 6 the first difference', async () => {
    const { options, executions } = ledgerRuntimeOptions();
    let forkAnswer = '';
    const { telemetry: _, ...runtimeOptions } = options;
    const { page, problems } = await pages.open({
      runtime: runtimeOptions,
      viewport: { width: 1280, height: 800 },
      before: async (runtime) => {
        const { planningAt } = await runParent(runtime, executions);
        const fork = await runtime.fork('p', {
          atEvent: planningAt(5),
          replay: 'recorded',
          planner: divergingAtStep6(),
          runId: 'f5',
        });
        forkAnswer = (await fork.result()).finalResponse?.text ?? '';
      },
    });

    await page.click('#run-list [data-key="f5"]');
    await page.waitForSelector('#lineage:not([hidden]) #compare-parent');
    await page.click('#compare-parent');
    await page.waitForSelector('#compare-panel:not([hidden]) #compare-body tr[data-step="6"]');

    expect(await page.textContent('#compare-a')).toBe('p (completed)');
    expect(await page.textContent('#compare-b')).toBe('f5 (completed)');
    expect(await page.textContent('#compare-verdict')).toMatch(
      /^part at step 6: inputs, results changed · 5 of \d+ steps the same$/,
    );
    const labels = await page.$$eval('#compare-body tr', (rows) =>
      rows.map((row) => [Number((row as HTMLElement).dataset.step), (row as HTMLElement).dataset.label]),
    );
    expect(labels.slice(0, 6)).toEqual([
      [1, 'same'],
      [2, 'same'],
      [3, 'same'],
      [4, 'same'],
      [5, 'same'],
      [6, 'changed'],
    ]);
    // Only step 6 is the first difference, highlighted and in view; its changed call on each side.
    expect(await page.$$eval('#compare-body tr.first-difference', (rows) => rows.length)).toBe(1);
    const first = '#compare-body tr.first-difference[data-step="6"]';
    expect(await page.textContent(`${first} .label`)).toContain('first difference');
    const changed = await page.$$eval(`${first} .line[data-changed="true"]`, (lines) =>
      lines.map((line) => line.textContent),
    );
    expect(changed).toHaveLength(2);
    expect(changed[0]).toBe('#1 ledger.add {"amount":6} → {"balance":21}');
    expect(changed[1]).toMatch(/^#1 ledger\.add \{"amount":600\} → \{"balance":\d+\}$/);
    expect(await page.isVisible(first)).toBe(true);
    const inView = await page.$eval(first, (row) => {
      const box = row.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= window.innerHeight;
    });
    expect(inView).toBe(true);
    expect(forkAnswer).toMatch(/^balance \d+$/);
    expect(await page.textContent('#compare-totals')).toContain(
      `final answer changed: balance 210 → ${forkAnswer}`,
    );
    await page.screenshot({ path: '.artifacts/inspector-compare.png' });
    if (screenshots) await page.screenshot({ path: 'examples/inspection/compare.png' });

    // Any two runs picked in the list: the same comparison, the other way round.
    await page.click('#compare-close');
    expect(await page.isHidden('#compare-panel')).toBe(true);
    expect(await page.isHidden('#compare-picked')).toBe(true);
    await page.check('#run-list [data-key="f5"] input.pick');
    await page.check('#run-list [data-key="p"] input.pick');
    await page.click('#compare-picked');
    await page.waitForSelector(
      '#compare-panel:not([hidden]) #compare-body tr.first-difference[data-step="6"]',
    );
    expect(await page.textContent('#compare-a')).toBe('f5 (completed)');
    expect(await page.textContent('#compare-b')).toBe('p (completed)');
    expect(problems).toEqual([]);
  });
});
