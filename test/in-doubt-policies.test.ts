/**
 * Issue 34 item 3 (docs/durability.md §Effects): policies see calls in doubt. After a crash that
 * left refunds started and never recorded finished, `onInDoubt` decides per call: ask a person
 * (the default), rerun it by choice, tell the model, or finish or fail the run; each decision is
 * a `policy_decision` event and span event like any other.
 */
import { describe, expect, it } from 'vitest';
import type { InDoubtCall } from '../machines/run-context.ts';
import { definePolicy, type PolicyContext } from '../policies/define-policy.ts';
import { policyHarness } from '../policies/testing.ts';
import type { RunEvent } from '../run/run-events.ts';
import { crashFixture, storedEvents, waitInDoubt } from './support/effects-crash.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';

const { crashAfterEffect } = crashFixture();
const policyDecisionsOf = (events: RunEvent[]) =>
  events.flatMap((event) => (event.type === 'policy_decision' ? [event.decision] : []));
const tracing = inMemoryTracing();

describe('onInDoubt: policies decide about calls in doubt', () => {
  it('sees every call in doubt once, with its input, start and cause; no decision: the run waits for a person', async () => {
    const seen: { calls: InDoubtCall[]; runId: string; tool: PolicyContext['tools'][string] | undefined }[] =
      [];
    const watcher = definePolicy({
      name: 'watcher',
      onInDoubt: (calls, ctx) => {
        seen.push({
          calls: structuredClone([...calls]),
          runId: ctx.run.runId,
          tool: ctx.tools['payments.refund'],
        });
      },
    });
    const { run, ledger } = await crashAfterEffect({}, { orders: ['A-17', 'B-2'], policies: [watcher] });

    const awaiting = await waitInDoubt(run);
    expect(run.state).toBe('awaiting.inDoubt');
    expect(awaiting?.kind === 'in_doubt' && awaiting.calls.map((call) => call.toolCallId)).toEqual([
      'r1:t1:c1',
      'r1:t1:c2',
    ]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      runId: 'r1',
      calls: [
        { toolCallId: 'r1:t1:c1', name: 'payments.refund', input: { orderId: 'A-17' }, cause: 'restored' },
        { toolCallId: 'r1:t1:c2', name: 'payments.refund', input: { orderId: 'B-2' }, cause: 'restored' },
      ],
      tool: { known: true, enabled: true },
    });
    expect(seen[0]!.calls[0]!.startedAt).toBeGreaterThan(0);
    expect(ledger).toHaveLength(2); // neither ran again

    // Resolved by a person as without policies; not put to the policy again.
    await run.resolveInDoubt({
      'r1:t1:c1': { status: 'done', output: { refunded: 'A-17' } },
      'r1:t1:c2': { status: 'done', output: { refunded: 'B-2' } },
    });
    expect((await run.result()).status).toBe('completed');
    expect(seen).toHaveLength(1);
  });

  it('rerun: the call runs again by choice, under the same idempotency key, and the run goes on', async () => {
    const rerunRefunds = definePolicy({
      name: 'payments-dedupe',
      onInDoubt: () => ({
        inDoubt: { action: 'rerun', calls: ['payments.refund'] },
        note: 'the PSP dedupes by key',
      }),
    });
    const { run, runtime, ledger } = await crashAfterEffect({}, { policies: [rerunRefunds] });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('{"refunded":"A-17"}');
    expect(ledger).toHaveLength(2);
    expect(ledger[1]!.key).toBe(ledger[0]!.key);
    const decisions = policyDecisionsOf(await storedEvents(runtime, 'r1'));
    expect(decisions).toEqual([
      {
        policy: 'payments-dedupe',
        hook: 'onInDoubt',
        kinds: ['inDoubt'],
        decision: {
          inDoubt: { action: 'rerun', calls: ['payments.refund'] },
          note: 'the PSP dedupes by key',
        },
        note: 'the PSP dedupes by key',
      },
    ]);
  });

  it('tell_model: the planner gets outcome_unknown for the call and decides; nothing runs again', async () => {
    const tell = definePolicy({ name: 'tell', onInDoubt: () => ({ inDoubt: { action: 'tell_model' } }) });
    const { run, runtime, ledger } = await crashAfterEffect({}, { policies: [tell] });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('"outcome_unknown"');
    expect(outcome.toolResults[0]).toMatchObject({
      toolCallId: 'r1:t1:c1',
      executed: true,
      retryHint: { reason: 'outcome_unknown', tool: 'payments.refund' },
    });
    expect(outcome.toolResults[0]!.inDoubt).toBeUndefined();
    expect(ledger).toHaveLength(1);
    const log = await storedEvents(runtime, 'r1');
    expect(log.filter((event) => event.type === 'retry_hint')).toMatchObject([
      { hint: { reason: 'outcome_unknown', toolCallId: 'r1:t1:c1' } },
    ]);
  });

  it('finalize: the run finishes with the reason stated, the call left in doubt in its record', async () => {
    const finish = definePolicy({
      name: 'no-guessing',
      onInDoubt: (calls) => ({ finalize: { reason: `in_doubt:${calls.length}` } }),
    });
    const { run, ledger } = await crashAfterEffect({}, { policies: [finish] });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('in_doubt:1');
    expect(outcome.toolResults[0]).toMatchObject({ toolCallId: 'r1:t1:c1', inDoubt: { cause: 'restored' } });
    expect(ledger).toHaveLength(1);
  });

  it('fail: the run fails with a PolicyError naming the policy', async () => {
    const strict = definePolicy({
      name: 'strict',
      onInDoubt: () => ({ fail: { reason: 'refund outcome unknown' } }),
    });
    const { run, ledger } = await crashAfterEffect({}, { policies: [strict] });

    const outcome = await run.result();

    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toMatch(/refund outcome unknown \(policy strict\)/);
    expect(ledger).toHaveLength(1);
  });

  it('per call, the most careful choice wins: a rerun of one call, ask for the rest', async () => {
    const rerunAll = definePolicy({ name: 'rerun-all', onInDoubt: () => ({ inDoubt: { action: 'rerun' } }) });
    const askSecond = definePolicy({
      name: 'ask-second',
      onInDoubt: (calls) => ({ inDoubt: [{ action: 'ask', calls: [calls[1]!.toolCallId] }] }),
    });
    const { run, ledger } = await crashAfterEffect(
      {},
      { orders: ['A-17', 'B-2'], policies: [rerunAll, askSecond] },
    );

    const awaiting = await waitInDoubt(run);

    expect(awaiting?.kind === 'in_doubt' && awaiting.calls.map((call) => call.toolCallId)).toEqual([
      'r1:t1:c2',
    ]);
    // A-17 ran again (by choice), B-2 did not.
    expect(ledger.map((entry) => entry.orderId)).toEqual(['A-17', 'B-2', 'A-17']);
    await run.resolveInDoubt({ 'r1:t1:c2': { status: 'not_done' } });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.data).toEqual([{ refunded: 'A-17' }, { refunded: 'B-2' }]);
    expect(ledger.map((entry) => entry.orderId)).toEqual(['A-17', 'B-2', 'A-17', 'B-2']);
  });

  it('fails closed on a bad decision or a throw; a failOpen policy that throws is ignored (the run asks)', async () => {
    const bad = definePolicy({
      name: 'bad',
      onInDoubt: () => ({ inDoubt: { action: 'maybe' as 'ask' } }),
    });
    const broken = await crashAfterEffect({}, { policies: [bad] });
    const outcome = await broken.run.result();
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toMatch(
      /Policy "bad" returned an invalid decision from onInDoubt: inDoubt/,
    );
    expect(broken.ledger).toHaveLength(1);

    const flaky = definePolicy({
      name: 'flaky',
      failOpen: true,
      onInDoubt: () => {
        throw new Error('ledger API down');
      },
    });
    const open = await crashAfterEffect({}, { policies: [flaky] });
    expect((await waitInDoubt(open.run))?.kind).toBe('in_doubt');
    expect(open.ledger).toHaveLength(1);
  });

  it('notes what onInDoubt cannot decide (a backoff, a name matching no call) and records the decision on the run span', async () => {
    const muddled = definePolicy({
      name: 'muddled',
      onInDoubt: () => ({ backoffMs: 1_000, inDoubt: { action: 'rerun', calls: ['crm.lookup'] } }),
    });
    const { run, runtime } = await crashAfterEffect(
      {},
      { policies: [muddled], telemetry: { tracerProvider: tracing.provider } },
    );
    expect((await waitInDoubt(run))?.kind).toBe('in_doubt'); // nothing named the call: asked
    await run.persisted();
    const [decision] = policyDecisionsOf(await storedEvents(runtime, 'r1'));
    expect(decision).toMatchObject({ policy: 'muddled', hook: 'onInDoubt', kinds: ['backoffMs', 'inDoubt'] });
    expect(decision!.note).toBe(
      'backoffMs ignored in onInDoubt; inDoubt rerun: no call in doubt is "crm.lookup"',
    );

    await run.resolveInDoubt({ 'r1:t1:c1': { status: 'done', output: { refunded: 'A-17' } } });
    await run.result();
    await tracing.provider.forceFlush();
    const events = tracing.exporter
      .getFinishedSpans()
      .flatMap((span) => span.events)
      .filter((event) => event.name === 'toolwarden.policy_decision');
    expect(events.map((event) => event.attributes)).toContainEqual(
      expect.objectContaining({
        'toolwarden.policy.name': 'muddled',
        'toolwarden.policy.hook': 'onInDoubt',
      }),
    );
  });
});

