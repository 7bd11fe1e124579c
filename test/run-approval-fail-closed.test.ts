/**
 * Issue 35 item 5: approvals fail closed. A policy's `confirm` naming calls that are not in the
 * batch held nothing (the calls ran unapproved and nothing reported the typo); an edited input with
 * own `__proto__`/`constructor` keys was cleaned silently and run, where the same input from a
 * planner is refused; an approval whose state cannot be read (the store failing mid-answer) must
 * hold the calls, never run them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePolicy } from '../policies/define-policy.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { ApprovalEditRefusedError } from '../runtime/approval-edits.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { prepareToolCall } from '../tools/call-tool.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { call, done, nextEvent, testRuntime } from './run-fixtures.ts';
import { type FlakyStore, flakyStore } from './support/durable-stores.ts';
import { refundTool } from './support/refund-tool.ts';
import { until } from './support/wait.ts';

const prompt = [{ role: 'user' as const, content: 'Refund A-1 and A-2' }];

function lookupTool() {
  const looked: string[] = [];
  const tool = defineTool({
    id: 'orders.lookup',
    description: 'Look an order up',
    input: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      looked.push(orderId);
      return { orderId, status: 'shipped' };
    },
  });
  return { tool, looked };
}

/** A planner that looks up in one batch, then answers. */
function twoLookups() {
  return scriptedPlanner([
    {
      toolCalls: [
        { name: 'orders.lookup', input: { orderId: 'A-1' } },
        { name: 'orders.lookup', input: { orderId: 'A-2' } },
      ],
    },
    done(),
  ]);
}

describe('a confirm decision naming calls not in the batch', () => {
  it('holds the whole batch for approval and reports the policy error', async () => {
    const { tool, looked } = lookupTool();
    const typo = definePolicy({
      name: 'approve-lookups',
      onToolBatch: () => ({ confirm: { calls: ['no-such-id'], prompt: 'Look these up?' } }),
    });
    const planner = twoLookups();
    const run = testRuntime({ planner, tools: [tool], policies: [typo] }).start({ messages: prompt });

    const asked = await nextEvent(run, 'await_confirmation');
    expect(looked).toEqual([]);
    expect(asked.confirmation.toolCallIds).toEqual([`${run.runId}:t1:c1`, `${run.runId}:t1:c2`]);
    // Replayed synchronously: every event so far.
    const events: RunEvent[] = [];
    run.events$.subscribe((event) => events.push(event)).unsubscribe();
    const reported = events.find(
      (event) => event.type === 'policy_decision' && /not in the batch/.test(event.decision.note ?? ''),
    );
    expect(reported).toMatchObject({
      decision: { policy: 'approve-lookups', hook: 'onToolBatch', kinds: ['confirm'] },
    });
    expect((reported as { decision: { note: string } }).decision.note).toMatch(/no-such-id/);
    await run.confirm({ id: asked.confirmation.id, approved: true });
    expect((await run.result()).status).toBe('completed');
    expect(looked.sort()).toEqual(['A-1', 'A-2']);
  });

  it('still holds only the named calls when every name is in the batch', async () => {
    const { tool, looked } = lookupTool();
    const named = definePolicy({
      name: 'approve-second',
      onToolBatch: (batch) => ({ confirm: { calls: [batch[1]!.toolCallId] } }),
    });
    const planner = twoLookups();
    const run = testRuntime({ planner, tools: [tool], policies: [named] }).start({ messages: prompt });
    const asked = await nextEvent(run, 'await_confirmation');
    expect(asked.confirmation.toolCallIds).toEqual([`${run.runId}:t1:c2`]);
    await run.confirm({ id: asked.confirmation.id, approved: true });
    await run.result();
    expect(looked.sort()).toEqual(['A-1', 'A-2']);
  });
});

