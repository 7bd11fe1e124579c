/**
 * The compare panel's model (issue 38 item 3; docs/inspection.md §Page), without a browser: a real
 * 20-step run and its fork at step 5 with another scripted planner, compared by compareRuns with
 * their logs, shaped for the page by the server (`shownComparison`) and worded by `compareView`.
 * The page in Chromium: test/inspector-compare.e2e.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { compareView, togglePick } from '../inspector/page/compare-model.ts';
import { defaultSanitize } from '../inspector/sanitize.ts';
import { shownComparison } from '../inspector/server/compare-route.ts';
import { compareRuns, type RunComparison } from '../runtime/compare-runs.ts';
import { recordedRun } from '../runtime/run-record.ts';
import type { CoreRuntime } from '../runtime/runtime-api.ts';
import { divergingAtStep6, twentyStepRun } from './support/ledger-runs.ts';

let runtime: CoreRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

async function forkedAtStep5(): Promise<RunComparison> {
  const run = await twentyStepRun();
  runtime = run.runtime;
  const fork = await run.runtime.fork('p', {
    atEvent: run.planningAt(5),
    replay: 'recorded',
    planner: divergingAtStep6(),
    runId: 'f5',
  });
  await fork.result();
  return compareRuns(await recordedRun(run.runtime, 'p'), await recordedRun(run.runtime, 'f5'));
}

describe('the compare panel model', () => {
  it('labels each step same or changed, marks step 6 the first difference and its changed calls', async () => {
    const view = compareView(shownComparison(await forkedAtStep5(), ['p', 'f5'], defaultSanitize));

    expect(view.a).toEqual({ runId: 'p', key: 'p', status: 'completed' });
    expect(view.b).toEqual({ runId: 'f5', key: 'f5', status: 'completed' });
    expect(view.verdict).toBe(
      `part at step 6: inputs, results changed · 5 of ${view.rows.length} steps the same`,
    );
    expect(view.rows.map((row) => row.label).slice(0, 7)).toEqual([
      'same',
      'same',
      'same',
      'same',
      'same',
      'changed',
      'changed',
    ]);
    expect(view.rows.filter((row) => row.first).map((row) => row.step)).toEqual([6]);
    const step6 = view.rows.find((row) => row.step === 6)!;
    expect(step6.fields).toBe('inputs, results');
    expect(step6.a.lines).toEqual([
      { text: '#1 ledger.add {"amount":6} → {"balance":21}', changed: true },
      { text: '106 in / 10 out tok', changed: false },
    ]);
    expect(step6.b.lines[0]).toEqual({
      text: expect.stringMatching(/^#1 ledger\.add \{"amount":600\} → \{"balance":\d+\}$/),
      changed: true,
    });
    // Steps 1-5: nothing marked. Step 7 on: the same inputs, other balances (results).
    for (const row of view.rows.slice(0, 5)) {
      expect([...row.a.lines, ...row.b.lines].some((line) => line.changed)).toBe(false);
    }
    expect(view.rows.find((row) => row.step === 7)!.fields).toBe('results');
    expect(view.totals).toContain('status same');
    expect(view.totals.find((line) => line.startsWith('final answer'))).toMatch(
      /^final answer changed: balance 210 → balance \d+$/,
    );
    // Cost has no pricing here: said once, as not compared, not as "cost same".
    expect(view.totals.some((line) => line.startsWith('cost'))).toBe(false);
    expect(view.notCompared).toBe('not compared: cost');
  });

  it('shows a step one run does not have as absent, changed', () => {
    const comparison = {
      same: false,
      firstDifference: { step: 2, fields: ['toolCalls'] },
      totals: { status: 'same', finalAnswer: 'same', tokens: 'same', cost: 'same', durationMs: 'same' },
      notCompared: [],
      a: {
        key: 'a',
        runId: 'a',
        status: 'completed',
        tokens: { inputTokens: 0, outputTokens: 0 },
        hasEvents: false,
      },
      b: {
        key: 'b',
        runId: 'b',
        status: 'completed',
        tokens: { inputTokens: 0, outputTokens: 0 },
        hasEvents: false,
      },
      steps: [
        {
          step: 2,
          same: false,
          fields: { toolCalls: 'changed', inputs: 'changed' },
          changedCalls: [{ index: 0, a: { index: 0, name: 'kb.search', input: { q: 'x' }, result: [] } }],
          a: {
            step: 2,
            calls: [{ index: 0, name: 'kb.search', input: { q: 'x' }, result: [] }],
            hints: [],
            policyDecisions: [],
            awaits: [],
          },
        },
      ],
    } as unknown as Parameters<typeof compareView>[0];
    const [row] = compareView(comparison).rows;
    expect(row!.a.lines).toEqual([{ text: '#1 kb.search {"q":"x"} → []', changed: true }]);
    expect(row!.b).toEqual({ present: false, lines: [{ text: 'no such step', changed: true }] });
    expect(row!.fields).toBe('tools called, inputs');
  });

  it('sends the page the comparison sanitized after comparing: a secret key differs, the page never sees it', () => {
    const call = (apiKey: string) => ({
      index: 0,
      name: 'crm.lookup',
      input: { email: 'ada@example.com', apiKey },
      result: { id: 1 },
    });
    const step = (apiKey: string) => ({
      step: 1,
      calls: [call(apiKey)],
      hints: [],
      policyDecisions: [],
      awaits: [],
    });
    const record = (runId: string, apiKey: string) => ({
      runId,
      status: 'completed',
      steps: [step(apiKey)],
      tokens: { inputTokens: 0, outputTokens: 0 },
      hasEvents: false,
    });
    const comparison: RunComparison = {
      same: false,
      firstDifference: { step: 1, fields: ['inputs'] },
      steps: [
        {
          step: 1,
          same: false,
          fields: {} as RunComparison['steps'][number]['fields'],
          changedCalls: [{ index: 0, a: call('sk-live-aaa'), b: call('sk-live-bbb') }],
          a: step('sk-live-aaa'),
          b: step('sk-live-bbb'),
        },
      ],
      totals: { status: 'same', finalAnswer: 'same', tokens: 'same', cost: 'same', durationMs: 'same' },
      notCompared: [],
      summary: 'part at step 1 (#1 crm.lookup input {"apiKey":"sk-live-aaa"} → {"apiKey":"sk-live-bbb"})',
      a: record('a', 'sk-live-aaa'),
      b: record('b', 'sk-live-bbb'),
    };
    const shown = JSON.stringify(shownComparison(comparison, ['a', 'b'], defaultSanitize));
    expect(shown).not.toContain('sk-live');
    expect(shown).toContain('ada@example.com');
    expect(shown).toContain('"firstDifference":{"step":1,"fields":["inputs"]}');
  });

  it('keeps at most two runs picked, letting the older pick go', () => {
    expect(togglePick([], 'a')).toEqual(['a']);
    expect(togglePick(['a'], 'b')).toEqual(['a', 'b']);
    expect(togglePick(['a', 'b'], 'c')).toEqual(['b', 'c']);
    expect(togglePick(['a', 'b'], 'a')).toEqual(['b']);
  });
});
