/**
 * Issue 35 item 7: batches with mixed approval. With `approvals: { runUnapproved: 'parallel' }`
 * (the runtime's, or a tool's own) the calls of a batch that need no approval run first; the
 * others wait for the person, asked once those are done. Results reach the planner in call order.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { PlanResumeInput } from '../run/planner.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { done, nextEvent, testRuntime } from './run-fixtures.ts';
import { riskyRefundTool } from './support/refund-tool.ts';

function lookupTools(runUnapproved?: 'parallel' | 'wait') {
  const looked: string[] = [];
  const make = (id: string) =>
    defineTool({
      id,
      description: 'Look an order up',
      input: z.object({ orderId: z.string() }),
      ...(runUnapproved === undefined ? {} : { approvals: { runUnapproved } }),
      execute: async ({ orderId }) => {
        looked.push(`${id}:${orderId}`);
        return { orderId, status: 'shipped' };
      },
    });
  return { orders: make('orders.lookup'), shipping: make('shipping.track'), looked };
}

const batch = {
  toolCalls: [
    { name: 'orders.lookup', input: { orderId: 'A-17' } },
    { name: 'payments.refund', input: { orderId: 'A-17', amount: 40 } },
    { name: 'shipping.track', input: { orderId: 'A-17' } },
  ],
};
const prompt = [{ role: 'user' as const, content: 'Refund A-17 and tell me where it is' }];
const grants = ['payments:refund'];

/** A run of `batch` on a runtime with `runUnapproved: 'parallel'`. */
function startParallel() {
  const { tool: refund, refunded } = riskyRefundTool();
  const { orders, shipping, looked } = lookupTools();
  const planner = scriptedPlanner([batch, done()]);
  const runtime = testRuntime({
    planner,
    tools: [orders, refund, shipping],
    approvals: { runUnapproved: 'parallel' },
  });
  return { run: runtime.start({ messages: prompt, grants }), planner, refunded, looked };
}

