import { describe, expect, it } from 'vitest';
import { askOnMissingFields } from '../policies/builtins/ask-on-missing-fields.ts';
import { circuitBreaker } from '../policies/builtins/circuit-breaker.ts';
import { rateLimitBackoff } from '../policies/builtins/rate-limit-backoff.ts';
import { restrictOnInvalidArguments } from '../policies/builtins/restrict-on-invalid-arguments.ts';
import { timeBudget } from '../policies/builtins/time-budget.ts';
import { toolAllowlist, toolDenylist } from '../policies/builtins/tool-allowlist.ts';
import { policyHarness } from '../policies/testing.ts';

const tools = [
  { id: 'crm.upsert_profile', tags: ['write'] },
  { id: 'crm.lookup', tags: ['read'] },
  { id: 'crm.delete_profile', tags: ['write', 'destructive'] },
  { id: 'mail.send', tags: ['write', 'external'] },
];
const caps = {
  maxToolCalls: 50,
  maxConsecutiveFailedToolCalls: 10,
  maxRetriesPerTool: 10,
  timeBudgetMs: 120_000,
};
const upsert = 'crm.upsert_profile';

describe('restrictOnInvalidArguments', () => {
  it('restricts the next turn to the tool for each repair, then disables it', async () => {
    const h = policyHarness({ tools, caps, policies: [restrictOnInvalidArguments({ maxRetries: 2 })] });
    await h.hint({ reason: 'invalid_arguments', tool: upsert });
    expect(h.restrictTo).toEqual([upsert]);
    await h.hint({ reason: 'missing_fields', tool: upsert, missingFields: ['email'] });
    expect(h.restrictTo).toEqual([upsert]);
    expect(h.tool(upsert).enabled).toBe(true);
    await h.hint({ reason: 'invalid_arguments', tool: upsert });
    expect(h.tool(upsert)).toMatchObject({ enabled: false, disabledBy: 'restrict-on-invalid-arguments' });
    expect(h.decisions.map((d) => d.kinds)).toEqual([
      ['restrictToTool'],
      ['restrictToTool'],
      ['disableTools'],
    ]);
    expect(h.decisions[2]?.note).toBe(
      `${upsert}: 3 bad calls in a row (invalid_arguments), 2 repairs spent: disabled`,
    );
  });

  it('resets its count when the tool succeeds, and only restricts from restrictAfter on', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [restrictOnInvalidArguments({ maxRetries: 2, restrictAfter: 2 })],
    });
    await h.hint({ reason: 'invalid_arguments', tool: upsert });
    expect(h.restrictTo).toBeNull();
    await h.result({ name: upsert, result: { id: 'p1' } });
    await h.hint({ reason: 'invalid_arguments', tool: upsert });
    await h.hint({ reason: 'invalid_arguments', tool: upsert });
    expect(h.restrictTo).toEqual([upsert]);
    expect(h.tool(upsert).enabled).toBe(true);
  });

  it('can finalize instead of disabling, and watches only the selected tools', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        restrictOnInvalidArguments({ maxRetries: 0, onExhausted: 'finalize', tools: { tags: ['write'] } }),
      ],
    });
    const read = await h.hint({ reason: 'invalid_arguments', tool: 'crm.lookup' });
    expect(read.decisions).toEqual([]);
    const write = await h.hint({ reason: 'invalid_arguments', tool: upsert });
    expect(write.outcome).toBe('finalize');
    expect(h.ended).toEqual({ outcome: 'finalize', reason: 'invalid_arguments' });
  });
});