describe('approve-with-edits inputs with own prototype keys', () => {
  for (const [key, edit] of [
    ['__proto__', JSON.parse('{"orderId":"A-17","amountEur":100,"__proto__":{"admin":true}}')],
    ['constructor', { orderId: 'A-17', amountEur: 100, constructor: { admin: true } }],
  ] as const) {
    it(`refuses an edit with an own ${key} key, as a planner's input is refused; the run still waits`, async () => {
      const { tool, refunded } = refundTool();
      const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]);
      const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });
      const asked = await nextEvent(run, 'await_confirmation');
      const [toolCallId] = asked.confirmation.toolCallIds!;

      const refused = await run
        .confirm({ id: asked.confirmation.id, approved: true, by: 'ops', edits: { [toolCallId!]: edit } })
        .catch((err: unknown) => err);

      expect(refused).toBeInstanceOf(ApprovalEditRefusedError);
      const hint = (refused as ApprovalEditRefusedError).retryHint;
      expect(hint?.reason).toBe('invalid_arguments');
      expect(hint?.issues).toContainEqual(
        expect.objectContaining({ path: key, constraint: 'forbidden_key' }),
      );
      expect(run.status).toBe('awaiting');
      expect(refunded).toEqual([]);

      // The planner's own call with the same input is refused the same way.
      const planned = prepareToolCall(new ToolCatalog([tool]), {
        name: tool.id,
        toolCallId: 'c',
        input: edit,
      });
      expect(planned.ok).toBe(false);
      expect(!planned.ok && planned.result.retryHint?.issues).toEqual(hint?.issues);
      await run.confirm({ id: asked.confirmation.id, approved: false, reason: 'no' });
      await run.result();
      expect(refunded).toEqual([]);
    });
  }
});

/** Runs `test` on a SQLite store (a temporary file) that fails on demand. */
async function withFlakySqlite(test: (store: FlakyStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tw-approval-'));
  const store = flakyStore(sqliteStore({ path: join(dir, 'runs.db') }));
  try {
    await test(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('an approval whose state cannot be read', () => {
  it('holds while the store fails mid-answer, and runs once when it is back', async () => {
    await withFlakySqlite(async (store) => {
      const { tool, refunded } = refundTool();
      const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 50 }), done()]);
      const runtime = testRuntime({ planner, tools: [tool], store, durable: { evictAfterMs: 20 } });
      const run = runtime.start({ messages: prompt });
      const asked = await nextEvent(run, 'await_confirmation');
      await until(() => runtime.get(run.runId) === undefined);

      store.down = true;
      const failed = await runtime
        .confirm(run.runId, { id: asked.confirmation.id, approved: true })
        .catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(Error);
      // Through the handle the app kept, too.
      await expect(run.confirm({ id: asked.confirmation.id, approved: true })).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(refunded).toEqual([]);

      store.down = false;
      expect((await runtime.load(run.runId))?.awaiting).toMatchObject({ kind: 'confirmation' });
      const again = await runtime.confirm(run.runId, { id: asked.confirmation.id, approved: true });
      expect((await again.result()).status).toBe('completed');
      expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 50 }]);
      await runtime.close();
    });
  });

  it('does not run an approved call before its approval is in the store', async () => {
    await withFlakySqlite(async (store) => {
      const { tool, refunded } = refundTool();
      const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 50 }), done()]);
      const runtime = testRuntime({
        planner,
        tools: [tool],
        store,
        durable: { retry: { initialMs: 10, maxMs: 20 } },
      });
      const run = runtime.start({ messages: prompt });
      const asked = await nextEvent(run, 'await_confirmation');
      await run.persisted();

      store.down = true;
      await run.confirm({ id: asked.confirmation.id, approved: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(refunded).toEqual([]);
      expect((store.failures.save ?? 0) + (store.failures.appendEvents ?? 0)).toBeGreaterThan(0);

      store.down = false;
      expect((await run.result()).status).toBe('completed');
      expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 50 }]);
      await runtime.close();
    });
  });
});
