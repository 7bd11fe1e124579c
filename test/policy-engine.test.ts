import { describe, expect, it } from 'vitest';
import {
  definePolicy,
  type PolicyContext,
  type PolicyDecision,
  PolicyDefinitionError,
} from '../policies/define-policy.ts';
import { createPolicyEngine } from '../policies/policy-engine.ts';
import { PolicyError } from '../policies/policy-error.ts';
import { policyHarness } from '../policies/testing.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';

/**
 * docs/policies.md §Merge rules, one test each, through the policy harness (which drives the engine the
 * runtime uses). Tools are given as ids and tags only: the engine needs nothing else of them.
 */
const tools = [
  { id: 'crm.upsert_profile', tags: ['write'] },
  { id: 'crm.lookup', tags: ['read'] },
  { id: 'mail.send', tags: ['write', 'external'] },
];
const caps = {
  maxToolCalls: 20,
  maxConsecutiveFailedToolCalls: 5,
  maxRetriesPerTool: 3,
  timeBudgetMs: 60_000,
};

/** A policy that decides `decision` on every hint and records what its context showed. */
function deciding(name: string, decision: PolicyDecision, seen: PolicyContext[] = []) {
  return definePolicy({
    name,
    onRetryHint(_hint, ctx) {
      seen.push(ctx);
      return decision;
    },
  });
}

const invalid = { reason: 'invalid_arguments', tool: 'crm.upsert_profile' } as const;

