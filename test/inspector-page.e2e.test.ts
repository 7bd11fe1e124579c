import { request } from 'node:http';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Planner, scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { probeChromium } from './support/chromium.ts';
import { inspectorPages } from './support/inspector-page.ts';

/**
 * The inspector as a tool people use (issue 15, docs/inspection.md §Page), in Debian's Chromium at
 * 1280×800: a legible simple chart (computed label size at fit), zoom and pan, the timeline with
 * a call's hint, time travel, answering a run from the page (and a wrong answer shown while the run
 * still waits), approving a confirmation, and writes refused without the token, from another
 * origin, without the page's header, or when read-only. Required under CI=true.
 * TOOLWARDEN_UPDATE_SCREENSHOTS=1 writes the screenshots in examples/inspection/.
 */
const SUITE = 'inspector page (test/inspector-page.e2e.test.ts)';
const { available, required } = probeChromium(SUITE);
const screenshots = process.env.TOOLWARDEN_UPDATE_SCREENSHOTS === '1';

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Creates or updates a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  examples: [{ email: 'ada@example.com', plan: 'pro' }],
  execute: async (input) => ({ saved: true, ...input }),
});
const wipe = defineTool({
  id: 'crm.delete_profile',
  description: 'Deletes a customer profile',
  input: z.object({ email: z.email() }),
  requiresConfirmation: true,
  execute: async ({ email }) => ({ deleted: email }),
});
const lookup = defineTool({
  id: 'crm.lookup',
  description: 'Looks a customer up (run by the app)',
  input: z.object({ email: z.string() }),
  output: z.object({ plan: z.enum(['free', 'pro']) }),
});

