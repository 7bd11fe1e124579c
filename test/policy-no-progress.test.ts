/**
 * Issue 35 item 1: a progress-aware loop policy, on by default. A model that calls one lookup 40
 * times and gets the same answer each time was stopped only by `maxToolCalls`; a poller whose
 * results change must never be stopped. Defaults: a `no_progress` hint on the 3rd same result,
 * the 6th call refused ("not run: made 5 times with the same result"), the run finalized at the 7th.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { noProgress } from '../policies/builtins/no-progress.ts';
import { callFingerprint, valueFingerprint } from '../policies/call-fingerprint.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { defineTool } from '../tools/define-tool.ts';
import { allEvents, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Where is order 7?' }];

/** A planner that calls `orders.lookup({ id: 7 })` up to `times` times, then answers; it records what it read. */
function repeatingPlanner(times: number) {
  const read: PlanResumeInput[] = [];
  let turns = 0;
  const step = (input: PlanInput): PlanResult => {
    if ('toolResults' in input) read.push(input as PlanResumeInput);
    if ((input as PlanResumeInput).finalize || turns >= times)
      return { finalResponse: { text: 'Order 7 shipped.' } };
    turns += 1;
    // JSON text and object spellings alternate, as a model's would drift.
    return { toolCalls: [{ name: 'orders.lookup', input: turns % 2 ? { id: 7 } : '{ "id": 7 }' }] };
  };
  return {
    planner: {
      planStart: async (i: PlanInput) => step(i),
      planResume: async (i: PlanResumeInput) => step(i),
    },
    read,
  };
}

function lookupTool(result: () => unknown) {
  const runs: number[] = [];
  const tool = defineTool({
    id: 'orders.lookup',
    description: 'Look an order up',
    input: z.object({ id: z.number() }),
    execute: async ({ id }) => {
      runs.push(id);
      return result();
    },
  });
  return { tool, runs };
}

describe('noProgress (on by default)', () => {
  it('stops a model repeating an identical lookup 40 times: hint after 3, refused after 5, finalized at 7', async () => {
    const { tool, runs } = lookupTool(() => ({ id: 7, status: 'shipped' }));
    const { planner, read } = repeatingPlanner(40);
    const run = testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 100 } }).start({
      messages: prompt,
    });
    const [outcome, events] = await Promise.all([run.result(), allEvents(run)]);

    expect(runs).toHaveLength(5);
    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('no_progress');
    // What the planner read after each call (7 calls, then the finalizing turn).
    const hints = read.map((input) => input.toolResults[0]?.retryHint?.reason ?? null);
    expect(hints.slice(0, 6)).toEqual([
      null,
      null,
      'no_progress',
      'no_progress',
      'no_progress',
      'no_progress',
    ]);
    expect(read[2]!.toolResults[0]!.retryHint!.message).toMatch(
      /called 3 times with the same input and gave the same result each time \(last: \{"id":7,"status":"shipped"\}\)/,
    );
    expect(read[5]!.toolResults[0]).toMatchObject({
      executed: false,
      error: { message: expect.stringMatching(/^not run: made 5 times with the same result/) },
    });
    expect(read.at(-1)!.finalize?.reason).toBe('no_progress');
    // The model's transcript carries the hint with the result.
    const toolMessages = outcome.transcript.filter((m) => m.role === 'tool');
    expect(toolMessages[2]!.content).toMatchObject({
      result: { id: 7, status: 'shipped' },
      retryHint: { reason: 'no_progress' },
    });

    const fingerprint = callFingerprint('orders.lookup', { id: 7 }, { whitespace: 'collapse' });
    const decisions = events.filter(
      (e): e is Extract<RunEvent, { type: 'policy_decision' }> => e.type === 'policy_decision',
    );
    expect(
      decisions.map((e) => [e.decision.policy, e.decision.kinds.join('+'), e.decision.fingerprint]),
    ).toEqual([
      ['no-progress', 'hint', fingerprint],
      ['no-progress', 'hint', fingerprint],
      ['no-progress', 'hint', fingerprint],
      ['no-progress', 'refuse', fingerprint],
      ['no-progress', 'refuse+finalize', fingerprint],
    ]);
    expect(
      events
        .filter((e) => e.type === 'retry_hint')
        .map((e) => (e as { hint: { reason: string } }).hint.reason),
    ).toEqual(['no_progress', 'no_progress', 'no_progress', 'no_progress', 'no_progress']);
  });

  it('never stops a poller whose result changes each time', async () => {
    let n = 0;
    const { tool, runs } = lookupTool(() => ({ id: 7, progress: n++ }));
    const { planner, read } = repeatingPlanner(40);
    const outcome = await testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 100 } })
      .start({ messages: prompt })
      .result();
    expect(runs).toHaveLength(40);
    expect(outcome.finalizeReason).toBeUndefined();
    expect(read.every((input) => input.toolResults[0]?.retryHint === undefined)).toBe(true);
  });

  it("asks a person instead with escalate: 'ask'", async () => {
    const { tool } = lookupTool(() => 'same');
    const { planner } = repeatingPlanner(40);
    const run = testRuntime({
      planner,
      tools: [tool],
      policies: [noProgress({ hintAfter: 1, refuseAfter: 2, escalateAfter: 3, escalate: 'ask' })],
    }).start({ messages: prompt });
    const events = await new Promise<RunEvent[]>((resolve) => {
      const seen: RunEvent[] = [];
      run.events$.subscribe((event) => {
        seen.push(event);
        if (event.type === 'await_clarification') resolve(seen);
      });
    });
    expect(events.filter((e) => e.type === 'tool_call_scheduled')).toHaveLength(2);
    expect(events.find((e) => e.type === 'await_clarification')).toMatchObject({
      clarification: { question: expect.stringMatching(/orders.lookup keeps being called/) },
    });
    run.cancel();
  });
});

describe('fingerprints', () => {
  it('are canonical across NFC, JSON spelling, key order and -0; whitespace and numeric tolerance by option', () => {
    const nfc = callFingerprint('geo.find', { city: 'Z\u00fcrich', n: 0 });
    expect(callFingerprint('geo.find', { n: -0, city: 'Zu\u0308rich' })).toBe(nfc);
    expect(callFingerprint('geo.find', '{"city":"Z\u00fcrich","n":0}')).toBe(nfc);
    expect(callFingerprint('geo.find', { city: ' Z\u00fcrich ', n: 0 })).not.toBe(nfc);
    expect(callFingerprint('geo.find', { city: ' Z\u00fcrich ', n: 0 }, { whitespace: 'collapse' })).toBe(
      callFingerprint('geo.find', { city: 'Z\u00fcrich', n: 0 }, { whitespace: 'collapse' }),
    );
    expect(valueFingerprint({ x: 0.1 + 0.2 })).not.toBe(valueFingerprint({ x: 0.3 }));
    expect(valueFingerprint({ x: 0.1 + 0.2 }, { numericTolerance: 1e-9 })).toBe(
      valueFingerprint({ x: 0.3 }, { numericTolerance: 1e-9 }),
    );
  });
});