describe('mixed-approval batches', () => {
  it("runUnapproved: 'parallel' runs the free calls first; the approval is asked once they are done; results in call order", async () => {
    const { run, planner, refunded, looked } = startParallel();
    const events: RunEvent[] = [];
    run.events$.subscribe((event) => events.push(event));

    const asked = await nextEvent(run, 'await_confirmation');
    // Both lookups ran before the person was asked; the refund waits.
    expect(looked).toEqual(['orders.lookup:A-17', 'shipping.track:A-17']);
    expect(refunded).toEqual([]);
    expect(asked.confirmation.calls?.map((call) => call.tool)).toEqual(['payments.refund']);
    expect(run.state).toBe('awaiting.confirmation');
    await run.confirm({ id: asked.confirmation.id, approved: true, by: 'ops' });

    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(refunded).toEqual([{ orderId: 'A-17', amount: 40 }]);
    // The planner sees the whole batch once it is settled, in the order it proposed the calls.
    const resumed = planner.calls[1] as PlanResumeInput;
    expect(resumed.toolResults.map((result) => result.name)).toEqual([
      'orders.lookup',
      'payments.refund',
      'shipping.track',
    ]);
    const toolMessages = outcome.transcript.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.toolName)).toEqual([
      'orders.lookup',
      'payments.refund',
      'shipping.track',
    ]);
    // The free calls' results were recorded (as events) before the question.
    const kinds = events.map((event) => (event.type === 'tool_result' ? event.result.name : event.type));
    expect(kinds.indexOf('shipping.track')).toBeLessThan(kinds.indexOf('await_confirmation'));
    expect(kinds.indexOf('await_confirmation')).toBeLessThan(kinds.indexOf('payments.refund'));
    // Each call ran once.
    expect(events.filter((event) => event.type === 'tool_call_scheduled')).toHaveLength(3);
  });

  it("by default ('wait') nothing of the batch runs before the approval", async () => {
    const { tool: refund, refunded } = riskyRefundTool();
    const { orders, shipping, looked } = lookupTools();
    const runtime = testRuntime({
      planner: scriptedPlanner([batch, done()]),
      tools: [orders, refund, shipping],
    });
    const run = runtime.start({ messages: prompt, grants });
    const asked = await nextEvent(run, 'await_confirmation');
    expect(looked).toEqual([]);
    await run.confirm({ id: asked.confirmation.id, approved: true });
    expect((await run.result()).status).toBe('completed');
    expect(looked).toEqual(['orders.lookup:A-17', 'shipping.track:A-17']);
    expect(refunded).toHaveLength(1);
  });

  it("a tool's own approvals.runUnapproved decides for its calls", async () => {
    const { tool: refund } = riskyRefundTool();
    const parallel = lookupTools('parallel');
    const waiting = lookupTools('wait');
    const runtime = testRuntime({
      planner: scriptedPlanner([batch, done()]),
      // orders.lookup runs ahead, shipping.track waits, whatever the runtime says.
      tools: [parallel.orders, refund, waiting.shipping],
      approvals: { runUnapproved: 'parallel' },
    });
    const run = runtime.start({ messages: prompt, grants });
    const asked = await nextEvent(run, 'await_confirmation');
    expect(parallel.looked).toEqual(['orders.lookup:A-17']);
    expect(waiting.looked).toEqual([]);
    await run.confirm({ id: asked.confirmation.id, approved: true });
    expect((await run.result()).status).toBe('completed');
    expect(waiting.looked).toEqual(['shipping.track:A-17']);
  });

  it('a denial answers the held call; the free calls keep their results and the planner sees all three', async () => {
    const { run, planner, refunded, looked } = startParallel();
    const asked = await nextEvent(run, 'await_confirmation');
    await run.confirm({ id: asked.confirmation.id, approved: false, by: 'ops', reason: 'not today' });
    expect((await run.result()).status).toBe('completed');
    expect(refunded).toEqual([]);
    expect(looked).toHaveLength(2);
    const resumed = planner.calls[1] as PlanResumeInput;
    expect(resumed.toolResults.map((result) => [result.name, result.executed])).toEqual([
      ['orders.lookup', true],
      ['payments.refund', false],
      ['shipping.track', true],
    ]);
    expect(resumed.toolResults[1]?.error?.message).toMatch(/not approved by ops: not today/);
  });

  it('a cancel while a free call runs: the run is canceled, the held call never runs, nobody is asked', async () => {
    const { tool: refund, refunded } = riskyRefundTool();
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow = defineTool({
      id: 'orders.lookup',
      description: 'Slow lookup',
      input: z.object({ orderId: z.string() }),
      execute: async (_input, { signal }) => {
        started();
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
        return { status: 'late' };
      },
    });
    const { shipping } = lookupTools();
    const runtime = testRuntime({
      planner: scriptedPlanner([batch, done()]),
      tools: [slow, refund, shipping],
      approvals: { runUnapproved: 'parallel' },
    });
    const run = runtime.start({ messages: prompt, grants });
    const events: RunEvent[] = [];
    run.events$.subscribe((event) => events.push(event));
    await running;
    run.cancel('user left');
    const outcome = await run.result();
    expect(outcome.status).toBe('canceled');
    expect(refunded).toEqual([]);
    expect(events.some((event) => event.type === 'await_confirmation')).toBe(false);
  });

  it('a restart while the free calls run: only they are asked for again, then the approval, and the refund runs once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-mixed-'));
    const path = join(dir, 'runs.db');
    const stores = [sqliteStore({ path }), sqliteStore({ path })] as const;
    const runtimes: { close(): Promise<void> }[] = [];
    try {
      const started: string[] = [];
      let hold = true;
      const lookup = defineTool({
        id: 'orders.lookup',
        description: 'Look an order up',
        input: z.object({ orderId: z.string() }),
        readOnly: true, // may run again after a restart
        execute: async ({ orderId }, { signal, meta }) => {
          started.push(meta.toolCallId);
          if (hold) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          return { orderId, status: 'shipped' };
        },
      });
      const { shipping } = lookupTools();
      const { tool: refund, refunded } = riskyRefundTool();
      const options = {
        tools: [lookup, refund, shipping],
        approvals: { runUnapproved: 'parallel' as const },
      };
      const first = testRuntime({ ...options, planner: scriptedPlanner([batch, done()]), store: stores[0] });
      const run = first.start({ runId: 'run-mixed-restart', messages: prompt, grants });
      await vi.waitFor(() => expect(started).toHaveLength(1));
      await first.close(); // stops mid-call: the stored state is `executing`
      hold = false;

      const second = testRuntime({ ...options, planner: scriptedPlanner([done()]), store: stores[1] });
      runtimes.push(second);
      const resumed = await second.resume(run.runId);
      const asked = await nextEvent(resumed, 'await_confirmation');
      // The lookup ran again under its own id; the refund was never started.
      expect(started).toEqual([`${run.runId}:t1:c1`, `${run.runId}:t1:c1`]);
      expect(refunded).toEqual([]);
      await resumed.confirm({ id: asked.confirmation.id, approved: true });
      expect((await resumed.result()).status).toBe('completed');
      expect(refunded).toEqual([{ orderId: 'A-17', amount: 40 }]);
    } finally {
      for (const runtime of runtimes) await runtime.close();
      for (const store of stores) await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