describe('policy engine merge rules (docs/policies.md)', () => {
  it('runs policies in registration order, each seeing the state after the previous ones', async () => {
    const seen: PolicyContext[] = [];
    const h = policyHarness({
      tools,
      caps,
      policies: [
        deciding('first', {
          caps: { maxToolCalls: 10 },
          disableTools: ['mail.send'],
          restrictToTool: 'crm.lookup',
        }),
        deciding('second', { labels: { stage: 'two' } }, seen),
        deciding('third', {}, seen),
      ],
    });
    await h.hint(invalid);
    const [second, third] = seen;
    expect(second?.caps.maxToolCalls).toBe(10);
    expect(second?.tool('mail.send')).toMatchObject({ enabled: false, disabledBy: 'first' });
    expect(second?.effects.restrictTo).toEqual(['crm.lookup']);
    expect(second?.run.labels.stage).toBeUndefined();
    expect(third?.run.labels.stage).toBe('two');
    expect(h.decisions.map((d) => d.policy)).toEqual(['first', 'second']);
  });

  it('merges caps by min', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        deciding('a', { caps: { maxToolCalls: 12, maxRetriesPerTool: 2 } }),
        deciding('b', { caps: { maxToolCalls: 8, maxRetriesPerTool: 3 } }),
        deciding('c', { caps: { maxToolCalls: 15, timeBudgetMs: 30_000 } }),
      ],
    });
    await h.hint(invalid);
    expect(h.caps).toEqual({
      maxToolCalls: 8,
      maxConsecutiveFailedToolCalls: 5,
      maxRetriesPerTool: 2,
      timeBudgetMs: 30_000,
      maxTurns: DEFAULT_CAPS.maxTurns,
      maxAwaits: DEFAULT_CAPS.maxAwaits,
      maxCallsPerBatch: DEFAULT_CAPS.maxCallsPerBatch,
    });
  });

  it('never raises a cap above the configured ceiling (or the current value), and says so in the event', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [deciding('generous', { caps: { maxToolCalls: 1_000, timeBudgetMs: 3_600_000 } })],
    });
    await h.hint(invalid);
    expect(h.caps).toEqual({ ...DEFAULT_CAPS, ...caps });
    expect(h.decisions[0]?.note).toContain('caps.maxToolCalls 1000 is not below 20');

    const tightenThenLoosen = policyHarness({
      tools,
      caps,
      policies: [
        definePolicy({
          name: 'flip-flop',
          onRetryHint: (_hint, ctx) => ({ caps: { maxToolCalls: ctx.hints.length === 1 ? 5 : 19 } }),
        }),
      ],
    });
    await tightenThenLoosen.hint(invalid);
    await tightenThenLoosen.hint(invalid);
    expect(tightenThenLoosen.caps.maxToolCalls).toBe(5);
  });

  it('merges disabled tools by union', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        deciding('a', { disableTools: ['mail.send'] }),
        deciding('b', { disableTools: ['crm.lookup', 'mail.send'] }),
      ],
    });
    await h.hint(invalid);
    expect(h.disabledTools).toEqual({ 'mail.send': 'a', 'crm.lookup': 'b' });
  });

  it('keeps a tool disabled until every policy that disabled it enables it', async () => {
    let phase = 'disable';
    const toggler = (name: string) =>
      definePolicy({
        name,
        onRetryHint: () =>
          phase === 'disable'
            ? { disableTools: ['mail.send'] }
            : phase === name
              ? { enableTools: ['mail.send'] }
              : undefined,
      });
    const h = policyHarness({ tools, caps, policies: [toggler('a'), toggler('b')] });
    await h.hint(invalid);
    phase = 'a';
    await h.hint(invalid);
    expect(h.tool('mail.send')).toMatchObject({ enabled: false, disabledBy: 'b' });
    phase = 'b';
    await h.hint(invalid);
    expect(h.tool('mail.send').enabled).toBe(true);
  });

  it('enables only tools the same policy disabled: never the app’s, another policy’s or the retry cap’s', async () => {
    const h = policyHarness({
      tools,
      caps,
      disabledTools: ['crm.lookup'],
      policies: [
        deciding('disabler', { disableTools: ['mail.send'] }),
        deciding('sneaky', { enableTools: ['crm.lookup', 'mail.send'] }),
      ],
    });
    await h.hint(invalid);
    expect(h.disabledTools).toEqual({ 'crm.lookup': 'app', 'mail.send': 'disabler' });
    const sneaky = h.decisions.find((d) => d.policy === 'sneaky');
    expect(sneaky?.note).toContain('enableTools crm.lookup: disabled by app, not by sneaky');
    expect(sneaky?.note).toContain('enableTools mail.send: disabled by disabler, not by sneaky');
  });

  it('cannot re-enable an app-disabled tool even by disabling and enabling it itself', async () => {
    let step = 0;
    const h = policyHarness({
      tools,
      caps,
      disabledTools: ['mail.send'],
      policies: [
        definePolicy({
          name: 'laundering',
          onRetryHint: () =>
            step++ === 0 ? { disableTools: ['mail.send'] } : { enableTools: ['mail.send'] },
        }),
      ],
    });
    await h.hint(invalid);
    await h.hint(invalid);
    expect(h.disabledTools).toEqual({ 'mail.send': 'app' });
    expect(h.decisions.at(-1)?.note).toContain('still disabled by app');
  });

  it('merges restrictions by intersection', async () => {
    const same = policyHarness({
      tools,
      caps,
      policies: [
        deciding('a', { restrictToTool: 'crm.upsert_profile' }),
        deciding('b', { restrictToTool: 'crm.upsert_profile' }),
      ],
    });
    await same.hint(invalid);
    expect(same.restrictTo).toEqual(['crm.upsert_profile']);

    const disjoint = policyHarness({
      tools,
      caps,
      policies: [
        deciding('a', { restrictToTool: 'crm.upsert_profile' }),
        deciding('b', { restrictToTool: 'crm.lookup' }),
      ],
    });
    await disjoint.hint(invalid);
    expect(disjoint.restrictTo).toEqual([]);
  });

  it('merges backoff by max', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        deciding('a', { backoffMs: 200 }),
        deciding('b', { backoffMs: 1_500 }),
        deciding('c', { backoffMs: 700 }),
      ],
    });
    const step = await h.hint({ reason: 'rate_limited', tool: 'mail.send' });
    expect(step.effects.backoffMs).toBe(1_500);
    expect(h.awaiting).toEqual({ kind: 'backoff', until: h.now() + 1_500 });
  });

  it.each([
    [
      'fail',
      [
        { backoffMs: 10 },
        { awaitClarification: true },
        { finalize: { reason: 'done' } },
        { fail: { reason: 'no' } },
      ],
    ],
    ['finalize', [{ backoffMs: 10 }, { awaitClarification: true }, { finalize: { reason: 'done' } }]],
    ['awaitClarification', [{ backoffMs: 10 }, { awaitClarification: true }]],
    ['backoff', [{ backoffMs: 10 }, {}]],
    ['continue', [{}, { note: 'just looking' }]],
  ] as const)(
    'resolves precedence fail > finalize > awaitClarification > backoff > continue: %s',
    async (outcome, decisions) => {
      // Registered in reverse precedence order, so the order of registration cannot be what decides.
      const h = policyHarness({ tools, caps, policies: decisions.map((d, i) => deciding(`p${i}`, d)) });
      const step = await h.hint(invalid);
      expect(step.outcome).toBe(outcome);
      const kinds = ['fail', 'finalize', 'awaitClarification', 'backoffMs'].filter((k) => k in step.effects);
      expect(kinds).toEqual(outcome === 'continue' ? [] : [outcome === 'backoff' ? 'backoffMs' : outcome]);
    },
  );

  it('takes the first fail, finalize and clarification in registration order', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        deciding('a', { finalize: { reason: 'first' }, awaitClarification: { question: 'Which one?' } }),
        deciding('b', { finalize: { reason: 'second' }, awaitClarification: { question: 'Really?' } }),
      ],
    });
    const step = await h.hint(invalid);
    expect(step.effects.finalize).toEqual({ reason: 'first' });
    expect(h.ended).toEqual({ outcome: 'finalize', reason: 'first' });
  });

  it('builds the default clarification from the hint', async () => {
    const h = policyHarness({ tools, caps, policies: [deciding('ask', { awaitClarification: true })] });
    const step = await h.hint({
      reason: 'missing_fields',
      tool: 'crm.upsert_profile',
      missingFields: ['email'],
      exampleInput: { email: 'ada@example.com', plan: 'pro' },
      clarifyingQuestion:
        'I need more information to run crm.upsert_profile. Please provide: email (Customer email).',
      message: 'Argument validation failed for crm.upsert_profile: email: required',
      restrictToTool: true,
    });
    expect(step.effects.awaitClarification).toEqual({
      id: 'clarify:run-1:t1:c1',
      question: 'I need more information to run crm.upsert_profile. Please provide: email (Customer email).',
      missingFields: ['email'],
      restrictToTool: 'crm.upsert_profile',
      exampleInput: { email: 'ada@example.com', plan: 'pro' },
      clarifyingPrompt: 'Argument validation failed for crm.upsert_profile: email: required',
    });
  });

  it('is deterministic: the same inputs give the same effects', async () => {
    const build = () =>
      policyHarness({
        tools,
        caps,
        policies: [
          deciding('a', { caps: { maxToolCalls: 9 }, disableTools: ['mail.send'], backoffMs: 5 }),
          deciding('b', { restrictToTool: 'crm.lookup', labels: { x: '1' }, backoffMs: 9 }),
        ],
      });
    const one = build();
    const two = build();
    expect(await one.hint(invalid)).toEqual(await two.hint(invalid));
  });

  it('records every decision with its policy, hook, kinds, call and note; a state-only decision is not an event', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        deciding('quiet', { state: { count: 1 } }),
        deciding('loud', { disableTools: ['mail.send'], note: 'too risky', state: { big: 'memory' } }),
      ],
    });
    await h.hint(invalid);
    expect(h.decisions).toEqual([
      {
        policy: 'loud',
        hook: 'onRetryHint',
        kinds: ['disableTools'],
        decision: { disableTools: ['mail.send'], note: 'too risky' },
        toolCallId: 'run-1:t1:c1',
        tool: 'crm.upsert_profile',
        note: 'too risky',
      },
    ]);
    expect(h.memory('quiet')).toEqual({ count: 1 });
  });

  it('keeps each policy’s memory in the run’s JSON policyState, so a restored run carries on', async () => {
    const counter = definePolicy({
      name: 'counter',
      onRetryHint: (_hint, ctx) => {
        const seen = ((ctx.state as { seen?: number } | undefined)?.seen ?? 0) + 1;
        return seen >= 3 ? { disableTools: ['crm.upsert_profile'], state: { seen } } : { state: { seen } };
      },
    });
    const h = policyHarness({
      tools,
      caps,
      policies: [counter, deciding('tight', { caps: { maxToolCalls: 7 } })],
    });
    await h.hint(invalid);
    await h.hint(invalid);
    const restored = h.restore();
    expect(JSON.parse(JSON.stringify(restored.context.policyState))).toEqual(restored.context.policyState);
    expect(restored.memory('counter')).toEqual({ seen: 2 });
    await restored.hint(invalid);
    expect(restored.tool('crm.upsert_profile')).toMatchObject({ enabled: false, disabledBy: 'counter' });
    expect(restored.caps.maxToolCalls).toBe(7);
  });

  it('gives policies a read-only context', async () => {
    const h = policyHarness({
      tools,
      caps,
      policies: [
        definePolicy({
          name: 'vandal',
          onRetryHint: (hint, ctx) => {
            (ctx.caps as { maxToolCalls: number }).maxToolCalls = 999;
            (hint as { tool: string }).tool = 'x';
          },
        }),
      ],
    });
    const step = await h.hint(invalid);
    expect(step.outcome).toBe('fail');
    expect(step.effects.fail?.reason).toMatch(
      /Policy "vandal" threw in onRetryHint: Cannot assign to read only property/,
    );
    expect(h.caps.maxToolCalls).toBe(20);
  });
});