describe('circuitBreaker', () => {
  const breaker = () => circuitBreaker({ failures: 2, cooldownMs: 10_000 });

  it('opens after `failures` counted failures in a row (disables the tool)', async () => {
    const h = policyHarness({ tools, caps, policies: [breaker()] });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    expect(h.tool('mail.send').enabled).toBe(true);
    await h.result({ name: 'mail.send', error: 'SMTP exploded' });
    expect(h.tool('mail.send')).toMatchObject({ enabled: false, disabledBy: 'circuit-breaker' });
    expect(h.memory('circuit-breaker')).toEqual({
      'mail.send': { state: 'open', failures: 2, openedAt: h.now() },
    });
  });

  it('does not count validation failures or refusals by default, and a success resets the count', async () => {
    const h = policyHarness({ tools, caps, policies: [breaker()] });
    await h.hint({ reason: 'invalid_arguments', tool: 'mail.send' });
    await h.hint({ reason: 'invalid_arguments', tool: 'mail.send' });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    await h.result({ name: 'mail.send', result: 'sent' });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    expect(h.tool('mail.send').enabled).toBe(true);
  });

  it('half-open: after the cooldown the tool is re-enabled for a trial; success closes the breaker', async () => {
    const h = policyHarness({ tools, caps, policies: [breaker()] });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    h.advance(9_999);
    await h.result({ name: 'crm.lookup', result: {} });
    expect(h.tool('mail.send').enabled).toBe(false);
    h.advance(1);
    const reopened = await h.result({ name: 'crm.lookup', result: {} });
    expect(reopened.decisions[0]).toMatchObject({
      kinds: ['enableTools'],
      note: 'mail.send: cooldown over, half-open (one trial)',
    });
    expect(h.tool('mail.send').enabled).toBe(true);
    const trial = await h.result({ name: 'mail.send', result: 'sent' });
    expect(trial.decisions[0]?.note).toBe('mail.send: trial succeeded, closed');
    expect(h.memory('circuit-breaker')).toEqual({});
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    expect(h.tool('mail.send').enabled).toBe(true);
  });

  it('half-open: a failed trial opens it again for another cooldown', async () => {
    const h = policyHarness({ tools, caps, policies: [breaker()] });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    h.advance(10_000);
    await h.result({ name: 'crm.lookup', result: {} });
    const trial = await h.hint({ reason: 'malformed_response', tool: 'mail.send' });
    expect(trial.decisions[0]?.note).toBe('mail.send: trial failed, open again for 10000 ms');
    expect(h.tool('mail.send').enabled).toBe(false);
    h.advance(5_000);
    await h.result({ name: 'crm.lookup', result: {} });
    expect(h.tool('mail.send').enabled).toBe(false);
  });

  it('half-open before a batch too: a call in the first batch past the cooldown is the trial', async () => {
    const h = policyHarness({ tools, caps, policies: [breaker()] });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    h.advance(10_000);
    const batch = await h.batch([{ name: 'mail.send' }]);
    expect(batch.effects.disabledTools).toEqual({});
    expect(batch.decisions[0]).toMatchObject({ hook: 'onToolBatch', kinds: ['enableTools'] });
    await h.review([{ name: 'mail.send', error: 'still down' }]);
    expect(h.tool('mail.send')).toMatchObject({ enabled: false, disabledBy: 'circuit-breaker' });
  });

  it('never re-enables a tool the app disabled, and survives a restore', async () => {
    const h = policyHarness({ tools, caps, disabledTools: ['mail.send'], policies: [breaker()] });
    await h.hint({ reason: 'timeout', tool: 'crm.lookup' });
    await h.hint({ reason: 'timeout', tool: 'crm.lookup' });
    const restored = h.restore();
    expect(restored.tool('crm.lookup').enabled).toBe(false);
    restored.advance(10_000);
    await restored.result({ name: 'crm.upsert_profile', result: {} });
    expect(restored.tool('crm.lookup').enabled).toBe(true);
    expect(restored.disabledTools).toEqual({ 'mail.send': 'app' });
  });

  it('counts only the listed reasons', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [circuitBreaker({ failures: 1, reasons: ['rate_limited'] })],
    });
    await h.hint({ reason: 'timeout', tool: 'mail.send' });
    expect(h.tool('mail.send').enabled).toBe(true);
    await h.hint({ reason: 'rate_limited', tool: 'mail.send' });
    expect(h.tool('mail.send').enabled).toBe(false);
  });
});

