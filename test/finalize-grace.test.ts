/**
 * Issue 36 item 6: a hung planner ended 30 s past the run's time budget (the finalizing turn's
 * fixed default grace), whatever the budget. The default grace is now bounded by the run's own
 * budget: a tenth of `timeBudgetMs`, at least 1 s, at most 30 s (runtime-options.ts
 * `finalizeGraceMs`, plan-step.ts `finalizeGraceOf`).
 */
import { describe, expect, it } from 'vitest';
import type { RunContext } from '../machines/run-context.ts';
import { finalizeGraceOf, planDeadline } from '../runtime/steps/plan-step.ts';
import { testRuntime } from './run-fixtures.ts';

describe('the finalizing turn’s grace', () => {
  it('is a tenth of the run’s time budget by default, between 1 s and 30 s', () => {
    expect(finalizeGraceOf(300_000, undefined)).toBe(30_000);
    expect(finalizeGraceOf(60_000, undefined)).toBe(6_000);
    expect(finalizeGraceOf(5_000, undefined)).toBe(1_000);
    expect(finalizeGraceOf(50, undefined)).toBe(1_000);
    expect(finalizeGraceOf(24 * 3_600_000, undefined)).toBe(30_000);
  });

  it('is the runtime’s finalizeGraceMs as given, whatever the budget', () => {
    expect(finalizeGraceOf(5_000, 30_000)).toBe(30_000);
    expect(finalizeGraceOf(300_000, 0)).toBe(0);
  });

  it('sets the finalizing turn’s deadline from the later of the budget’s end and when finalizing began', () => {
    const context = {
      startedAt: 1_000_000,
      caps: { timeBudgetMs: 20_000 },
      flow: { awaitedMs: 0, finalize: { reason: 'tool_cap', at: 1_025_000 } },
    } as unknown as RunContext;
    expect(planDeadline(context, 'resume', undefined)).toBe(1_020_000);
    expect(planDeadline(context, 'finalize', undefined)).toBe(1_025_000 + 2_000);
  });

  it('ends a run whose planner hangs about 1 s past a 300 ms budget, not 30 s', async () => {
    const hung = {
      planStart: () => new Promise<never>(() => {}),
      planResume: () => new Promise<never>(() => {}),
    };
    const runtime = testRuntime({ planner: hung, caps: { timeBudgetMs: 300 } });
    const began = Date.now();
    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();
    const ms = Date.now() - began;
    expect(outcome.status).toBe('failed');
    expect(ms).toBeGreaterThanOrEqual(300 + 1_000 - 50);
    // Generous for a loaded machine; the fixed grace it replaces made this 30.3 s.
    expect(ms).toBeLessThan(15_000);
  }, 40_000);
});
