import { describe, expect, it } from 'vitest';
import { definePolicy } from '../policies/define-policy.ts';
import { counterTool, ledgerPlanner, twentyStepRun } from '../test/support/ledger-runs.ts';
import { replayRuns } from './replay-runs.ts';

/** A new policy: finalize once five calls were made. */
const stopAtFive = definePolicy({
  name: 'stop-at-five',
  onToolResult: (_result, ctx) =>
    ctx.caps.toolCalls >= 5 ? { finalize: { reason: 'five calls are enough' } } : undefined,
});

describe('replayRuns: stored runs replayed with a new planner or policy set (issue 38 item 4)', () => {
  it('replays a stored run unchanged without executing a tool or asking a planner', async () => {
    const { runtime } = await twentyStepRun();
    const { tool, executions } = counterTool();
    const report = await replayRuns(runtime.store, { tools: [tool] });
    expect(report).toMatchObject({ same: 1, changed: 0 });
    expect(report.runs[0]).toMatchObject({
      runId: 'p',
      replayId: 'p~replay',
      replayed: { turns: 21, calls: 20 },
      executed: 0,
    });
    expect(executions).toEqual([]);
    expect(report.summary).toBe('1 runs replayed: 1 the same, 0 changed.');
    await runtime.close();
  });

  it('reports what a new policy set changed, and fails a replay that needs a planner it was not given', async () => {
    const { runtime } = await twentyStepRun();
    const { tool, executions } = counterTool();
    const planner = ledgerPlanner();
    const report = await replayRuns(runtime.store, { tools: [tool], policies: [stopAtFive], planner });
    expect(report.changed).toBe(1);
    const { comparison } = report.runs[0]!;
    // Five calls as recorded (not executed), then the finalizing turn, asked of the planner.
    expect(executions).toEqual([]);
    // The policy decided after the fifth call, and the finalizing turn (numbered as the turn it
    // follows) spent its tokens in step 5.
    expect(comparison.firstDifference).toEqual({ step: 5, fields: ['policyDecisions', 'tokens'] });
    expect(comparison.steps.find((s) => s.step === 6)!.fields).toMatchObject({
      toolCalls: 'changed',
      finalAnswer: 'changed',
    });
    expect(comparison.b.finalAnswer).toBe('balance 15');
    expect(comparison.steps.find((s) => s.step === 1)!.fields.policyDecisions).toBe('same');
    expect(report.summary).toContain('p and p~replay part at step 5: policyDecisions, tokens changed');

    const without = await replayRuns(runtime.store, { tools: [tool], policies: [stopAtFive], runIds: ['p'] });
    expect(without.runs[0]!.comparison.b.status).toBe('failed');
    expect(without.runs[0]!.comparison.totals.status).toBe('changed');
    await runtime.close();
  });
});