describe('onInDoubt under the policy harness (no runtime)', () => {
  const calls = [
    { name: 'payments.refund', toolCallId: 'r:t1:c1', input: { orderId: 'A-17' } },
    { name: 'mail.send', toolCallId: 'r:t1:c2', input: { to: 'ada@example.com' } },
  ];

  it('merges choices per call, the most careful winning, in registration order', async () => {
    const h = policyHarness({
      policies: [
        definePolicy({
          name: 'dedupe',
          onInDoubt: () => ({
            inDoubt: [
              { action: 'rerun', calls: ['payments.refund'] },
              { action: 'rerun', calls: ['mail.send'] },
            ],
          }),
        }),
        definePolicy({
          name: 'mail-care',
          onInDoubt: () => ({ inDoubt: { action: 'tell_model', calls: ['r:t1:c2'] } }),
        }),
        definePolicy({ name: 'late-rerun', onInDoubt: () => ({ inDoubt: { action: 'rerun' } }) }),
      ],
    });
    const step = await h.inDoubt(calls);
    expect(step.effects.inDoubt).toEqual({
      'r:t1:c1': { action: 'rerun', policy: 'dedupe' },
      'r:t1:c2': { action: 'tell_model', policy: 'mail-care' },
    });
    expect(step.decisions.map((d) => [d.policy, d.hook, d.kinds])).toEqual([
      ['dedupe', 'onInDoubt', ['inDoubt']],
      ['mail-care', 'onInDoubt', ['inDoubt']],
      ['late-rerun', 'onInDoubt', ['inDoubt']],
    ]);
    expect(step.outcome).toBe('continue');
  });

  it('an inDoubt decision from another hook is ignored and noted; a fail stops the consultation', async () => {
    const h = policyHarness({
      policies: [
        definePolicy({ name: 'misplaced', onRetryHint: () => ({ inDoubt: { action: 'rerun' } }) }),
        definePolicy({ name: 'stop', onInDoubt: () => ({ fail: { reason: 'no refunds in doubt' } }) }),
        definePolicy({ name: 'never', onInDoubt: () => ({ inDoubt: { action: 'rerun' } }) }),
      ],
    });
    const hinted = await h.review([{ name: 'payments.refund', retryHint: { reason: 'timeout' } }]);
    expect(hinted.decisions[0]?.note).toBe('inDoubt ignored in onRetryHint (onInDoubt only)');
    expect(hinted.effects.inDoubt).toBeUndefined();

    const step = await h.inDoubt(calls);
    expect(step.outcome).toBe('fail');
    expect(step.effects.inDoubt).toBeUndefined();
    expect(step.decisions.map((d) => d.policy)).toEqual(['stop']);
  });

  it('an async hook past its time limit fails the run closed', async () => {
    const h = policyHarness({
      policies: [
        definePolicy({
          name: 'slow-ledger',
          timeoutMs: 20,
          onInDoubt: () => new Promise(() => {}),
        }),
      ],
    });
    const step = await h.inDoubt(calls);
    expect(step.outcome).toBe('fail');
    expect(step.effects.fail?.reason).toMatch(/slow-ledger/);
  });
});