describe('rateLimitBackoff', () => {
  it('backs off exponentially from baseMs, capped at maxMs', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [rateLimitBackoff({ baseMs: 1_000, maxMs: 3_000, maxWaits: 4 })],
    });
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++)
      waits.push((await h.hint({ reason: 'rate_limited', tool: 'mail.send' })).effects.backoffMs);
    expect(waits).toEqual([1_000, 2_000, 3_000, 3_000]);
    expect(h.awaiting).toEqual({ kind: 'backoff', until: h.now() + 3_000 });
  });

  it('honours the tool’s retryAfterMs', async () => {
    const h = policyHarness({ tools, caps, policies: [rateLimitBackoff({ baseMs: 100, maxMs: 30_000 })] });
    const step = await h.hint({ reason: 'rate_limited', tool: 'mail.send', retryAfterMs: 12_345 });
    expect(step.effects.backoffMs).toBe(12_345);
    expect(step.decisions[0]?.note).toContain('as the tool asked');
  });

  it('after maxWaits finalizes the run (default) or disables the tool', async () => {
    const h = policyHarness({ tools, caps, policies: [rateLimitBackoff({ baseMs: 10, maxWaits: 2 })] });
    await h.hint({ reason: 'rate_limited', tool: 'mail.send' });
    await h.hint({ reason: 'rate_limited', tool: 'mail.send' });
    const third = await h.hint({ reason: 'rate_limited', tool: 'mail.send' });
    expect(third.outcome).toBe('finalize');
    expect(third.effects.finalize).toEqual({ reason: 'rate_limited' });

    const d = policyHarness({
      tools,
      caps,
      policies: [rateLimitBackoff({ baseMs: 10, maxWaits: 1, onExhausted: 'disable' })],
    });
    await d.hint({ reason: 'rate_limited', tool: 'mail.send' });
    await d.hint({ reason: 'rate_limited', tool: 'mail.send' });
    expect(d.tool('mail.send')).toMatchObject({ enabled: false, disabledBy: 'rate-limit-backoff' });
  });

  it('gives up at once when the tool asks for more than maxMs, and resets after a success', async () => {
    const h = policyHarness({ tools, caps, policies: [rateLimitBackoff({ maxMs: 5_000, maxWaits: 1 })] });
    const tooLong = await h.hint({ reason: 'rate_limited', tool: 'mail.send', retryAfterMs: 60_000 });
    expect(tooLong.outcome).toBe('finalize');
    const g = policyHarness({ tools, caps, policies: [rateLimitBackoff({ baseMs: 10, maxWaits: 1 })] });
    await g.hint({ reason: 'rate_limited', tool: 'mail.send' });
    await g.result({ name: 'mail.send', result: 'ok' });
    expect((await g.hint({ reason: 'rate_limited', tool: 'mail.send' })).outcome).toBe('backoff');
  });
});

describe('askOnMissingFields', () => {
  it('asks a person with the hint’s question, fields and example, and restricts the turn after', async () => {
    const h = policyHarness({ tools, caps, policies: [askOnMissingFields()] });
    const step = await h.hint({
      reason: 'missing_fields',
      tool: upsert,
      missingFields: ['email'],
      clarifyingQuestion:
        'I need more information to run crm.upsert_profile. Please provide: email (Customer email).',
      exampleInput: { email: 'ada@example.com', plan: 'pro' },
    });
    expect(step.outcome).toBe('awaitClarification');
    expect(h.awaiting).toEqual({
      kind: 'clarification',
      clarification: {
        id: 'clarify:run-1:t1:c1',
        question:
          'I need more information to run crm.upsert_profile. Please provide: email (Customer email).',
        missingFields: ['email'],
        restrictToTool: upsert,
        exampleInput: { email: 'ada@example.com', plan: 'pro' },
        clarifyingPrompt: 'crm.upsert_profile: missing_fields',
      },
    });
    expect(h.restrictTo).toEqual([upsert]);
  });

  it('ignores other reasons and stops asking after maxAsks', async () => {
    const h = policyHarness({ tools, caps, policies: [askOnMissingFields({ maxAsks: 1 })] });
    expect((await h.hint({ reason: 'invalid_arguments', tool: upsert })).outcome).toBe('continue');
    expect((await h.hint({ reason: 'missing_fields', tool: upsert })).outcome).toBe('awaitClarification');
    expect((await h.hint({ reason: 'missing_fields', tool: upsert })).outcome).toBe('continue');
  });
});