describe.skipIf(!available && !required)(SUITE, () => {
  const pages = inspectorPages();

  /** The page of a support runtime (three CRM tools, a Jaeger link) with `planner`. */
  const open = (
    options: { readOnly?: boolean } = {},
    planner: Planner = scriptedPlanner([]),
    viewport = { width: 1280, height: 800 },
  ) =>
    pages.open({
      runtime: { agent: { id: 'support' }, planner, tools: [upsert, wipe, lookup] },
      inspector: { jaegerUrl: 'http://127.0.0.1:16686', ...options },
      viewport,
    });

  const zoomScale = (page: Page) =>
    page.$eval('#canvas', (canvas) => new DOMMatrix(getComputedStyle(canvas).transform).a);

  it('draws the simple view legibly at fit, zooms and pans, and switches to the full chart', async () => {
    const { page, problems } = await open();
    const view = '[data-view="simple"]';
    // Only the states a run rests in: no transient states in the simple view.
    const states = await page.$$eval(`${view} [data-state-id]`, (nodes) =>
      nodes.map((node) => (node as SVGElement).dataset.stateId),
    );
    expect(states).toEqual(
      expect.arrayContaining([
        'run.planning',
        'run.validating',
        'run.executing',
        'run.awaiting.clarification',
        'run.resuming',
        'run.completed',
      ]),
    );
    expect(states).not.toContain('run.admitting');
    expect(states).not.toContain('run.routing');
    expect(states).not.toContain('run.validating.checking');
    // Labels at fit: every state title renders at 11 px or more.
    const scale = await zoomScale(page);
    const sizes = await page.$$eval(`${view} text.state-title`, (texts) =>
      texts.map((text) => Number.parseFloat(getComputedStyle(text).fontSize)),
    );
    expect(Math.min(...sizes) * scale).toBeGreaterThanOrEqual(11);
    if (screenshots) await page.screenshot({ path: 'examples/inspection/simple-chart.png' });

    await page.click('#zoom-in');
    expect(await zoomScale(page)).toBeCloseTo(scale * 1.25, 3);
    const before = await page.$eval(
      '#canvas',
      (canvas) => new DOMMatrix(getComputedStyle(canvas).transform).e,
    );
    const box = (await page.$('#viewport'))!.boundingBox();
    const { x, y, width, height } = (await box)!;
    await page.mouse.move(x + width / 2, y + height / 2);
    await page.mouse.down();
    await page.mouse.move(x + width / 2 + 120, y + height / 2 + 40, { steps: 4 });
    await page.mouse.up();
    const after = await page.$eval(
      '#canvas',
      (canvas) => new DOMMatrix(getComputedStyle(canvas).transform).e,
    );
    expect(after - before).toBeCloseTo(120, 0);
    await page.mouse.move(x + width / 2, y + height / 2);
    await page.mouse.wheel(0, -300);
    expect(await zoomScale(page)).toBeGreaterThan(scale * 1.25);
    await page.click('#zoom-fit');
    expect(await zoomScale(page)).toBeCloseTo(scale, 3);

    await page.click('#view-full');
    expect(await page.isVisible('[data-view="full"] svg')).toBe(true);
    expect(await page.isVisible('[data-view="simple"] svg')).toBe(false);
    expect(
      await page.$$eval('[data-view="full"] [data-state-id="run.admitting"]', (nodes) => nodes.length),
    ).toBe(1);
    expect(problems).toEqual([]);
  });

  it('answers a clarification from the page; the timeline opens a call’s hint; an earlier event shows the earlier state', async () => {
    const planner = scriptedPlanner([
      {
        await: {
          clarification: {
            id: 'which-plan',
            question: 'Which plan should Ada be on?',
            missingFields: ['plan'],
          },
        },
      },
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'gold' } }] },
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
      { finalResponse: { text: 'Ada is on pro.' } },
    ]);
    const { runtime, page, problems } = await open({}, planner);
    const run = runtime.start({
      runId: 'ask-run',
      messages: [{ role: 'user', content: 'Move Ada to a paid plan' }],
    });
    await page.waitForSelector('#await-panel:not([hidden]) #answer-text');
    expect(await page.textContent('#await-body .question')).toBe('Which plan should Ada be on?');
    // The simple chart shows the waiting state.
    expect(
      await page.$$eval('[data-view="simple"] [data-state-id].active', (nodes) =>
        nodes.map((n) => (n as SVGElement).dataset.stateId),
      ),
    ).toContain('run.awaiting.clarification');
    if (screenshots) await page.screenshot({ path: 'examples/inspection/clarification-form.png' });
    await page.fill('#answer-text', 'pro');
    await page.click('#answer-send');
    expect((await run.result()).status).toBe('completed');
    await page.waitForSelector('#run-status:text("completed")');

    // The timeline: two calls in two turns, the first refused with its hint.
    await page.waitForSelector('#timeline li.call >> nth=1');
    const outcomes = await page.$$eval('#timeline li.call .badge', (badges) =>
      badges.map((badge) => badge.textContent),
    );
    expect(outcomes).toEqual(['invalid_arguments', 'ok']);
    await page.click('#timeline li.call >> nth=0');
    const detail = await page.textContent('#timeline-detail');
    expect(detail).toContain('"reason": "invalid_arguments"');
    expect(detail).toContain('"plan"');
    expect(await page.getAttribute('#timeline-detail a', 'href')).toMatch(
      /^http:\/\/127\.0\.0\.1:16686\/(trace\/|search\?tags=.*ask-run)/,
    );
    if (screenshots) await page.screenshot({ path: 'examples/inspection/timeline.png' });

    // Time travel: the state_changed into awaiting shows the run as it was then.
    await page.click('#event-log li[data-type="state_changed"]:has-text("awaiting.clarification") .head');
    await page.waitForSelector('#travel:not([hidden])');
    const then = await page.$$eval('[data-view="full"] [data-state-id].active', (nodes) =>
      nodes.map((n) => (n as SVGElement).dataset.stateId),
    );
    expect(then).toContain('run.awaiting.clarification');
    expect(await page.textContent('#context-when')).toMatch(/as of event #\d+/);
    await page.click('#travel-live');
    const now = await page.$$eval('[data-view="full"] [data-state-id].active', (nodes) =>
      nodes.map((n) => (n as SVGElement).dataset.stateId),
    );
    expect(now).toContain('run.completed');
    expect(problems).toEqual([]);
  });

  it('shows a wrong answer inline while the run still waits; approving a confirmation runs the call', async () => {
    const planner = scriptedPlanner([
      {
        await: {
          externalTools: {
            id: 'ext',
            calls: [{ name: 'crm.lookup', toolCallId: 'e1', input: { email: 'ada@example.com' } }],
          },
        },
      },
      { toolCalls: [{ name: 'crm.delete_profile', input: { email: 'bob@example.com' } }] },
      { finalResponse: { text: 'done' } },
    ]);
    const { runtime, page, problems } = await open({}, planner);
    const run = runtime.start({
      runId: 'ext-run',
      messages: [{ role: 'user', content: 'Look Ada up, then delete Bob' }],
    });
    await page.waitForSelector('#answer-results');
    // A result that fails the tool's output schema: refused, shown, nothing lost.
    await page.fill('#answer-results', JSON.stringify([{ toolCallId: 'e1', result: { plan: 'gold' } }]));
    await page.click('#answer-send');
    await page.waitForSelector('#answer-error:not([hidden])');
    expect(await page.textContent('#answer-error')).toMatch(/e1|output|plan/i);
    expect(run.status).toBe('awaiting');
    await page.fill('#answer-results', JSON.stringify([{ toolCallId: 'e1', result: { plan: 'pro' } }]));
    await page.click('#answer-send');
    await page.waitForSelector('#answer-approve');
    expect(await page.textContent('#await-body .question')).toMatch(/Approve the call to crm.delete_profile/);
    await page.click('#answer-approve');
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults.find((result) => result.name === 'crm.delete_profile')?.result).toEqual({
      deleted: 'bob@example.com',
    });
    expect(problems).toEqual([]);
  });

  it('shows why a run failed at the top of its pane, and labels the arrow taken with plan.error', async () => {
    class QuotaExceededError extends Error {
      override name = 'QuotaExceededError';
    }
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
      async () => {
        throw new QuotaExceededError('model quota exceeded for today');
      },
    ]);
    const { runtime, page, problems } = await open({}, planner);
    const run = runtime.start({ runId: 'failing-run', messages: [{ role: 'user', content: 'Move Ada' }] });
    expect((await run.result()).status).toBe('failed');
    // The run's end arrives as its run_failed event and its last snapshot, in either order.
    await page.waitForSelector('#outcome:not([hidden]) #outcome-step:text("in planning")');
    await page.waitForSelector('[data-view="simple"] [data-edge-id="run.planning>run.failed"].taken');
    expect(await page.getAttribute('#outcome', 'data-kind')).toBe('failed');
    expect(await page.textContent('#outcome-error')).toBe('QuotaExceededError');
    expect(await page.textContent('#outcome-message')).toBe('Planner failed: model quota exceeded for today');
    expect(await page.textContent('#outcome-step')).toBe('in planning, turn 2 (on plan.error)');
    // The list says it too, next to the run.
    expect(await page.textContent('#run-list li[data-key="failing-run"] .run-meta')).toContain(
      'QuotaExceededError',
    );
    // The simple view: the taken arrow into failed names the way taken, not planInvalid.
    const taken = await page.$$eval('[data-view="simple"] [data-edge-id].taken', (nodes) =>
      nodes.map((node) => ({
        id: (node as SVGElement).dataset.edgeId,
        label: node.querySelector('.edge-float .edge-label')?.textContent,
      })),
    );
    expect(taken).toEqual([{ id: 'run.planning>run.failed', label: 'plan.error' }]);
    if (screenshots) await page.screenshot({ path: 'examples/inspection/failed-run.png' });
    expect(problems).toEqual([]);
  });

  it('draws the full chart with text of 11 px or more at fit on 1600×1000, and gives run ids whole', async () => {
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
      { finalResponse: { text: 'done' } },
    ]);
    const { runtime, page, problems } = await open({}, planner, { width: 1600, height: 1000 });
    const runId = 'support-session-2026-11-25T19:20:00Z-7f3c9a1e-4b2d-4e8f-9c61-0a5d3e7b2f14';
    await runtime.start({ runId, messages: [{ role: 'user', content: 'Move Ada' }] }).result();
    await page.waitForSelector('#run-status:text("completed")');
    await page.click('#view-full');
    const scale = await zoomScale(page);
    // Every text of the full chart at fit, as drawn: state titles, invoked actors, tags, and the
    // floating label of the edge just taken.
    const drawn = await page.$$eval(
      '[data-view="full"] text',
      (texts, at) =>
        texts
          .filter(
            (text) =>
              (text as SVGTextElement).getBBox().width > 0 && getComputedStyle(text).display !== 'none',
          )
          .map((text) => ({
            text: text.textContent,
            px: Number.parseFloat(getComputedStyle(text).fontSize) * at,
          })),
      scale,
    );
    expect(drawn.length).toBeGreaterThan(25);
    expect(drawn.filter((text) => text.px < 11)).toEqual([]);
    await page.waitForSelector('[data-view="full"] .edge.taken');
    const taken = await page.$$eval('[data-view="full"] .edge.taken .edge-float .edge-label', (labels) =>
      labels.map((label) => label.textContent),
    );
    expect(taken).toContain('plan.done [planHasFinalResponse]');
    if (screenshots) await page.screenshot({ path: 'examples/inspection/full-chart.png' });

    // The run id, cut in the list, whole on hover, in the title and on the clipboard.
    expect(await page.getAttribute(`#run-list li[data-key="${runId}"] .run-id`, 'title')).toBe(runId);
    expect(await page.textContent('#run-title')).toBe(runId);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.click('#copy-id');
    await page.waitForSelector('#copy-id:text("copied")');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(runId);
    expect(problems).toEqual([]);
  });

  it('forks a run from a timeline call with an edited input: the fork completes with it, both runs show the link', async () => {
    const planner: Planner = {
      async planStart() {
        return {
          toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'free' } }],
        };
      },
      async planResume(input) {
        return { finalResponse: { text: `saved ${JSON.stringify(input.toolResults.at(-1)?.result)}` } };
      },
    };
    const { runtime, page, problems } = await open({}, planner, { width: 1600, height: 1000 });
    const parent = runtime.start({ runId: 'fork-parent', messages: [{ role: 'user', content: 'Add Ada' }] });
    expect((await parent.result()).finalResponse?.text).toContain('"plan":"free"');
    await page.waitForSelector('#run-status:text("completed")');
    await page.click('#timeline li.call button.fork');
    await page.waitForFunction(() =>
      (document.getElementById('fork-edit') as HTMLTextAreaElement)?.value.includes('free'),
    );
    const input = JSON.parse(await page.inputValue('#fork-edit'));
    expect(input).toEqual({ email: 'ada@example.com', plan: 'free' });
    await page.fill('#fork-edit', JSON.stringify({ ...input, plan: 'pro' }));
    await page.click('#fork-send');
    // The fork opens: a new run, linked to its parent, that ran the call with the edited input.
    await page.waitForSelector('#lineage:not([hidden]) :text("forked from")');
    const childId = (await page.textContent('#run-title'))!;
    expect(childId).not.toBe('fork-parent');
    await page.waitForSelector('#run-status:text("completed")');
    const childEvents: { type: string; finalResponse?: { text: string } }[] = [];
    for await (const record of runtime.events(childId, { follow: false }))
      childEvents.push(record.event as never);
    expect(childEvents.find((event) => event.type === 'run_completed')?.finalResponse?.text).toBe(
      'saved {"saved":true,"email":"ada@example.com","plan":"pro"}',
    );
    expect(await page.textContent('#lineage')).toMatch(/forked from fork-parent at event #\d+/);
    expect(await page.$$eval('#event-log li[data-type="run_forked"]', (items) => items.length)).toBe(1);
    if (screenshots) await page.screenshot({ path: 'examples/inspection/fork.png' });
    // The parent says where its fork went.
    await page.click('#lineage .run-link');
    await page.waitForSelector(`#lineage:text("forked into ${childId}")`);
    expect(await page.textContent('#run-title')).toBe('fork-parent');
    await page.waitForSelector('#event-log li[data-type="run_forked"]');
    expect(problems).toEqual([]);
  });

  it('refuses writes without the token, from another origin, without the page header, and when read-only', async () => {
    const planner = scriptedPlanner([
      { await: { clarification: { id: 'q', question: 'Which plan?', missingFields: [] } } },
      { finalResponse: { text: 'ok' } },
    ]);
    const { runtime, server, page } = await open({}, planner);
    const run = runtime.start({ runId: 'guarded', messages: [{ role: 'user', content: 'hi' }] });
    await page.waitForSelector('#answer-text');
    const body = JSON.stringify({ kind: 'clarification', id: 'q', answer: 'pro' });
    const post = (path: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          `${server.origin}${path}`,
          { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const path = `/api/runs/guarded/answer?token=${encodeURIComponent(server.token)}`;
    expect(
      await post('/api/runs/guarded/answer', { origin: server.origin, 'x-toolwarden-inspector': 'answer' }),
    ).toBe(403);
    expect(await post(path, { origin: 'http://evil.example', 'x-toolwarden-inspector': 'answer' })).toBe(403);
    expect(await post(path, { origin: server.origin })).toBe(403);
    expect(run.status).toBe('awaiting');
    expect(await post(path, { origin: server.origin, 'x-toolwarden-inspector': 'answer' })).toBe(200);
    expect((await run.result()).status).toBe('completed');

    const readOnly = await open(
      { readOnly: true },
      scriptedPlanner([
        { await: { clarification: { id: 'q', question: 'Which plan?', missingFields: [] } } },
      ]),
    );
    readOnly.runtime.start({ runId: 'ro', messages: [{ role: 'user', content: 'hi' }] });
    await readOnly.page.waitForSelector('#await-body .note');
    expect(await readOnly.page.textContent('#await-body .note')).toMatch(/read-only/);
    expect(await readOnly.page.$('#answer-text')).toBeNull();
    // Nor can it fork: no fork button by the clarification, and the endpoint refuses.
    await readOnly.page.waitForSelector('#timeline li.note');
    expect(await readOnly.page.$('#timeline button.fork')).toBeNull();
    const fork = await fetch(
      `${readOnly.server.origin}/api/runs/ro/fork?token=${encodeURIComponent(readOnly.server.token)}`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: readOnly.server.origin,
          'x-toolwarden-inspector': 'fork',
        },
        body: JSON.stringify({ seq: 1 }),
      },
    );
    expect(fork.status).toBe(403);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${readOnly.server.origin}/api/runs/ro/answer?token=${encodeURIComponent(readOnly.server.token)}`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            origin: readOnly.server.origin,
            'x-toolwarden-inspector': 'answer',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(403);
  });
});
