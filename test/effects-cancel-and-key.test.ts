/**
 * Issue 34 (docs/durability.md §Effects): a cancel that lands while a call runs leaves a record of
 * the call (its result, or in doubt), never nothing; and the idempotency key a tool gets is the
 * same whenever the same call runs again, and new once an approver edits the input.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CANCEL_GRACE_MS } from '../machines/in-doubt-outcomes.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { canonicalJson, idempotencyKey } from '../tools/idempotency-key.ts';
import { call, done, nextEvent, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Refund 500 EUR for A-17' }];

/** A refund that needs approval, recording the key of each call it ran. */
function refund() {
  const ran: { toolCallId: string; key: string; amountEur: number }[] = [];
  const tool = defineTool({
    id: 'payments.refund',
    description: 'Refund an order',
    input: z.object({ orderId: z.string(), amountEur: z.number().positive() }),
    requiresConfirmation: true,
    execute: async ({ amountEur }, ctx) => {
      ran.push({ toolCallId: ctx.meta.toolCallId, key: ctx.idempotencyKey, amountEur });
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { refunded: amountEur };
    },
  });
  return { tool, ran };
}

describe('a cancel right after an approval (memory store)', () => {
  it('records the call with the result it returned within the cancel, in 100 of 100 runs', async () => {
    const { tool, ran } = refund();
    const store = memoryStore();
    const recorded: string[] = [];
    for (let i = 0; i < 100; i++) {
      const runtime = testRuntime({
        planner: scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]),
        tools: [tool],
        store,
      });
      const run = runtime.start({ runId: `cancel-${i}`, messages: prompt });
      const asked = await nextEvent(run, 'await_confirmation');
      await run.confirm({ id: asked.confirmation.id, approved: true });
      queueMicrotask(() => run.cancel('changed my mind'));
      const outcome = await run.result();
      expect(outcome.status).toBe('canceled');
      const log: RunEvent[] = [];
      for await (const record of runtime.events(run.runId, { follow: false })) log.push(record.event);
      const results = log.flatMap((event) => (event.type === 'tool_result' ? [event.result] : []));
      expect(results, `run ${i}`).toHaveLength(1);
      const [result] = results;
      expect(result!.toolCallId).toBe(`cancel-${i}:t1:c1`);
      recorded.push(result!.inDoubt ? `in_doubt:${result!.inDoubt.cause}` : JSON.stringify(result!.result));
      expect(outcome.toolResults).toEqual([result]);
    }
    expect(ran).toHaveLength(100); // each call ran once
    // The refund ignores its signal and returns 5 ms later: the run waited for it.
    expect(new Set(recorded)).toEqual(new Set(['{"refunded":500}']));
  });
});

describe('a cancel while calls run', () => {
  /** A tool that starts, then does what `end` says once its signal aborts. */
  function stoppable(end: 'throw' | 'hang') {
    const started: string[] = [];
    const tool = defineTool({
      id: 'mail.send',
      description: 'Sends a mail',
      input: z.object({ to: z.string() }),
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          started.push(ctx.meta.toolCallId);
          if (end === 'throw') ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        }),
    });
    return { tool, started };
  }

  async function cancelWhileRunning(end: 'throw' | 'hang', calls: number) {
    const { tool, started } = stoppable(end);
    const batch = Array.from({ length: calls }, (_, i) => ({
      name: 'mail.send',
      input: { to: `u${i}@example.com` },
    }));
    const runtime = testRuntime({
      planner: scriptedPlanner([{ toolCalls: batch }, done()]),
      tools: [tool],
      caps: { maxToolCalls: 100, maxCallsPerBatch: 100 },
    });
    const run = runtime.start({ messages: prompt });
    while (started.length < Math.min(calls, 32)) await new Promise((resolve) => setTimeout(resolve, 1));
    const canceledAt = Date.now();
    run.cancel('user left');
    const outcome = await run.result();
    return { outcome, started, waitedMs: Date.now() - canceledAt };
  }

  it('records a call that ends with an error after the abort in doubt: it may have had its effect', async () => {
    const { outcome, waitedMs } = await cancelWhileRunning('throw', 1);
    expect(outcome.status).toBe('canceled');
    expect(outcome.toolResults).toMatchObject([{ executed: true, inDoubt: { cause: 'canceled' } }]);
    expect(waitedMs).toBeLessThan(CANCEL_GRACE_MS); // it ended at once: no wait for the grace
  });

  it('waits no longer than CANCEL_GRACE_MS for a call that ignores its signal, then records it in doubt', async () => {
    const { outcome, waitedMs } = await cancelWhileRunning('hang', 1);
    expect(outcome.toolResults).toMatchObject([{ inDoubt: { cause: 'canceled' } }]);
    expect(waitedMs).toBeGreaterThanOrEqual(CANCEL_GRACE_MS - 5);
  });

  it('records the calls of a large batch that never started as not run, the running ones in doubt', async () => {
    const { outcome, started } = await cancelWhileRunning('throw', 40);
    expect(started).toHaveLength(32); // the window (MAX_PARALLEL_TOOL_CALLS)
    const notRun = outcome.toolResults.filter((result) => !result.executed);
    expect(notRun).toHaveLength(8);
    expect(notRun[0]!.error?.message).toBe('Not run: the run was canceled before this call started');
    expect(outcome.toolResults.filter((result) => result.inDoubt?.cause === 'canceled')).toHaveLength(32);
  });
});

describe('the idempotency key (ctx.idempotencyKey)', () => {
  it('is a digest of run id, call id and the input in canonical JSON', () => {
    const key = idempotencyKey('run-1', 'run-1:t1:c1', { b: 2, a: { d: [1, 2], c: 'x' } });
    expect(key).toMatch(/^tw_[A-Za-z0-9_-]{32}$/);
    expect(idempotencyKey('run-1', 'run-1:t1:c1', { a: { c: 'x', d: [1, 2] }, b: 2 })).toBe(key);
    expect(idempotencyKey('run-1', 'run-1:t1:c1', { a: { c: 'x', d: [2, 1] }, b: 2 })).not.toBe(key);
    expect(idempotencyKey('run-2', 'run-1:t1:c1', { b: 2, a: { d: [1, 2], c: 'x' } })).not.toBe(key);
    expect(idempotencyKey('run-1', 'run-1:t2:c1', { b: 2, a: { d: [1, 2], c: 'x' } })).not.toBe(key);
    expect(canonicalJson({ z: undefined, a: null })).toBe('{"a":null}');
  });

  it('is a new one after an approve-with-edits, the digest of the edited input', async () => {
    const { tool, ran } = refund();
    const runtime = testRuntime({
      planner: scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]),
      tools: [tool],
    });
    const run = runtime.start({ runId: 'edit-1', messages: prompt });
    const asked = await nextEvent(run, 'await_confirmation');
    const [toolCallId] = asked.confirmation.toolCallIds!;
    await run.confirm({
      id: asked.confirmation.id,
      approved: true,
      edits: { [toolCallId!]: { orderId: 'A-17', amountEur: 100 } },
    });
    expect((await run.result()).status).toBe('completed');

    const unedited = idempotencyKey('edit-1', toolCallId!, { orderId: 'A-17', amountEur: 500 });
    expect(ran).toEqual([
      {
        toolCallId,
        key: idempotencyKey('edit-1', toolCallId!, { orderId: 'A-17', amountEur: 100 }),
        amountEur: 100,
      },
    ]);
    expect(ran[0]!.key).not.toBe(unedited);
  });
});
