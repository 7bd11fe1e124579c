/**
 * Issue 35 item 3: permissions and risk on approvals. A refund tool declares
 * `permissions: ['payments:refund']`, `risk: (i) => i.amount > 1000 ? 'high' : 'medium'` and a
 * `summary`; a run without the grant gets `permission_denied` naming it; with it, the
 * confirmation carries a descriptor per call everywhere it surfaces.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePolicy } from '../policies/define-policy.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { StartOptionsError } from '../runtime/start-input.ts';
import { defineTool } from '../tools/define-tool.ts';
import { call, done, nextEvent, testRuntime } from './run-fixtures.ts';
import { riskyRefundTool } from './support/refund-tool.ts';

const prompt = [{ role: 'user' as const, content: 'Refund A-17' }];

describe('tool permissions and grants', () => {
  it('refuses a call whose permission the run was not granted: permission_denied naming it', async () => {
    const { tool, refunded } = riskyRefundTool();
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amount: 40 }), done()]);
    const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });
    const hint = await nextEvent(run, 'retry_hint');
    expect(hint.hint).toMatchObject({ reason: 'permission_denied', tool: 'payments.refund' });
    expect(hint.hint.message).toMatch(/needs the permission "payments:refund"/);
    expect((await run.result()).status).toBe('completed');
    expect(refunded).toEqual([]);
    expect(planner.calls[1]).toMatchObject({
      toolResults: [{ executed: false, retryHint: { reason: 'permission_denied' } }],
    });
  });

  it('with the grant, the confirmation carries a descriptor per call in run.awaiting, the event and the store', async () => {
    const { tool, refunded } = riskyRefundTool();
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'payments.refund', input: { orderId: 'A-17', amount: 40 } },
          { name: 'payments.refund', input: { orderId: 'A-18', amount: 5000 } },
        ],
      },
      done(),
    ]);
    const runtime = testRuntime({ planner, tools: [tool] });
    const run = runtime.start({ messages: prompt, grants: ['payments:refund'] });
    const asked = await nextEvent(run, 'await_confirmation');
    const descriptors = [
      {
        toolCallId: `${run.runId}:t1:c1`,
        tool: 'payments.refund',
        input: { orderId: 'A-17', amount: 40 },
        summary: 'Refund 40 EUR of A-17',
        risk: 'medium',
        permissions: ['payments:refund'],
      },
      {
        toolCallId: `${run.runId}:t1:c2`,
        tool: 'payments.refund',
        input: { orderId: 'A-18', amount: 5000 },
        summary: 'Refund 5000 EUR of A-18',
        risk: 'high',
        // A `remember` given with the approval would not be kept for it (docs/policies.md §Sticky approvals).
        rememberable: false,
        permissions: ['payments:refund'],
      },
    ];
    expect(asked.confirmation.calls).toEqual(descriptors);
    expect(run.awaiting).toMatchObject({ kind: 'confirmation', calls: descriptors });
    await run.persisted();
    expect((await runtime.load(run.runId))?.awaiting).toMatchObject({ calls: descriptors });
    await run.confirm({ id: asked.confirmation.id, approved: true });
    await run.result();
    expect(refunded.map((r) => r.amount).sort()).toEqual([40, 5000]);
  });

  it('a policy may send a call lacking a permission for approval instead; the descriptor names what is missing', async () => {
    const { tool, refunded } = riskyRefundTool();
    const escalate = definePolicy({
      name: 'approve-missing-permissions',
      onToolBatch: (batch) => ({
        confirm: { calls: batch.map((c) => c.toolCallId), prompt: 'No grant: approve?' },
      }),
    });
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amount: 40 }), done()]);
    const run = testRuntime({ planner, tools: [tool], policies: [escalate] }).start({ messages: prompt });
    const asked = await nextEvent(run, 'await_confirmation');
    expect(asked.confirmation.calls?.[0]).toMatchObject({
      permissions: ['payments:refund'],
      missing: ['payments:refund'],
    });
    await run.confirm({ id: asked.confirmation.id, approved: true, by: 'ops' });
    await run.result();
    expect(refunded.map((r) => r.amount)).toEqual([40]);
  });

  it('fails closed: permissions that throw refuse the call; a risk that throws is high', async () => {
    const tool = defineTool({
      id: 'payments.refund',
      description: 'Refund',
      input: z.object({ amount: z.number() }),
      permissions: () => {
        throw new Error('directory down');
      },
      execute: async () => ({ ok: true }),
    });
    const planner = scriptedPlanner([call('payments.refund', { amount: 1 }), done()]);
    const run = testRuntime({ planner, tools: [tool] }).start({
      messages: prompt,
      grants: ['payments:refund'],
    });
    const events: RunEvent[] = [];
    run.events$.subscribe((event) => events.push(event));
    await run.result();
    expect(events.find((e) => e.type === 'retry_hint')).toMatchObject({
      hint: { reason: 'permission_denied' },
    });

    const risky = defineTool({
      id: 'payments.refund',
      description: 'Refund',
      input: z.object({ amount: z.number() }),
      requiresConfirmation: true,
      risk: () => {
        throw new Error('no');
      },
      execute: async () => ({ ok: true }),
    });
    const second = testRuntime({
      planner: scriptedPlanner([call('payments.refund', { amount: 1 }), done()]),
      tools: [risky],
    });
    const waiting = second.start({ messages: prompt });
    expect((await nextEvent(waiting, 'await_confirmation')).confirmation.calls?.[0]?.risk).toBe('high');
    waiting.cancel();
  });

  it('refuses grants that are not an array of non-empty strings', () => {
    const { tool } = riskyRefundTool();
    const runtime = testRuntime({ planner: scriptedPlanner([done()]), tools: [tool] });
    expect(() => runtime.start({ messages: prompt, grants: 'payments:refund' as never })).toThrow(
      StartOptionsError,
    );
    expect(() => runtime.start({ messages: prompt, grants: [''] })).toThrow(/grants\.0/);
  });
});
