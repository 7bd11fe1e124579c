/**
 * Issue 35 item 4: sticky approvals. `confirm({ …, remember: 'tool' | 'arguments' })` records an
 * approval that lets later identical calls (same tool, or same tool and canonical input) of the
 * run and of its thread run without asking; a `high` risk call always asks. Recorded in events and
 * the transcript, listed (`run.approvals`, `runtime.approvals`), revocable, kept across a restore.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlanResult } from '../run/planner.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { RunEventSchema } from '../run/run-events.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { RunAnswerError } from '../runtime/run-handle.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import {
  ATTR_TOOLWARDEN_APPROVAL_APPROVED_BY,
  ATTR_TOOLWARDEN_APPROVAL_PERMISSIONS,
  ATTR_TOOLWARDEN_APPROVAL_RISK,
  ATTR_TOOLWARDEN_APPROVAL_SUMMARY,
} from '../telemetry/attributes.ts';
import { done, testRuntime } from './run-fixtures.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { riskyRefundTool } from './support/refund-tool.ts';

const refund = (orderId: string, amount: number): PlanResult => ({
  toolCalls: [{ name: 'payments.refund', input: { orderId, amount } }],
});
const grants = ['payments:refund'];
const prompt = [{ role: 'user' as const, content: 'Refund the orders' }];

/** Records the run's events and answers each confirmation with `answer(confirmation, asked)`. */
function answering(
  run: RunHandle,
  answer: (
    confirmation: { id: string; toolCallIds?: string[] },
    asked: number,
  ) => Parameters<RunHandle['confirm']>[0] | Promise<Parameters<RunHandle['confirm']>[0]>,
) {
  const events: RunEvent[] = [];
  const asked: { id: string; calls: unknown[] }[] = [];
  run.events$.subscribe((event) => {
    events.push(event);
    if (event.type !== 'await_confirmation') return;
    asked.push({ id: event.confirmation.id, calls: event.confirmation.calls ?? [] });
    void Promise.resolve(answer(event.confirmation, asked.length)).then((given) => run.confirm(given));
  });
  return { events, asked };
}

