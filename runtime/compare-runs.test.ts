import { describe, expect, it } from 'vitest';
import { restrictOnInvalidArguments } from '../policies/builtins/restrict-on-invalid-arguments.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { counterTool, divergingAtStep6, twentyStepRun } from '../test/support/ledger-runs.ts';
import { compareRuns } from './compare-runs.ts';
import { recordedRun } from './run-record.ts';

describe('compareRuns (issue 38 item 3)', () => {
  it('reports the first differing step and the changed calls of a run forked at step 5 with another scripted planner', async () => {
    const { runtime, parent, planningAt } = await twentyStepRun();
    const script = divergingAtStep6();
    const fork = await runtime.fork('p', {
      atEvent: planningAt(5),
      replay: 'recorded',
      planner: script,
      runId: 'f5',
    });
    const forked = await fork.result();
    expect(forked.status).toBe('completed');

    const byOutcome = compareRuns(parent, forked);
    expect(byOutcome.same).toBe(false);
    expect(byOutcome.firstDifference).toEqual({ step: 6, fields: ['inputs', 'results'] });
    const step6 = byOutcome.steps.find((s) => s.step === 6)!;
    expect(step6.changedCalls).toEqual([
      {
        index: 0,
        a: { index: 0, name: 'ledger.add', input: { amount: 6 }, result: { balance: 21 } },
        b: { index: 0, name: 'ledger.add', input: { amount: 600 }, result: expect.any(Object) },
      },
    ]);
    expect(byOutcome.steps.filter((s) => s.same).map((s) => s.step)).toEqual([1, 2, 3, 4, 5]);
    expect(byOutcome.totals).toMatchObject({ status: 'same', finalAnswer: 'changed', tokens: 'changed' });
    expect(byOutcome.summary).toContain(
      'part at step 6: inputs, results changed (#1 ledger.add input {"amount":6} → {"amount":600})',
    );
    expect(byOutcome.notCompared).toEqual(['policyDecisions', 'tokens', 'durationMs', 'cost']);

    // Stored runs (runtime.load) and stored runs with their logs say the same, and the log adds tokens.
    const stored = compareRuns((await runtime.load('p'))!, (await runtime.load('f5'))!);
    expect(stored.firstDifference).toEqual({ step: 6, fields: ['inputs', 'results'] });
    const logged = compareRuns(await recordedRun(runtime, 'p'), await recordedRun(runtime, 'f5'), {
      pricing: { inputPerMillion: 3, outputPerMillion: 15 },
    });
    expect(logged.firstDifference?.step).toBe(6);
    // The last step: the parent's answer has usage 150/5, the script's none.
    const last = logged.steps.at(-1)!;
    expect(last).toMatchObject({
      step: 21,
      fields: { finalAnswer: 'changed', tokens: 'changed', cost: 'changed' },
    });
    expect(logged.notCompared).toEqual([]);
    await runtime.close();
  });

  it('finds a run the same as itself, and as its recorded fork with the same planner', async () => {
    const { runtime, parent, scheduledAt } = await twentyStepRun();
    expect(compareRuns(parent, parent).same).toBe(true);
    expect(compareRuns(parent, parent).firstDifference).toBeUndefined();
    const fork = await runtime.fork('p', { atEvent: scheduledAt(10), replay: 'recorded' });
    const forked = await fork.result();
    const comparison = compareRuns(await recordedRun(runtime, 'p'), await recordedRun(runtime, fork.runId));
    expect(comparison.same).toBe(true);
    expect(comparison.summary).toMatch(/^p and .* are the same: 21 steps/);
    expect(compareRuns(parent, forked).same).toBe(true);
    await runtime.close();
  });

  it('labels policy decisions and awaits from the event log', async () => {
    const run = async (runId: string, amount: unknown, policies: boolean) => {
      const { tool } = counterTool();
      const runtime = createRuntime({
        agent: { id: 'l' },
        planner: scriptedPlanner([
          { toolCalls: [{ name: 'ledger.add', input: { amount } }] },
          { await: { clarification: { id: 'q', question: 'Which amount?', missingFields: ['amount'] } } },
          { finalResponse: { text: 'ok' } },
        ]),
        tools: [tool],
        telemetry: false,
        policies: policies ? [restrictOnInvalidArguments({ maxRetries: 2 })] : [],
      });
      const handle = runtime.start({ runId, messages: [{ role: 'user', content: 'add' }] });
      while (handle.status !== 'awaiting') await new Promise((resolve) => setTimeout(resolve, 5));
      await handle.provideClarification({ id: 'q', answer: '3' });
      await handle.result();
      return { runtime, record: await recordedRun(runtime, runId) };
    };
    const a = await run('a', 'three', true);
    const b = await run('b', 'three', false);
    const comparison = compareRuns(a.record, b.record);
    const step1 = comparison.steps.find((s) => s.step === 1)!;
    expect(step1.fields).toMatchObject({
      toolCalls: 'same',
      inputs: 'same',
      hints: 'same',
      policyDecisions: 'changed',
    });
    expect(comparison.steps.find((s) => s.step === 2)!.a!.awaits).toEqual(['clarification: Which amount?']);
    expect(comparison.firstDifference).toEqual({ step: 1, fields: ['policyDecisions'] });
    await a.runtime.close();
    await b.runtime.close();
  });
});
