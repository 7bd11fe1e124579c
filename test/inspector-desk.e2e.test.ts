import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deskRunId, deskRuntime } from './support/approval-desk.ts';
import { probeChromium } from './support/chromium.ts';
import { inspectorPages } from './support/inspector-page.ts';
import { spawnWorker, waitForLine } from './support/worker-output.ts';

/**
 * The inspector as one approval desk across restarts (issue 35 item 6; docs/inspection.md
 * §Approval desk), in Debian's Chromium: a process starts 50 refunds that wait for a confirmation
 * on a SQLite file and is killed (SIGKILL); a new process's inspector page lists all 50 (read from
 * the store, not hosted by it) and approves one from its form, which restores that run here and
 * runs its refund. Required under CI=true.
 */
const SUITE = 'inspector approval desk (test/inspector-desk.e2e.test.ts)';
const { available, required } = probeChromium(SUITE);
const screenshots = process.env.TOOLWARDEN_UPDATE_SCREENSHOTS === '1';
const CHILD = join(import.meta.dirname, 'support', 'approval-desk.ts');

describe.skipIf(!available && !required)(SUITE, () => {
  const pages = inspectorPages();
  const dirs: string[] = [];
  // After the pages' runtimes are closed (afterEach), never under an open store.
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the 50 runs a killed process left waiting, and approves one from the page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolwarden-desk-'));
    dirs.push(dir);
    const db = join(dir, 'runs.db');
    const first = spawnWorker(CHILD, { db, count: 50 });
    await waitForLine(first.lines, /^WAITING 50$/, first.exited, 60_000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const desk = deskRuntime(db);
    const { runtime, page, problems } = await pages.open({
      runtime: desk.options,
      inspector: { pageSize: 100 },
      timeout: 15_000,
    });
    await runtime.inspector!.seeded();
    await page.waitForSelector('#run-count:text("(50)")');
    await page.selectOption('#status-filter', 'awaiting');
    await page.waitForSelector('#run-count:text("(50 of 50)")');
    const listed = await page.$$eval('#run-list li[data-key]', (rows) =>
      rows.map((row) => row.getAttribute('data-key')),
    );
    expect(listed.sort()).toEqual(Array.from({ length: 50 }, (_, i) => deskRunId(i)));
    expect(runtime.inspector!.store.summary(deskRunId(7))?.status).toBe('awaiting');

    // Its form, as for a run hosted here: the call's input, approve.
    await page.uncheck('#follow');
    await page.click(`#run-list li[data-key="${deskRunId(7)}"]`);
    const box = `#await-body textarea.answer-edit[data-tool-call-id="${deskRunId(7)}:t1:c1"]`;
    await page.waitForSelector(box);
    expect(JSON.parse(await page.inputValue(box))).toEqual({ orderId: 'A-07', amountEur: 40 });
    if (screenshots) await page.screenshot({ path: '.artifacts/inspector-desk.png' });
    await page.click('#answer-approve');
    await page.waitForSelector('#run-status:text("completed")', { timeout: 20_000 });
    expect(desk.refunded).toEqual([{ orderId: 'A-07', amountEur: 40 }]);
    expect((await runtime.load(deskRunId(7)))?.status).toBe('completed');
    expect((await runtime.list({ awaiting: 'confirmation' })).length).toBe(49);
    expect(problems).toEqual([]);
  }, 120_000);
});
