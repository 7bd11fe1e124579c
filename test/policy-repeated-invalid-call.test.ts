/**
 * Issue 24 item 5: a planner that repeats an identical refused call (same tool, same input
 * fingerprint) used to get the same hint every turn until a cap. `repeatedInvalidCall`, on by
 * default, escalates: the second identical refusal restricts the next turn to the tool (the hint
 * carries its example), the third finalizes (or asks a person).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { repeatedInvalidCall } from '../policies/builtins/repeated-invalid-call.ts';
import { callFingerprint } from '../policies/call-fingerprint.ts';
import { policyHarness } from '../policies/testing.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT } from '../telemetry/attributes.ts';
import { defineTool } from '../tools/define-tool.ts';
import { allEvents, call, done, testRuntime } from './run-fixtures.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';

const refund = defineTool({
  id: 'payments.refund',
  description: 'Refund an order',
  input: z.object({ orderId: z.string(), amountEur: z.number().positive().max(100) }),
  examples: [{ orderId: 'A-17', amountEur: 40 }],
  execute: async ({ amountEur }) => ({ refunded: amountEur }),
});
const bad = { orderId: 'A-17', amountEur: 500 };
const prompt = [{ role: 'user' as const, content: 'Refund 500 EUR' }];

const decisionsOf = (events: RunEvent[]) =>
  events.flatMap((e) => (e.type === 'policy_decision' ? [e.decision] : []));

describe('callFingerprint', () => {
  it('is the same for the same tool and input whatever the key order, and differs otherwise', () => {
    const a = callFingerprint('payments.refund', { orderId: 'A-17', amountEur: 500 });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(callFingerprint('payments.refund', { amountEur: 500, orderId: 'A-17' })).toBe(a);
    expect(callFingerprint('payments.refund', { amountEur: 501, orderId: 'A-17' })).not.toBe(a);
    expect(callFingerprint('payments.charge', { amountEur: 500, orderId: 'A-17' })).not.toBe(a);
  });
});

describe('repeatedInvalidCall (on by default)', () => {
  it('restricts the turn after the second identical refusal and finalizes after the third, the fingerprint on each decision', async () => {
    const planner = scriptedPlanner([
      call('payments.refund', bad, 'c1'),
      call('payments.refund', bad, 'c2'),
      call('payments.refund', bad, 'c3'),
      done('I could not refund that.'),
    ]);
    // No `policies`: the runtime runs defaultPolicies().
    const run = testRuntime({ planner, tools: [refund] }).start({ messages: prompt });

    const [outcome, events] = await Promise.all([run.result(), allEvents(run)]);

    const fingerprint = callFingerprint('payments.refund', bad);
    const decisions = decisionsOf(events);
    expect(decisions.map((d) => [d.policy, d.kinds, d.fingerprint])).toEqual([
      ['repeated-invalid-call', ['restrictToTool'], fingerprint],
      ['repeated-invalid-call', ['finalize'], fingerprint],
    ]);
    expect(decisions[0]!.decision).toMatchObject({ restrictToTool: 'payments.refund', fingerprint });
    expect(decisions[0]!.note).toContain('example {"orderId":"A-17","amountEur":40}');
    // The third turn saw only the refund tool, and the hint with the example.
    const third = planner.calls[2] as PlanResumeInput;
    expect(third.tools.map((t) => t.name)).toEqual(['payments.refund']);
    expect(third.toolResults[0]?.retryHint?.exampleInput).toEqual({ orderId: 'A-17', amountEur: 40 });
    expect(outcome.finalizeReason).toBe('repeated_invalid_call');
    expect((planner.calls[3] as PlanResumeInput).finalize?.message).toContain(
      'policy "repeated-invalid-call" stopped the run: repeated_invalid_call',
    );
  });

  it('does not count calls that differ: a repaired input starts over', async () => {
    const planner = scriptedPlanner([
      call('payments.refund', bad),
      call('payments.refund', { ...bad, amountEur: 400 }),
      call('payments.refund', { ...bad, amountEur: 300 }),
      done(),
    ]);
    const run = testRuntime({ planner, tools: [refund] }).start({ messages: prompt });

    const [outcome, events] = await Promise.all([run.result(), allEvents(run)]);

    expect(decisionsOf(events)).toEqual([]);
    expect(outcome.finalizeReason).toBeUndefined();
  });

  it('is not run when the app gives its own policies (compose with defaultPolicies())', async () => {
    const planner = scriptedPlanner([
      call('payments.refund', bad),
      call('payments.refund', bad),
      call('payments.refund', bad),
      done(),
    ]);
    const run = testRuntime({ planner, tools: [refund], policies: [] }).start({ messages: prompt });
    expect(decisionsOf(await allEvents(run))).toEqual([]);
  });

  it('escalate: ask — the third identical refusal asks a person, question from the hint', async () => {
    const h = policyHarness({
      tools: [{ id: 'payments.refund', tags: [] }],
      caps: {
        maxToolCalls: 50,
        maxConsecutiveFailedToolCalls: 10,
        maxRetriesPerTool: 10,
        timeBudgetMs: 60_000,
      },
      policies: [repeatedInvalidCall({ escalate: 'ask' })],
    });
    const hint = {
      reason: 'invalid_arguments' as const,
      tool: 'payments.refund',
      priorInput: bad,
      clarifyingQuestion: 'What amount should I refund (at most 100)?',
    };
    await h.hint(hint);
    await h.hint(hint);
    expect(h.restrictTo).toEqual(['payments.refund']);
    const third = await h.hint(hint);
    expect(third.outcome).toBe('awaitClarification');
    expect(h.awaiting).toMatchObject({
      kind: 'clarification',
      clarification: { question: 'What amount should I refund (at most 100)?' },
    });
  });

  it('puts the fingerprint on the policy decision span event', async () => {
    const { exporter, provider } = inMemoryTracing();
    const planner = scriptedPlanner([
      call('payments.refund', bad),
      call('payments.refund', bad),
      call('payments.refund', bad),
      done(),
    ]);
    const run = testRuntime({ planner, tools: [refund], telemetry: { tracerProvider: provider } }).start({
      messages: prompt,
    });
    await run.result();
    await provider.forceFlush();

    const events = exporter
      .getFinishedSpans()
      .flatMap((span) => span.events)
      .filter((e) => e.name === 'toolwarden.policy_decision');
    expect(events.map((e) => e.attributes?.[ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT])).toEqual([
      callFingerprint('payments.refund', bad),
      callFingerprint('payments.refund', bad),
    ]);
  });
});
