/**
 * Issue 24 item 3: approval that depends on the input. "Approve refunds above 100 EUR" could not
 * be written: `requiresConfirmation` was a boolean and a policy decision had no confirmation.
 * Now `requiresConfirmation` may be a function of the input and the call's meta (AI SDK 6's
 * `needsApproval` shape), and `onToolBatch` may decide `confirm: { calls, prompt, details }`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePolicy } from '../policies/define-policy.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import { call, done, nextEvent, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Refund' }];

function refundTool(requiresConfirmation?: Parameters<typeof defineTool>[0]['requiresConfirmation']) {
  const refunded: number[] = [];
  const tool = defineTool({
    id: 'payments.refund',
    description: 'Refund an order',
    input: z.object({ orderId: z.string(), amountEur: z.number().positive() }),
    requiresConfirmation,
    execute: async ({ amountEur }) => {
      refunded.push(amountEur);
      return { refunded: amountEur };
    },
  });
  return { tool, refunded };
}

describe('requiresConfirmation as a function of the input', () => {
  it('asks for approval of a refund above 100 EUR only, with the validated input and the call meta', async () => {
    const seen: { amountEur: number; meta: ToolCallMeta }[] = [];
    const { tool, refunded } = refundTool(async (input, meta) => {
      const { amountEur } = input as { amountEur: number };
      seen.push({ amountEur, meta });
      return amountEur > 100;
    });
    const planner = scriptedPlanner([
      call('payments.refund', { orderId: 'A-1', amountEur: 40 }),
      call('payments.refund', { orderId: 'A-2', amountEur: 500 }),
      done(),
    ]);
    const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });

    const asked = await nextEvent(run, 'await_confirmation');
    // The 40 EUR refund ran without asking; the 500 EUR one waits.
    expect(refunded).toEqual([40]);
    expect(asked.confirmation.details).toEqual([
      {
        toolCallId: `${run.runId}:t2:c1`,
        tool: 'payments.refund',
        input: { orderId: 'A-2', amountEur: 500 },
      },
    ]);
    await run.confirm({ id: asked.confirmation.id, approved: true, by: 'ops@example.com' });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(refunded).toEqual([40, 500]);
    expect(seen.map((s) => [s.amountEur, s.meta.toolCallId])).toEqual([
      [40, `${run.runId}:t1:c1`],
      [500, `${run.runId}:t2:c1`],
    ]);
  });

  it('a check that throws asks (fails closed)', async () => {
    const { tool, refunded } = refundTool(() => {
      throw new Error('limits service down');
    });
    const run = testRuntime({
      planner: scriptedPlanner([call('payments.refund', { orderId: 'A-1', amountEur: 5 }), done()]),
      tools: [tool],
    }).start({ messages: prompt });

    const asked = await nextEvent(run, 'await_confirmation');
    expect(refunded).toEqual([]);
    await run.confirm({ id: asked.confirmation.id, approved: false, reason: 'no' });
    expect((await run.result()).status).toBe('completed');
    expect(refunded).toEqual([]);
  });
});

describe('a policy decision confirm from onToolBatch', () => {
  it('holds the calls it names for approval, with its prompt and details', async () => {
    const { tool, refunded } = refundTool();
    const approveLarge = definePolicy({
      name: 'approve-large-refunds',
      onToolBatch(batch) {
        const large = batch.filter((c) => (c.input as { amountEur?: number }).amountEur! > 100);
        if (large.length === 0) return;
        return {
          confirm: {
            calls: large.map((c) => c.toolCallId),
            prompt: `Approve ${large.length} refund(s) above 100 EUR?`,
            details: { limitEur: 100 },
          },
          note: 'refund over 100 EUR',
        };
      },
    });
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'payments.refund', input: { orderId: 'A-1', amountEur: 40 } },
          { name: 'payments.refund', input: { orderId: 'A-2', amountEur: 250 } },
        ],
      },
      done(),
    ]);
    const run = testRuntime({ planner, tools: [tool], policies: [approveLarge] }).start({ messages: prompt });

    const asked = await nextEvent(run, 'await_confirmation');
    expect(asked.confirmation.prompt).toBe('Approve 1 refund(s) above 100 EUR?');
    expect(asked.confirmation.details).toEqual({
      calls: [
        {
          toolCallId: `${run.runId}:t1:c2`,
          tool: 'payments.refund',
          input: { orderId: 'A-2', amountEur: 250 },
        },
      ],
      policy: 'approve-large-refunds',
      details: { limitEur: 100 },
    });
    expect(asked.confirmation.toolCallIds).toEqual([`${run.runId}:t1:c2`]);
    await run.confirm({ id: asked.confirmation.id, approved: true });
    await run.result();
    expect(refunded.sort()).toEqual([250, 40]);
  });
});