describe('policy errors fail the run closed (docs/policies.md)', () => {
  const boom = definePolicy({
    name: 'strict-writes',
    onRetryHint: () => {
      throw new Error('boom');
    },
  });

  it('a throwing policy fails with its name and stops the consultation', async () => {
    const later: PolicyContext[] = [];
    const h = policyHarness({ tools, caps, policies: [boom, deciding('later', {}, later)] });
    const step = await h.hint(invalid);
    expect(step.outcome).toBe('fail');
    expect(step.effects.fail?.reason).toBe('Policy "strict-writes" threw in onRetryHint: boom');
    expect(step.decisions).toMatchObject([{ policy: 'strict-writes', kinds: ['fail'] }]);
    expect(later).toEqual([]);
  });

  it('a policy past its time limit fails the run (default 1 s, or its own timeoutMs)', async () => {
    const slow = definePolicy({
      name: 'slow',
      timeoutMs: 20,
      onRetryHint: () =>
        new Promise<PolicyDecision>((resolve) => setTimeout(() => resolve({ note: 'late' }), 500)),
    });
    const h = policyHarness({ tools, caps, policies: [slow] });
    const step = await h.hint(invalid);
    expect(step.effects.fail?.reason).toBe('Policy "slow" timed out after 20 ms in onRetryHint');

    const engine = createPolicyEngine({
      policies: [definePolicy({ name: 'x', onToolBatch: async () => undefined })],
    });
    expect(engine.policies).toHaveLength(1);
  });

  it('a failOpen policy’s error is recorded and ignored', async () => {
    const lenient = definePolicy({ ...boom, name: 'lenient', failOpen: true });
    const h = policyHarness({
      tools,
      caps,
      policies: [lenient, deciding('next', { disableTools: ['mail.send'] })],
    });
    const step = await h.hint(invalid);
    expect(step.outcome).toBe('continue');
    expect(h.disabledTools).toEqual({ 'mail.send': 'next' });
    expect(step.decisions[0]).toMatchObject({
      policy: 'lenient',
      kinds: [],
      note: 'failOpen, ignored: Policy "lenient" threw in onRetryHint: boom',
    });
  });

  it('a decision that is not a PolicyDecision, or whose state is not JSON, is a policy error', async () => {
    const typo = definePolicy({
      name: 'typo',
      onRetryHint: () => ({ disable: ['mail.send'] }) as PolicyDecision,
    });
    const step = await policyHarness({ tools, caps, policies: [typo] }).hint(invalid);
    expect(step.effects.fail?.reason).toMatch(/^Policy "typo" returned an invalid decision from onRetryHint/);

    const mapState = definePolicy({ name: 'map-state', onRetryHint: () => ({ state: new Map() as never }) });
    const bad = await policyHarness({ tools, caps, policies: [mapState] }).hint(invalid);
    expect(bad.effects.fail?.reason).toBe(
      'Policy "map-state" returned a state that is not JSON (at $) from onRetryHint',
    );
  });

  it('a policy deciding fail names itself in the reason', async () => {
    const step = await policyHarness({
      tools,
      caps,
      policies: [deciding('guard', { fail: { reason: 'tampering' } })],
    }).hint(invalid);
    expect(step.effects.fail).toEqual({ reason: 'tampering (policy guard)' });
  });

  it('onRunStart errors throw a PolicyError from the start', () => {
    const broken = definePolicy({
      name: 'broken-start',
      onRunStart: () => {
        throw new Error('no config');
      },
    });
    expect(() => policyHarness({ tools, caps, policies: [broken] })).toThrow(PolicyError);
    expect(() => policyHarness({ tools, caps, policies: [broken] })).toThrow(
      'Policy "broken-start" threw in onRunStart: no config',
    );
  });

  it('rejects policies that are not definePolicy values, duplicates, reserved names and hookless ones', () => {
    expect(() => createPolicyEngine({ policies: [{ name: 'raw' } as never] })).toThrow(PolicyDefinitionError);
    expect(() => createPolicyEngine({ policies: [deciding('twin', {}), deciding('twin', {})] })).toThrow(
      /Two policies are named "twin"/,
    );
    expect(() => deciding('app', {})).toThrow(/reserved/);
    expect(() => definePolicy({ name: 'idle' })).toThrow(/no hooks/);
  });
});

