/**
 * Issue 34 items 2–3 (docs/durability.md §Effects): a call started and never recorded finished
 * is not run again blindly. A process "dies" here by losing its database (test/support/effects-crash.ts);
 * a second runtime on the same file takes the run once the first's lease lapsed. The SIGKILL
 * version is test/reliability/effects-kill.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { crashFixture, storedEvents, waitInDoubt } from './support/effects-crash.ts';

const { crashAfterEffect } = crashFixture();

describe('a call started and not recorded finished, after a crash', () => {
  it('of a tool with an effect that must happen once: the run waits in awaiting.inDoubt, listing the call', async () => {
    const { run, runtime, ledger, keys } = await crashAfterEffect();

    const awaiting = await waitInDoubt(run);
    expect(run.state).toBe('awaiting.inDoubt');
    expect(awaiting).toEqual({
      kind: 'in_doubt',
      calls: [
        {
          toolCallId: 'r1:t1:c1',
          name: 'payments.refund',
          input: { orderId: 'A-17' },
          startedAt: expect.any(Number),
          cause: 'restored',
          idempotencyKey: keys[0],
        },
      ],
    });
    expect(ledger).toHaveLength(1); // not run again
    await run.persisted();
    expect((await runtime.load('r1'))?.awaiting).toEqual(awaiting); // another process sees it too
    const log = await storedEvents(runtime, 'r1');
    const recorded = log.filter((event) => event.type === 'tool_result');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ result: { toolCallId: 'r1:t1:c1', inDoubt: { cause: 'restored' } } });
    expect(log.some((event) => event.type === 'await_in_doubt')).toBe(true);

    // A person checked the payment system: the refund went through.
    await runtime.resolveInDoubt('r1', { 'r1:t1:c1': { status: 'done', output: { refunded: 'A-17' } } });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('{"refunded":"A-17"}');
    expect(ledger).toHaveLength(1);
  });

  it('resolved not_done: runs again, by choice, under the same idempotency key', async () => {
    const { run, runtime, ledger } = await crashAfterEffect();
    await waitInDoubt(run);

    await runtime.resolveInDoubt('r1', { 'r1:t1:c1': { status: 'not_done' } });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(ledger).toHaveLength(2);
    expect(ledger[1]?.key).toBe(ledger[0]?.key);
  });

  it('refuses a resolution that leaves a call out, names an unknown one, or has a bad output', async () => {
    const { run } = await crashAfterEffect();
    await waitInDoubt(run);

    await expect(run.resolveInDoubt({})).rejects.toThrow(/missing: r1:t1:c1/);
    await expect(run.resolveInDoubt({ 'r1:t9:c1': { status: 'not_done' } })).rejects.toThrow(
      /no call "r1:t9:c1" is in doubt/,
    );
    await expect(
      run.resolveInDoubt({ 'r1:t1:c1': { status: 'done', output: { refunded: 17 } } }),
    ).rejects.toThrow(/output schema/);
    await expect(run.resolveInDoubt({ 'r1:t1:c1': { status: 'maybe' } as never })).rejects.toThrow(
      /done, not_done or failed/,
    );
    expect(run.state).toBe('awaiting.inDoubt');
    await run.resolveInDoubt({ 'r1:t1:c1': { status: 'failed', error: { message: 'refund bounced' } } });
    expect((await run.result()).toolResults[0]?.error?.message).toBe('refund bounced');
  });

  it('of a tool with reconcile: its answer settles the call, with the key the call had', async () => {
    const asked: string[] = [];
    const { run, ledger } = await crashAfterEffect({
      reconcile: (_input, ctx) => {
        asked.push(ctx.idempotencyKey);
        return { status: 'done', output: { refunded: 'A-17 (reconciled)' } };
      },
    });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('{"refunded":"A-17 (reconciled)"}');
    expect(ledger).toHaveLength(1);
    expect(asked).toEqual([ledger[0]?.key]);
  });

  it('of a tool whose reconcile cannot tell: in doubt', async () => {
    const { run, ledger } = await crashAfterEffect({ reconcile: () => ({ status: 'unknown' }) });
    expect((await waitInDoubt(run))?.kind).toBe('in_doubt');
    expect(ledger).toHaveLength(1);
  });

  it('of an idempotent tool: runs again under the same key (effectively once downstream)', async () => {
    const { run, ledger } = await crashAfterEffect({ idempotent: true });
    expect((await run.result()).status).toBe('completed');
    expect(ledger.map((entry) => entry.key)).toEqual([ledger[0]?.key, ledger[0]?.key]);
  });

  it("of a tool declared whenInDoubt: 'tell_model': the planner is told outcome_unknown and decides", async () => {
    const { run, ledger } = await crashAfterEffect({ whenInDoubt: 'tell_model' });
    const outcome = await run.result();
    expect(outcome.finalResponse?.text).toBe('"outcome_unknown"');
    expect(outcome.toolResults[0]?.retryHint).toMatchObject({
      reason: 'outcome_unknown',
      tool: 'payments.refund',
    });
    expect(ledger).toHaveLength(1);
  });
});
