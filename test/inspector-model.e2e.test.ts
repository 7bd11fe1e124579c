import { createServer } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { describe, expect, it } from 'vitest';
import { modelPlanner } from '../models/model-planner.ts';
import { costBudget } from '../plugins/cost-budget.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { lookupTool } from './support/busy-runs.ts';
import { probeChromium } from './support/chromium.ts';
import { inspectorPages } from './support/inspector-page.ts';

/**
 * The model's side of a run in the inspector (issue 38 item 5), in Debian's Chromium at 1280×800:
 * per planner turn what it was sent and answered, its tokens, latency and cost (costBudget); the runs list's start
 * time, duration and tokens; the runs of a session; a provider error's network cause in the
 * outcome. Required under CI=true. TOOLWARDEN_UPDATE_SCREENSHOTS=1 writes .artifacts/inspector-*.png.
 */
const SUITE = 'inspector model side (test/inspector-model.e2e.test.ts)';
const { available, required } = probeChromium(SUITE);
const screenshots = process.env.TOOLWARDEN_UPDATE_SCREENSHOTS === '1';

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(!available && !required)(SUITE, () => {
  const pages = inspectorPages();

  it('shows what costBudget priced: each turn’s cost in its header, the run’s in the list', async () => {
    const { runtime, page, problems } = await pages.open({
      runtime: {
        agent: { id: 'support' },
        planner: scriptedPlanner([
          {
            toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com', turn: 1 } }],
            usage: { inputTokens: 320, outputTokens: 18 },
          },
          { finalResponse: { text: 'Ada is on free.' }, usage: { inputTokens: 410, outputTokens: 9 } },
        ]),
        tools: [lookupTool],
        plugins: [
          costBudget({
            limit: 1,
            currency: 'USD',
            model: 'test-model',
            maxOutputTokens: 100,
            prices: { 'test-model': { inputPerMTok: 2.5, outputPerMTok: 10 } },
          }),
        ],
      },
    });
    const outcome = await runtime
      .start({ runId: 'priced', messages: [{ role: 'user', content: 'Which plan is Ada on?' }] })
      .result();
    expect(outcome.cost?.spent).toBeCloseTo((730 * 2.5 + 27 * 10) / 1e6, 12);
    await page.click('#run-list li[data-key="priced"]');
    await page.waitForSelector('#run-status:text("completed")');

    // 320 in / 18 out at 2.5 / 10 USD per MTok: $0.00098, shown to 4 digits; then $0.0011.
    const turns = await page.$$eval('#timeline li.model-turn', (rows) => rows.map((row) => row.textContent));
    expect(turns[0]).toMatch(/^turn 1 · \d+(\.\d)? (ms|s) · 320 in \/ 18 out tok · \$0\.001$/);
    expect(turns[1]).toMatch(/^turn 2 · \d+(\.\d)? (ms|s) · 410 in \/ 9 out tok · \$0\.0011$/);
    const facts = (await page.textContent('#run-list li[data-key="priced"] .run-facts')) ?? '';
    expect(facts).toMatch(/ · 757 tok · \$0\.0021$/);
    expect(problems).toEqual([]);
  });

  it('shows per turn what the model was sent and answered, with tokens and latency; the list’s facts; a session’s runs', async () => {
    const lookup = (email: string) => ({ name: 'crm.lookup', input: { email, turn: 1 } });
    const { runtime, page, problems } = await pages.open({
      runtime: {
        agent: { id: 'support' },
        planner: scriptedPlanner([
          { toolCalls: [lookup('ada@example.com')], usage: { inputTokens: 320, outputTokens: 18 } },
          { finalResponse: { text: 'Ada is on free.' }, usage: { inputTokens: 410, outputTokens: 9 } },
          { finalResponse: { text: 'Nothing else.' }, usage: { inputTokens: 100, outputTokens: 4 } },
        ]),
        tools: [lookupTool],
      },
    });
    await runtime
      .start({
        runId: 'ask-ada',
        sessionId: 'thread-7',
        messages: [{ role: 'user', content: 'Which plan is Ada on?' }],
      })
      .result();
    await runtime
      .start({
        runId: 'elsewhere',
        sessionId: 'thread-8',
        messages: [{ role: 'user', content: 'Anything?' }],
      })
      .result();
    await page.click('#run-list li[data-key="ask-ada"]');
    await page.waitForSelector('body[data-opened="ask-ada"]');
    await page.waitForSelector('#run-status:text("completed")');

    // The list: start time, duration, tokens, session.
    const facts = (await page.textContent('#run-list li[data-key="ask-ada"] .run-facts')) ?? '';
    expect(facts).toMatch(/^\d\d:\d\d:\d\d · \d+(\.\d)? (ms|s) · 757 tok · session thread-7$/);

    // Per turn: latency and tokens in its header; opened, the messages sent and the answer.
    const turns = await page.$$eval('#timeline li.model-turn', (rows) => rows.map((row) => row.textContent));
    expect(turns).toHaveLength(2);
    expect(turns[0]).toMatch(/^turn 1 · \d+(\.\d)? (ms|s) · 320 in \/ 18 out tok$/);
    expect(turns[1]).toMatch(/^turn 2 · \d+(\.\d)? (ms|s) · 410 in \/ 9 out tok$/);
    await page.click('#timeline li.model-turn >> nth=1');
    const detail = (await page.textContent('#timeline-detail')) ?? '';
    expect(detail).toContain('sent 3 messages (2 new)');
    expect(detail).toContain('assistant: → crm.lookup({"email":"ada@example.com","turn":1})');
    expect(detail).toMatch(/tool crm\.lookup: \{"email":"ada@example\.com","plan":"free"/);
    expect(detail).toContain('text: Ada is on free.');
    await page.click('#timeline li.model-turn >> nth=0');
    expect(await page.textContent('#timeline-detail')).toContain('user: Which plan is Ada on?');
    if (screenshots) await page.screenshot({ path: '.artifacts/inspector-model-turns.png' });

    // The session: the runs of thread-7 only.
    await page.click('#run-session');
    await page.waitForSelector('#run-count:text("(1 of 2)")');
    expect(await page.inputValue('#run-filter')).toBe('session=thread-7');
    expect(
      await page.$$eval('#run-list li[data-key]', (rows) => rows.map((row) => row.getAttribute('data-key'))),
    ).toEqual(['ask-ada']);
    expect(problems).toEqual([]);
  });

  it('shows a provider error’s network cause (ECONNREFUSED) above the failed run’s chart and in its turn', async () => {
    const port = await closedPort();
    const provider = createOpenAICompatible({ name: 'local', baseURL: `http://127.0.0.1:${port}/v1` });
    const { runtime, page, problems } = await pages.open({
      runtime: {
        agent: { id: 'support' },
        planner: modelPlanner({ model: provider.chatModel('gemma-3-270m'), maxRetries: 0 }),
        tools: [lookupTool],
      },
    });
    const outcome = await runtime
      .start({ runId: 'no-model', messages: [{ role: 'user', content: 'Which plan is Ada on?' }] })
      .result();
    expect(outcome.status).toBe('failed');
    await page.waitForSelector('body[data-opened="no-model"]');
    await page.waitForSelector('#outcome:not([hidden]) #outcome-causes li');
    const causes = await page.$$eval('#outcome-causes li', (items) => items.map((item) => item.textContent));
    expect(causes.join('\n')).toMatch(/ECONNREFUSED/);
    await page.click('#timeline li.model-turn');
    expect(await page.textContent('#timeline-detail')).toMatch(/caused by .*ECONNREFUSED/);
    if (screenshots) await page.screenshot({ path: '.artifacts/inspector-econnrefused.png' });
    expect(problems).toEqual([]);
  });
});
