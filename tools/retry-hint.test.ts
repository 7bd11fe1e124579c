import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { prepareToolCall } from './call-tool.ts';
import { defineTool } from './define-tool.ts';
import { policy, type RetryHint, RetryHintSchema, type ToolCallMeta, toPolicyRetryHint } from './index.ts';
import { ToolCatalog } from './tool-catalog.ts';

const meta: ToolCallMeta = {
  runId: 'run-7',
  sessionId: 'sess-1',
  turnId: 'turn-3',
  toolCallId: 'call-12',
  agentId: 'support',
  attempt: 2,
};

/** A real hint, as the boundary builds it for a call missing `plan`. */
function missingPlanHint(): RetryHint {
  const tool = defineTool({
    id: 'crm.upsert_profile',
    description: '',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
  });
  const prepared = prepareToolCall(new ToolCatalog([tool]), {
    name: tool.id,
    toolCallId: 'call-12',
    input: { email: 'ada@example.com' },
  });
  if (prepared.ok || !prepared.result.retryHint) throw new Error('expected a hint');
  return prepared.result.retryHint;
}

describe('toPolicyRetryHint', () => {
  it('adds runId, turnId, toolCallId, attempt and at from the call, keeping every hint field', () => {
    const hint = missingPlanHint();
    const runtime = toPolicyRetryHint(hint, meta, 1_700_000_000_000);
    expect(runtime).toEqual({
      ...hint,
      runId: 'run-7',
      turnId: 'turn-3',
      toolCallId: 'call-12',
      attempt: 2,
      at: 1_700_000_000_000,
    });
  });

  it('passes policy.RetryHintSchema, and the planner hint passes RetryHintSchema', () => {
    const hint = missingPlanHint();
    expect(RetryHintSchema.safeParse(hint).success).toBe(true);
    const parsed = policy.RetryHintSchema.safeParse(toPolicyRetryHint(hint, meta));
    expect(parsed.error).toBeUndefined();
  });

  it('stamps at with the current time by default', () => {
    const before = Date.now();
    const { at } = toPolicyRetryHint(missingPlanHint(), meta);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it('is also reachable as policy.toPolicyRetryHint', () => {
    expect(policy.toPolicyRetryHint).toBe(toPolicyRetryHint);
  });

  it('policy.RetryHintSchema requires the provenance fields', () => {
    const hint = missingPlanHint();
    expect(policy.RetryHintSchema.safeParse(hint).success).toBe(false);
    const runtime = toPolicyRetryHint(hint, meta, 1);
    expect(policy.RetryHintSchema.safeParse({ ...runtime, attempt: 0 }).success).toBe(false);
  });
});

describe('RetryHintSchema', () => {
  it('rejects an unknown reason and a negative retryAfterMs', () => {
    const base = { tool: 'crm.x', restrictToTool: false, missingFields: [], message: 'm' };
    expect(RetryHintSchema.safeParse({ ...base, reason: 'rate_limited', retryAfterMs: 100 }).success).toBe(
      true,
    );
    expect(RetryHintSchema.safeParse({ ...base, reason: 'slow' }).success).toBe(false);
    expect(RetryHintSchema.safeParse({ ...base, reason: 'rate_limited', retryAfterMs: -1 }).success).toBe(
      false,
    );
  });
});
