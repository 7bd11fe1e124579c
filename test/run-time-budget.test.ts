/**
 * Issue 24 item 6: the time budget bounds everything in flight. A `wrapToolCall` that never calls
 * `next` held a run with `timeBudgetMs: 800` for the tool's timeout + 1 s (61 s with defaults);
 * a policy hook or a backoff likewise. Now the run ends at the budget: the call's signal aborts
 * and the run finalizes with `time_budget`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../plugins/define-plugin.ts';
import { definePolicy } from '../policies/define-policy.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { call, done, testRuntime } from './run-fixtures.ts';

const BUDGET_MS = 800;
const prompt = [{ role: 'user' as const, content: 'Refund' }];

const refund = defineTool({
  id: 'payments.refund',
  description: 'Refund an order',
  input: z.object({ orderId: z.string() }),
  // Its own timeout is far past the budget: what bounds the call must be the budget.
  timeoutMs: 5_000,
  execute: async ({ orderId }) => ({ refunded: orderId }),
});

/** Runs `start` and says how long the run took and how it ended. */
async function timed(start: () => { result(): Promise<{ status: string; finalizeReason?: string }> }) {
  const began = Date.now();
  const outcome = await start().result();
  return { outcome, ms: Date.now() - began };
}

describe('the time budget bounds what is in flight', () => {
  it('a wrapToolCall that never calls next: the run ends at the budget, the call’s signal aborted, finalizing with time_budget', async () => {
    let signal: AbortSignal | undefined;
    const stuck = definePlugin({
      name: 'stuck-gateway',
      wrapToolCall: (invocation) => {
        signal = invocation.signal;
        return new Promise(() => {});
      },
    });
    const planner = scriptedPlanner([
      call('payments.refund', { orderId: 'A-17' }),
      done('Could not refund in time.'),
    ]);
    const runtime = testRuntime({
      planner,
      tools: [refund],
      plugins: [stuck],
      caps: { timeBudgetMs: BUDGET_MS },
    });

    const { outcome, ms } = await timed(() => runtime.start({ messages: prompt }));

    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'time_budget' });
    expect(ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(ms).toBeLessThan(BUDGET_MS + 600);
    expect(signal?.aborted).toBe(true);
    const final = planner.calls[1] as PlanResumeInput;
    expect(final.finalize?.notMade?.map((c) => c.name)).toEqual(['payments.refund']);
    expect(final.toolResults[0]?.error?.message).toMatch(/time budget ran out/);
  });

  it('a tool whose execute outlives the budget is aborted at the budget', async () => {
    let aborted = false;
    const slow = defineTool({
      id: 'payments.slow_refund',
      description: 'Slow',
      input: z.object({}),
      timeoutMs: 5_000,
      execute: (_input, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ late: true });
          });
        }),
    });
    const planner = scriptedPlanner([call('payments.slow_refund', {}), done()]);
    const runtime = testRuntime({ planner, tools: [slow], caps: { timeBudgetMs: BUDGET_MS } });

    const { outcome, ms } = await timed(() => runtime.start({ messages: prompt }));

    expect(outcome.finalizeReason).toBe('time_budget');
    expect(ms).toBeLessThan(BUDGET_MS + 600);
    expect(aborted).toBe(true);
  });

  it('an onToolBatch hook that never settles: the batch is not run, the run finalizes with time_budget at the budget', async () => {
    const hanging = definePolicy({
      name: 'slow-approval',
      timeoutMs: 30_000,
      onToolBatch: () => new Promise(() => {}),
    });
    let executed = 0;
    const counted = defineTool({
      id: 'payments.refund',
      description: 'Refund',
      input: z.object({ orderId: z.string() }),
      execute: async () => ({ n: ++executed }),
    });
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17' }), done()]);
    const runtime = testRuntime({
      planner,
      tools: [counted],
      policies: [hanging],
      caps: { timeBudgetMs: BUDGET_MS },
    });

    const { outcome, ms } = await timed(() => runtime.start({ messages: prompt }));

    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'time_budget' });
    expect(ms).toBeLessThan(BUDGET_MS + 600);
    expect(executed).toBe(0);
  });

  it('an onToolResult hook that never settles: the run finalizes with time_budget at the budget', async () => {
    const hanging = definePolicy({
      name: 'slow-audit',
      timeoutMs: 30_000,
      onToolResult: () => new Promise(() => {}),
    });
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17' }), done()]);
    const runtime = testRuntime({
      planner,
      tools: [refund],
      policies: [hanging],
      caps: { timeBudgetMs: BUDGET_MS },
    });

    const { outcome, ms } = await timed(() => runtime.start({ messages: prompt }));

    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'time_budget' });
    expect(ms).toBeLessThan(BUDGET_MS + 600);
  });

  it('a backoff longer than what is left of the budget ends with the budget', async () => {
    const backOff = definePolicy({ name: 'back-off', onToolResult: () => ({ backoffMs: 60_000 }) });
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17' }), done()]);
    const runtime = testRuntime({
      planner,
      tools: [refund],
      policies: [backOff],
      caps: { timeBudgetMs: BUDGET_MS },
    });

    const { outcome, ms } = await timed(() => runtime.start({ messages: prompt }));

    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'time_budget' });
    expect(ms).toBeLessThan(BUDGET_MS + 600);
  });

  it('a wrapPlan that never calls next: the turn ends at the budget (already bounded; the finalizing turn gets its grace)', async () => {
    const stuck = definePlugin({ name: 'stuck-planner-gateway', wrapPlan: () => new Promise(() => {}) });
    const runtime = testRuntime({
      planner: scriptedPlanner([done()]),
      plugins: [stuck],
      caps: { timeBudgetMs: BUDGET_MS },
      finalizeGraceMs: 200,
    });

    const { outcome, ms } = await timed(() => runtime.start({ messages: prompt }));

    expect(outcome.status).toBe('failed');
    expect(ms).toBeLessThan(BUDGET_MS + 200 + 600);
  });
});
