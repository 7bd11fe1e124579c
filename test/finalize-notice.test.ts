/**
 * Issue 24 item 2: every finalizing turn tells the planner that it must answer now, why, and
 * which calls were not made. The refund example: a policy finalizes with `refund_over_limit`
 * after a refused refund; the model used to read, last, the hint "Call payments__refund again …"
 * and could claim the refund happened.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { modelPlanner } from '../models/model-planner.ts';
import { definePolicy } from '../policies/define-policy.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { call, done, echoTool, testRuntime } from './run-fixtures.ts';
import { modelAnswer as answer } from './support/model-answer.ts';

const refund = defineTool({
  id: 'payments.refund',
  description: 'Refund an order',
  input: z.object({ orderId: z.string(), amountEur: z.number().positive().max(100) }),
  execute: async ({ orderId, amountEur }) => ({ refunded: amountEur, orderId }),
});

/** Stops a run whose model asks for a refund over the limit (the call is refused by the schema). */
const refundLimit = definePolicy({
  name: 'refund-limit',
  onRetryHint(hint) {
    const amount = (hint.priorInput as { amountEur?: number } | undefined)?.amountEur;
    if (hint.tool === 'payments.refund' && typeof amount === 'number' && amount > 100) {
      return { finalize: { reason: 'refund_over_limit' }, note: `${amount} EUR is over the 100 EUR limit` };
    }
  },
});

/** The text of the last message of a prompt the model was sent. */
function lastText(options: LanguageModelV3CallOptions): string {
  const last = options.prompt.at(-1)!;
  if (typeof last.content === 'string') return last.content;
  return last.content.map((part) => ('text' in part ? part.text : JSON.stringify(part))).join('\n');
}

describe('the finalizing message', () => {
  it('modelPlanner: the last message the model sees states the stop, the policy’s reason and the call not made', async () => {
    const seen: LanguageModelV3CallOptions[] = [];
    const answers = [
      answer([
        {
          type: 'tool-call',
          toolCallId: 'call_1',
          toolName: 'payments__refund',
          input: '{"orderId":"A-17","amountEur":500}',
        },
      ]),
      answer([{ type: 'text', text: 'I could not refund 500 EUR: it is over the limit.' }]),
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        seen.push(options);
        return answers.shift()!;
      },
    });
    const runtime = testRuntime({
      planner: modelPlanner({ model }),
      tools: [refund],
      policies: [refundLimit],
    });

    const outcome = await runtime
      .start({ messages: [{ role: 'user', content: 'Refund 500 EUR for A-17' }] })
      .result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('refund_over_limit');
    const final = seen[1]!;
    expect(final.tools).toBeUndefined();
    const text = lastText(final);
    expect(final.prompt.at(-1)!.role).toBe('user');
    expect(text).toContain('The run is stopping: give your final answer now');
    expect(text).toContain(
      'Why: policy "refund-limit" stopped the run: refund_over_limit (500 EUR is over the 100 EUR limit)',
    );
    expect(text).toMatch(/These calls were NOT made: payments__refund \(call_1: Argument validation failed/);
    expect(text).not.toMatch(/again/);
  });

  it('scripted planner: PlanResumeInput.finalize carries the reason, the calls not made and the message', async () => {
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'payments.refund', toolCallId: 'r1', input: { orderId: 'A-17', amountEur: 500 } },
        ],
      },
      done('Not refunded.'),
    ]);
    await testRuntime({ planner, tools: [refund], policies: [refundLimit] })
      .start({ messages: [{ role: 'user', content: 'Refund' }] })
      .result();

    const finalize = (planner.calls[1] as PlanResumeInput).finalize!;
    expect(finalize).toMatchObject({
      reason: 'refund_over_limit',
      policy: 'refund-limit',
      note: '500 EUR is over the 100 EUR limit',
      notMade: [{ name: 'payments.refund', providerToolCallId: 'r1' }],
    });
    expect(finalize.message).toContain('These calls were NOT made: payments.refund (r1');
  });

  it('a cap says which cap and its value; a batch refused whole by the tool cap lists every call', async () => {
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'util.echo', toolCallId: 'a', input: { text: 'a' } },
          { name: 'util.echo', toolCallId: 'b', input: { text: 'b' } },
        ],
      },
      done(),
    ]);
    await testRuntime({ planner, tools: [echoTool], caps: { maxToolCalls: 1 } })
      .start({ messages: [{ role: 'user', content: 'Echo' }] })
      .result();

    const finalize = (planner.calls[1] as PlanResumeInput).finalize!;
    expect(finalize.reason).toBe('tool_cap');
    expect(finalize.message).toContain('Why: the run used all the tool calls it may make (1).');
    expect(finalize.notMade?.map((c) => c.providerToolCallId)).toEqual(['a', 'b']);
  });

  it('the turn cap: no calls not made, the message says why', async () => {
    const planner = scriptedPlanner([call('util.echo', { text: 'x' }), done()]);
    await testRuntime({ planner, tools: [echoTool], caps: { maxTurns: 1 } })
      .start({ messages: [{ role: 'user', content: 'Echo' }] })
      .result();

    const finalize = (planner.calls[1] as PlanResumeInput).finalize!;
    expect(finalize.notMade).toEqual([]);
    expect(finalize.message).toBe(
      'The run is stopping: give your final answer now, in text. No tools can be called.\n' +
        'Why: the run took all the planner turns it may take (1).',
    );
  });
});