describe('where the engine consults policies', () => {
  it('per result in call order: onToolResult, then onRetryHint for its hint', async () => {
    const calls: string[] = [];
    const spy = (name: string) =>
      definePolicy({
        name,
        onToolResult: (result) => void calls.push(`${name}.onToolResult(${result.toolCallId})`),
        onRetryHint: (hint) => void calls.push(`${name}.onRetryHint(${hint.toolCallId})`),
      });
    const h = policyHarness({ tools, caps, policies: [spy('a'), spy('b')] });
    await h.batch([{ name: 'crm.lookup' }, { name: 'crm.upsert_profile' }]);
    await h.review([
      { name: 'crm.lookup', result: { found: true } },
      { name: 'crm.upsert_profile', retryHint: { reason: 'invalid_arguments' } },
    ]);
    expect(calls).toEqual([
      'a.onToolResult(run-1:t1:c1)',
      'b.onToolResult(run-1:t1:c1)',
      'a.onToolResult(run-1:t1:c2)',
      'b.onToolResult(run-1:t1:c2)',
      'a.onRetryHint(run-1:t1:c2)',
      'b.onRetryHint(run-1:t1:c2)',
    ]);
  });

  it('shows policies the hints so far, the current one included, and per-tool state', async () => {
    let last: PolicyContext | undefined;
    const watcher = definePolicy({
      name: 'watch',
      onRetryHint: (_h, ctx) => {
        last = ctx;
      },
    });
    const w = policyHarness({ tools, caps, policies: [watcher] });
    await w.hint(invalid);
    await w.hint({ reason: 'timeout', tool: 'mail.send' });
    expect(last?.hints.map((hint) => hint.reason)).toEqual(['invalid_arguments', 'timeout']);
    expect(last?.tool('mail.send')).toMatchObject({
      known: true,
      tags: ['write', 'external'],
      calls: 1,
      failures: 1,
      enabled: true,
    });
    expect(last?.tool('mail.send').lastHint?.reason).toBe('timeout');
    expect(last?.tool('nope.nothing')).toMatchObject({ known: false, calls: 0, enabled: true });
    expect(last?.run).toMatchObject({ runId: 'run-1', turn: 2, turnId: 'run-1:t2' });
  });

  it('onToolBatch: restriction, backoff and clarification apply after the batch, when its results are reviewed', async () => {
    const batchy = definePolicy({
      name: 'batchy',
      onToolBatch: () => ({ backoffMs: 1_000, restrictToTool: 'crm.lookup' }),
    });
    const h = policyHarness({ tools, caps, policies: [batchy] });
    const before = await h.batch([{ name: 'crm.lookup' }]);
    expect(before.outcome).toBe('continue');
    expect(before.effects.restrictTo).toEqual(['crm.lookup']);
    h.advance(300);
    const after = await h.review([{ name: 'crm.lookup', result: {} }]);
    expect(after.effects.backoffMs).toBe(700);
    expect(after.outcome).toBe('backoff');
    expect(h.restrictTo).toEqual(['crm.lookup']);
  });

  it('onToolBatch: disabling and finalizing act on the batch itself', async () => {
    const gate = definePolicy({
      name: 'gate',
      onToolBatch: (batch) =>
        batch.length > 2
          ? { finalize: { reason: 'batch too large' } }
          : { disableTools: batch.map((call) => call.name).filter((n) => n === 'mail.send') },
    });
    const h = policyHarness({ tools, caps, policies: [gate] });
    const small = await h.batch([{ name: 'mail.send' }]);
    expect(small.effects.disabledTools).toEqual({ 'mail.send': 'gate' });
    await h.review([{ name: 'mail.send', retryHint: { reason: 'tool_unavailable' } }]);
    const large = await h.batch([{ name: 'crm.lookup' }, { name: 'crm.lookup' }, { name: 'crm.lookup' }]);
    expect(large.outcome).toBe('finalize');
  });
});
