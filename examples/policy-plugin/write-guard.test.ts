import { createRuntime, type PolicyDecisionRecord } from 'toolwarden';
import { policyHarness, scriptedPlanner } from 'toolwarden/testing';
import { describe, expect, it } from 'vitest';
import { crmTools } from './crm-tools.ts';
import { writeGuard } from './write-guard.ts';

/**
 * The write guard, tested twice: its policies alone in the policy harness (fast, no runtime),
 * then the plugin in a real run.
 */
const { tools } = crmTools();
const guard = (options?: Parameters<typeof writeGuard>[0]) =>
  policyHarness({ tools, policies: writeGuard(options).policies ?? [] });

describe('write guard policies (policy harness)', () => {
  it('restricts the next turn to a write tool called with bad arguments, then disables it', async () => {
    const h = guard({ maxRetries: 1 });
    await h.hint({ reason: 'invalid_arguments', tool: 'crm.upsert_profile' });
    expect(h.restrictTo).toEqual(['crm.upsert_profile']);
    await h.hint({ reason: 'missing_fields', tool: 'crm.upsert_profile' });
    expect(h.tool('crm.upsert_profile')).toMatchObject({
      enabled: false,
      disabledBy: 'write-guard/invalid-arguments',
    });
  });

  it('leaves read tools alone', async () => {
    const h = guard({ maxRetries: 0 });
    await h.hint({ reason: 'invalid_arguments', tool: 'crm.lookup' });
    await h.hint({ reason: 'malformed_response', tool: 'crm.lookup' });
    await h.hint({ reason: 'rate_limited', tool: 'crm.lookup' });
    expect(h.decisions).toEqual([]);
    expect(h.restrictTo).toBeNull();
    expect(h.tool('crm.lookup').enabled).toBe(true);
  });

  it('disables a write tool at once after a malformed response', async () => {
    const h = guard();
    const step = await h.hint({ reason: 'malformed_response', tool: 'crm.bulk_import' });
    expect(h.tool('crm.bulk_import')).toMatchObject({
      enabled: false,
      disabledBy: 'write-guard/malformed-response',
    });
    expect(step.decisions[0]?.note).toContain('not retried');
  });

  it('backs off on rate limits, then finishes the run after maxWaits', async () => {
    const h = guard({ backoff: { baseMs: 100, maxWaits: 2 } });
    expect((await h.hint({ reason: 'rate_limited', tool: 'crm.upsert_profile' })).effects.backoffMs).toBe(
      100,
    );
    expect(
      (await h.hint({ reason: 'rate_limited', tool: 'crm.upsert_profile', retryAfterMs: 250 })).effects
        .backoffMs,
    ).toBe(250);
    const third = await h.hint({ reason: 'rate_limited', tool: 'crm.upsert_profile' });
    expect(third.outcome).toBe('finalize');
    expect(h.ended).toEqual({ outcome: 'finalize', reason: 'rate_limited' });
  });
});

describe('write guard plugin (real run)', () => {
  it('repairs, waits, refuses to retry a malformed write, and reports every decision', async () => {
    const crm = crmTools({ upsert: ['rate_limited', 'ok'], import: ['malformed'] });
    const decisions: PolicyDecisionRecord[] = [];
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada', plan: 'gold' } }] },
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }] },
      {
        toolCalls: [
          { name: 'crm.bulk_import', input: { rows: [{ email: 'bob@example.com', plan: 'free' }] } },
        ],
      },
      {
        toolCalls: [
          { name: 'crm.bulk_import', input: { rows: [{ email: 'bob@example.com', plan: 'free' }] } },
        ],
      },
      { finalResponse: { text: 'done' } },
    ]);
    const runtime = createRuntime({
      agent: { id: 'crm' },
      planner,
      tools: crm.tools,
      plugins: [writeGuard({ backoff: { baseMs: 10 }, onDecision: (d) => decisions.push(d) })],
    });
    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'go' }] }).result();
    expect(outcome.status).toBe('completed');
    expect(decisions.map((d) => `${d.policy}:${d.kinds.join()}`)).toEqual([
      'write-guard/invalid-arguments:restrictToTool',
      'write-guard/rate-limit:backoffMs',
      'write-guard/malformed-response:disableTools',
    ]);
    expect(planner.calls[1]?.tools.map((t) => t.name)).toEqual(['crm.upsert_profile']);
    // The malformed import ran once; the second call was refused without running.
    expect(crm.writes.map((w) => w.tool)).toEqual(['crm.upsert_profile', 'crm.bulk_import']);
    expect(outcome.toolResults.at(-1)).toMatchObject({
      executed: false,
      retryHint: { reason: 'tool_unavailable' },
    });
  });
});
