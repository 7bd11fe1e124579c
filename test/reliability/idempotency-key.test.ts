/**
 * Issue 12, defect 8: the idempotency key a tool gets (`meta.toolCallId`) must be unique per call
 * across turns and runs. Providers and mocks repeat their ids (`call_0` in every turn of every
 * run); a tool that followed the README and skipped a call whose key it had seen skipped real,
 * different charges.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { testRuntime } from '../run-fixtures.ts';

/** A payment tool that dedupes by its idempotency key, as the README tells tool authors to. */
function chargeTool() {
  const ledger = new Map<string, number>();
  const tool = defineTool({
    id: 'billing.charge',
    description: 'Charge a card',
    input: z.object({ cents: z.number().int() }),
    execute: async ({ cents }, { meta }) => {
      if (ledger.has(meta.toolCallId)) return { deduped: true };
      ledger.set(meta.toolCallId, cents);
      return { charged: cents };
    },
  });
  return { tool, ledger };
}

/** Two turns, each charging once under the id a provider would reuse. */
const reusingProvider = () =>
  scriptedPlanner([
    { toolCalls: [{ name: 'billing.charge', toolCallId: 'call_0', input: { cents: 100 } }] },
    { toolCalls: [{ name: 'billing.charge', toolCallId: 'call_0', input: { cents: 250 } }] },
    { finalResponse: { text: 'Charged twice.' } },
  ]);

describe('the idempotency key (ToolCallMeta.toolCallId)', () => {
  it('differs for every call, across turns and runs, however the planner reuses its ids', async () => {
    const { tool, ledger } = chargeTool();
    const first = await testRuntime({ planner: reusingProvider(), tools: [tool] })
      .start({ messages: [] })
      .result();
    const second = await testRuntime({ planner: reusingProvider(), tools: [tool] })
      .start({ messages: [] })
      .result();

    expect([...ledger.values()]).toEqual([100, 250, 100, 250]);
    for (const outcome of [first, second]) {
      expect(outcome.toolResults.map((result) => result.result)).toEqual([
        { charged: 100 },
        { charged: 250 },
      ]);
      const paid = outcome.transcript.filter((message) => message.role === 'tool');
      expect(paid.map((message) => message.role === 'tool' && message.content)).toEqual([
        { charged: 100 },
        { charged: 250 },
      ]);
    }
  });

  it('keeps the planner’s id beside it, so a model sees its own calls paired with their results', async () => {
    const { tool } = chargeTool();
    const run = testRuntime({ planner: reusingProvider(), tools: [tool] }).start({
      runId: 'pay-1',
      messages: [],
    });
    const outcome = await run.result();

    const calls = outcome.transcript.flatMap((message) =>
      message.role === 'assistant' ? (message.toolCalls ?? []) : [],
    );
    expect(calls.map((c) => [c.toolCallId, c.providerToolCallId])).toEqual([
      ['pay-1:t1:c1', 'call_0'],
      ['pay-1:t2:c1', 'call_0'],
    ]);
    const results = outcome.transcript.flatMap((message) =>
      message.role === 'tool' ? [[message.toolCallId, message.providerToolCallId]] : [],
    );
    expect(results).toEqual([
      ['pay-1:t1:c1', 'call_0'],
      ['pay-1:t2:c1', 'call_0'],
    ]);
  });
});