describe('toolAllowlist / toolDenylist', () => {
  it('allowlist: every other tool is disabled when the run starts, by id or tag', () => {
    const h = policyHarness({ tools, caps, policies: [toolAllowlist({ tags: ['read'], ids: ['mail.*'] })] });
    expect(h.disabledTools).toEqual({
      'crm.upsert_profile': 'tool-allowlist',
      'crm.delete_profile': 'tool-allowlist',
    });
    expect(h.steps[0]).toMatchObject({
      hook: 'onRunStart',
      decisions: [{ policy: 'tool-allowlist', kinds: ['disableTools'] }],
    });
  });

  it('denylist: the listed tools are disabled when the run starts, by id or tag', () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [toolDenylist({ tags: ['destructive'], ids: ['mail.send'] })],
    });
    expect(h.disabledTools).toEqual({ 'crm.delete_profile': 'tool-denylist', 'mail.send': 'tool-denylist' });
  });

  it('checks each batch too (a run restored from before the policy was added) and keeps app-disabled tools', async () => {
    const old = policyHarness({ tools, caps, disabledTools: ['crm.lookup'], policies: [] });
    const restored = old.restore({ policies: [toolDenylist({ ids: ['mail.send'] })] });
    expect(restored.tool('mail.send').enabled).toBe(true);
    const step = await restored.batch([{ name: 'mail.send' }]);
    expect(step.effects.disabledTools).toEqual({ 'crm.lookup': 'app', 'mail.send': 'tool-denylist' });
  });

  it('an empty allowlist allows nothing; an empty denylist denies nothing', () => {
    expect(
      Object.keys(policyHarness({ tools, caps, policies: [toolAllowlist({})] }).disabledTools),
    ).toHaveLength(4);
    expect(policyHarness({ tools, caps, policies: [toolDenylist({})] }).disabledTools).toEqual({});
  });
});

describe('timeBudget', () => {
  it('tightens the timeBudgetMs cap when the run starts, never above the configured one', () => {
    expect(policyHarness({ tools, caps, policies: [timeBudget({ maxMs: 30_000 })] }).caps.timeBudgetMs).toBe(
      30_000,
    );
    expect(policyHarness({ tools, caps, policies: [timeBudget({ maxMs: 999_999 })] }).caps.timeBudgetMs).toBe(
      120_000,
    );
  });

  it('finalizes before a batch when less than finalizeWhenRemainingMs is left', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [timeBudget({ maxMs: 60_000, finalizeWhenRemainingMs: 10_000 })],
    });
    h.advance(45_000);
    expect((await h.batch([{ name: 'crm.lookup' }])).outcome).toBe('continue');
    await h.review([{ name: 'crm.lookup', result: {} }]);
    h.advance(6_000);
    const step = await h.batch([{ name: 'crm.lookup' }]);
    expect(step.outcome).toBe('finalize');
    expect(step.effects.finalize).toEqual({ reason: 'time_budget' });
    expect(step.decisions[0]?.note).toBe('9000 ms of the time budget left, less than 10000');
  });

  it('also checks after results', async () => {
    const h = policyHarness({ tools, caps, policies: [timeBudget({ finalizeWhenRemainingMs: 5_000 })] });
    h.advance(116_000);
    expect((await h.result({ name: 'crm.lookup', result: {} })).outcome).toBe('finalize');
  });
});