describe('sticky approvals', () => {
  it("remember: 'arguments' lets the next identical call through, other arguments ask, a high-risk call always asks", async () => {
    const { tool, refunded } = riskyRefundTool();
    const planner = scriptedPlanner([
      refund('A-17', 40),
      refund('A-17', 40), // identical: runs without asking
      { toolCalls: [{ name: 'payments.refund', input: '{"amount": 40.0, "orderId": "A-17"}' }] }, // same canonical input, as JSON text
      refund('A-18', 40), // other arguments: asks
      refund('B-1', 5000), // high risk: asks; its `remember` is ignored
      refund('B-1', 5000), // and asks again
      done(),
    ]);
    const runtime = testRuntime({ planner, tools: [tool] });
    const run = runtime.start({ messages: prompt, grants });
    const { events, asked } = answering(run, ({ id }) => ({
      id,
      approved: true,
      by: 'ops@example.com',
      remember: 'arguments',
    }));

    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(refunded).toEqual([
      { orderId: 'A-17', amount: 40 },
      { orderId: 'A-17', amount: 40 },
      { orderId: 'A-17', amount: 40 },
      { orderId: 'A-18', amount: 40 },
      { orderId: 'B-1', amount: 5000 },
      { orderId: 'B-1', amount: 5000 },
    ]);
    // Asked for the 1st, 4th, 5th and 6th calls only.
    expect(asked).toHaveLength(4);
    // The high-risk descriptor says a `remember` will not be kept.
    expect(asked[2]!.calls).toEqual([expect.objectContaining({ risk: 'high', rememberable: false })]);
    expect(asked[0]!.calls[0]).not.toHaveProperty('rememberable');

    const remembered = events.filter((e) => e.type === 'approval_remembered');
    expect(remembered).toHaveLength(4);
    expect(remembered[0]).toMatchObject({
      approvals: [
        {
          scope: 'arguments',
          tool: 'payments.refund',
          by: 'ops@example.com',
          input: { orderId: 'A-17', amount: 40 },
        },
      ],
    });
    expect(remembered[2]).toMatchObject({
      approvals: [],
      notRemembered: [{ tool: 'payments.refund', reason: 'high_risk' }],
    });
    const applied = events.filter(
      (e) => e.type === 'policy_decision' && e.decision.decision.approved_by === 'remembered',
    );
    expect(applied).toHaveLength(2);
    expect(applied[0]).toMatchObject({
      decision: {
        policy: 'remembered-approval',
        kinds: ['approve'],
        decision: { approved_by: 'remembered', scope: 'arguments', by: 'ops@example.com' },
        tool: 'payments.refund',
      },
    });
    for (const event of events) expect(RunEventSchema.safeParse(event).success).toBe(true);

    // Two approvals kept, none for the high-risk call.
    expect(run.approvals.map((a) => a.input)).toEqual([
      { orderId: 'A-17', amount: 40 },
      { orderId: 'A-18', amount: 40 },
    ]);
    expect(await runtime.approvals(run.runId)).toEqual(run.approvals);
    // The transcript says so, after the results.
    const notes = outcome.transcript.filter((m) => m.role === 'user' && m.content.startsWith('Approvals:'));
    expect(notes.map((m) => m.content)).toEqual([
      expect.stringMatching(
        /was approved by ops@example.com, who asked to remember it for later calls of payments.refund with the same arguments/,
      ),
      expect.stringMatching(
        /ran without asking: ops@example.com approved later calls of payments.refund with the same arguments earlier/,
      ),
      expect.stringMatching(/ran without asking/),
      expect.stringMatching(/asked to remember/),
    ]);
  });

  it("remember: 'tool' covers every later call of the tool but the high-risk ones; revoking it makes them ask again", async () => {
    const { tool, refunded } = riskyRefundTool();
    const planner = scriptedPlanner([
      refund('A-1', 10),
      refund('A-2', 20), // another input: the tool is remembered
      refund('A-3', 3000), // high risk: asks anyway
      refund('A-4', 30), // after the revoke: asks
      done(),
    ]);
    const runtime = testRuntime({ planner, tools: [tool] });
    const run = runtime.start({ messages: prompt, grants });
    const { events, asked } = answering(run, async ({ id }, n) => {
      // While the high-risk call waits, security revokes the tool's approval.
      if (n === 2) await run.revokeApproval(run.approvals[0]!.id, { by: 'security@example.com' });
      return { id, approved: true, by: 'ops', ...(n === 1 ? { remember: 'tool' as const } : {}) };
    });
    expect((await run.result()).status).toBe('completed');
    expect(refunded.map((r) => r.orderId)).toEqual(['A-1', 'A-2', 'A-3', 'A-4']);
    expect(asked).toHaveLength(3); // A-1, A-3 (high), A-4 (revoked)
    expect(events.find((e) => e.type === 'approval_revoked')).toMatchObject({
      tool: 'payments.refund',
      scope: 'tool',
      by: 'security@example.com',
    });
    expect(run.approvals).toEqual([]);
    await expect(run.revokeApproval('no-such-approval')).rejects.toBeInstanceOf(RunAnswerError);
  });

  it('rememberHighRisk: true records a high-risk approval too', async () => {
    const { tool, refunded } = riskyRefundTool();
    const planner = scriptedPlanner([refund('B-1', 5000), refund('B-1', 5000), done()]);
    const runtime = testRuntime({ planner, tools: [tool], approvals: { rememberHighRisk: true } });
    const run = runtime.start({ messages: prompt, grants });
    const { asked } = answering(run, ({ id }) => ({ id, approved: true, remember: 'arguments' }));
    expect((await run.result()).status).toBe('completed');
    expect(refunded).toHaveLength(2);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.calls[0]).not.toHaveProperty('rememberable');
  });

  it('refuses a remember with a denial or of an unknown scope, and sends nothing', async () => {
    const { tool } = riskyRefundTool();
    const runtime = testRuntime({ planner: scriptedPlanner([refund('A-1', 10), done()]), tools: [tool] });
    const run = runtime.start({ messages: prompt, grants });
    const asked = await new Promise<string>((resolve) =>
      run.events$.subscribe((event) => {
        if (event.type === 'await_confirmation') resolve(event.confirmation.id);
      }),
    );
    await expect(run.confirm({ id: asked, approved: false, remember: 'tool' })).rejects.toThrow(
      /`remember` comes with an approval/,
    );
    await expect(run.confirm({ id: asked, approved: true, remember: 'forever' as never })).rejects.toThrow(
      /`remember` must be 'tool' or 'arguments'/,
    );
    expect(run.status).toBe('awaiting');
    expect(run.approvals).toEqual([]);
    run.cancel('test over');
  });

  it("a thread's next run (continueSession) starts with the approvals its last run remembered", async () => {
    const { tool, refunded } = riskyRefundTool();
    const store = memoryStore();
    const first = testRuntime({
      planner: scriptedPlanner([refund('A-17', 40), done()]),
      tools: [tool],
      store,
    });
    const run1 = first.start({ messages: prompt, grants, sessionId: 'thread-1' });
    answering(run1, ({ id }) => ({ id, approved: true, by: 'ops', remember: 'arguments' }));
    expect((await run1.result()).status).toBe('completed');

    const second = testRuntime({
      planner: scriptedPlanner([refund('A-17', 40), refund('A-18', 40), done()]),
      tools: [tool],
      store,
    });
    const run2 = await second.continueSession('thread-1', {
      messages: [{ role: 'user', content: 'Again' }],
      grants,
    });
    const { asked } = answering(run2, ({ id }) => ({ id, approved: true }));
    expect((await run2.result()).status).toBe('completed');
    expect(refunded.map((r) => r.orderId)).toEqual(['A-17', 'A-17', 'A-18']);
    expect(asked).toHaveLength(1); // only A-18
    expect(run2.approvals).toEqual([expect.objectContaining({ runId: run1.runId, scope: 'arguments' })]);
  });

  it('survives a restart: a new runtime on the same SQLite file lists the approval and lets the identical call through', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-sticky-'));
    const path = join(dir, 'runs.db');
    const stores = [sqliteStore({ path }), sqliteStore({ path })] as const;
    const runtimes: { close(): Promise<void> }[] = [];
    try {
      const { tool } = riskyRefundTool();
      // Turn 1: refund (approved, remembered); turn 2: a clarification the run waits on over the restart.
      const steps = (): PlanResult[] => [
        refund('A-17', 40),
        { await: { clarification: { id: 'q', question: 'Anything else?', missingFields: [] } } },
        refund('A-17', 40),
        done(),
      ];
      const first = testRuntime({ planner: scriptedPlanner(steps()), tools: [tool], store: stores[0] });
      const run = first.start({ messages: prompt, grants });
      answering(run, ({ id }) => ({ id, approved: true, by: 'ops', remember: 'arguments' }));
      await new Promise<void>((resolve) =>
        run.events$.subscribe((event) => {
          if (event.type === 'await_clarification') resolve();
        }),
      );
      await run.persisted();
      await first.close();

      const { tool: tool2, refunded } = riskyRefundTool();
      const planner2 = scriptedPlanner(steps().slice(2));
      const second = testRuntime({ planner: planner2, tools: [tool2], store: stores[1] });
      runtimes.push(second);
      expect(await second.approvals(run.runId)).toEqual([
        expect.objectContaining({ scope: 'arguments', by: 'ops', input: { orderId: 'A-17', amount: 40 } }),
      ]);
      expect(second.get(run.runId)).toBeUndefined(); // listed without restoring
      const restored = await second.provideClarification(run.runId, { id: 'q', answer: 'the same again' });
      const events: RunEvent[] = [];
      restored.events$.subscribe((event) => events.push(event));
      expect((await restored.result()).status).toBe('completed');
      expect(refunded).toEqual([{ orderId: 'A-17', amount: 40 }]);
      expect(events.some((e) => e.type === 'await_confirmation')).toBe(false);
    } finally {
      for (const runtime of runtimes) await runtime.close();
      for (const store of stores) await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the execute_tool span carries the approval descriptor and who let the call run (person, remembered)', async () => {
    const { exporter, provider } = inMemoryTracing();
    const { tool } = riskyRefundTool();
    const planner = scriptedPlanner([refund('A-17', 40), refund('A-17', 40), done()]);
    const runtime = testRuntime({ planner, tools: [tool], telemetry: { tracerProvider: provider } });
    const run = runtime.start({ messages: prompt, grants });
    answering(run, ({ id }) => ({ id, approved: true, by: 'ops', remember: 'arguments' }));
    expect((await run.result()).status).toBe('completed');
    await provider.forceFlush();

    const spans = exporter.getFinishedSpans().filter((s) => s.name === 'execute_tool payments.refund');
    expect(spans.map((span) => span.attributes[ATTR_TOOLWARDEN_APPROVAL_APPROVED_BY])).toEqual([
      'person',
      'remembered',
    ]);
    for (const span of spans) {
      expect(span.attributes[ATTR_TOOLWARDEN_APPROVAL_RISK]).toBe('medium');
      expect(span.attributes[ATTR_TOOLWARDEN_APPROVAL_PERMISSIONS]).toEqual(['payments:refund']);
      expect(span.attributes[ATTR_TOOLWARDEN_APPROVAL_SUMMARY]).toBe('Refund 40 EUR of A-17');
    }
  });
});
