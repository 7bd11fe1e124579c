/**
 * Issue 24 item 4: approve with edits, from code. The person answering a confirmation may change
 * the call's input; the edited input passes the tool boundary again (a bad edit is refused with a
 * hint and the run still waits for the person); the run log records the original, the edit and
 * who made it; the tool's span carries both.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ANSWER_HEADER } from '../inspector/inspector-server.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { ApprovalEditRefusedError } from '../runtime/approval-edits.ts';
import { RunAnswerError, type RunHandle } from '../runtime/run-handle.ts';
import {
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY,
  ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS,
} from '../telemetry/attributes.ts';
import { call, done, nextEvent, testRuntime } from './run-fixtures.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { refundTool } from './support/refund-tool.ts';

const prompt = [{ role: 'user' as const, content: 'Refund 500 EUR for A-17' }];

/** Waits for the run's confirmation and approves it as ops@example.com, the refund edited to 100 EUR. */
async function approveRefundOf100(run: RunHandle): Promise<void> {
  const asked = await nextEvent(run, 'await_confirmation');
  await run.confirm({
    id: asked.confirmation.id,
    approved: true,
    by: 'ops@example.com',
    edits: { [asked.confirmation.toolCallIds![0]!]: { orderId: 'A-17', amountEur: 100 } },
  });
}

describe('approve with edits', () => {
  it('runs the call with the edited input, and the run log records the original, the edit and who', async () => {
    const { tool, refunded } = refundTool();
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]);
    const runtime = testRuntime({ planner, tools: [tool] });
    const run = runtime.start({ messages: prompt });
    const asked = await nextEvent(run, 'await_confirmation');
    const [toolCallId] = asked.confirmation.toolCallIds!;

    await run.confirm({
      id: asked.confirmation.id,
      approved: true,
      by: 'ops@example.com',
      edits: { [toolCallId!]: { orderId: 'A-17', amountEur: 100 } },
    });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 100 }]);
    const log: RunEvent[] = [];
    for await (const record of runtime.events(run.runId, { follow: false })) log.push(record.event);
    const scheduled = log.find((e) => e.type === 'tool_call_scheduled');
    expect(scheduled).toMatchObject({
      toolCallId,
      edited: {
        original: { orderId: 'A-17', amountEur: 500 },
        input: { orderId: 'A-17', amountEur: 100 },
        by: 'ops@example.com',
      },
    });
  });

  it('refuses an edit the tool boundary refuses, with the hint; the run still waits, and a good edit then runs', async () => {
    const { tool, refunded } = refundTool();
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]);
    const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });
    const asked = await nextEvent(run, 'await_confirmation');
    const [toolCallId] = asked.confirmation.toolCallIds!;

    const refused = await run
      .confirm({
        id: asked.confirmation.id,
        approved: true,
        by: 'ops@example.com',
        edits: { [toolCallId!]: { orderId: 'A-17', amountEur: 5_000, note: 'x' } },
      })
      .catch((err: unknown) => err);

    expect(refused).toBeInstanceOf(ApprovalEditRefusedError);
    const hint = (refused as ApprovalEditRefusedError).retryHint;
    expect(hint?.reason).toBe('invalid_arguments');
    expect(hint?.issues?.map((issue) => issue.path)).toEqual(expect.arrayContaining(['amountEur']));
    expect(run.status).toBe('awaiting');
    expect(run.awaiting).toMatchObject({ kind: 'confirmation', id: asked.confirmation.id });
    expect(refunded).toEqual([]);

    await run.confirm({
      id: asked.confirmation.id,
      approved: true,
      edits: { [toolCallId!]: { orderId: 'A-17', amountEur: 900 } },
    });
    expect((await run.result()).status).toBe('completed');
    expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 900 }]);
  });

  it('refuses edits with a denial and edits of calls the confirmation does not hold', async () => {
    const { tool } = refundTool();
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]);
    const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });
    const asked = await nextEvent(run, 'await_confirmation');
    const [toolCallId] = asked.confirmation.toolCallIds!;

    await expect(
      run.confirm({ id: asked.confirmation.id, approved: false, edits: { [toolCallId!]: { orderId: 'A' } } }),
    ).rejects.toBeInstanceOf(RunAnswerError);
    await expect(
      run.confirm({ id: asked.confirmation.id, approved: true, edits: { 'other:c1': { orderId: 'A' } } }),
    ).rejects.toThrow(/no call "other:c1" awaits this approval/);
    expect(run.status).toBe('awaiting');
    run.cancel();
  });

  it('the execute_tool span carries the edit (arguments), the original and who edited', async () => {
    const { exporter, provider } = inMemoryTracing();
    const { tool } = refundTool();
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]);
    const run = testRuntime({
      planner,
      tools: [tool],
      telemetry: { tracerProvider: provider, captureContent: true },
    }).start({ messages: prompt });
    await approveRefundOf100(run);
    await run.result();
    await provider.forceFlush();

    const span = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool payments.refund');
    expect(span?.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]).toBe('{"orderId":"A-17","amountEur":100}');
    expect(span?.attributes[ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS]).toBe(
      '{"orderId":"A-17","amountEur":500}',
    );
    expect(span?.attributes[ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY]).toBe('ops@example.com');
  });
});

describe('approve with edits: what the planner learns', () => {
  it('the transcript says, after the results, that the call ran with the approver’s input', async () => {
    const { tool } = refundTool();
    const planner = scriptedPlanner([
      call('payments.refund', { orderId: 'A-17', amountEur: 500 }, 'call_1'),
      done(),
    ]);
    const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });
    await approveRefundOf100(run);
    const outcome = await run.result();

    const roles = outcome.transcript.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(outcome.transcript[3]).toEqual({
      role: 'user',
      content:
        'The approver (ops@example.com) edited before approving: payments.refund (call_1) ran with {"orderId":"A-17","amountEur":100} instead of {"orderId":"A-17","amountEur":500}.',
    });
  });
});

describe('approve with edits from the inspector (POST /api/runs/:key/answer)', () => {
  it('a refused edit is a 422 with the hint and the run waits; a good edit runs', async () => {
    const { tool, refunded } = refundTool();
    const planner = scriptedPlanner([call('payments.refund', { orderId: 'A-17', amountEur: 500 }), done()]);
    const runtime = testRuntime({ planner, tools: [tool], inspector: { port: 0 } });
    try {
      const server = await runtime.inspector!.start();
      const run = runtime.start({ runId: 'refund-1', messages: prompt });
      const asked = await nextEvent(run, 'await_confirmation');
      const toolCallId = asked.confirmation.toolCallIds![0]!;
      const page = (await (await fetch(`${server.origin}/api/runs?token=${server.token}`)).json()) as {
        runs: { key: string; runId: string }[];
      };
      const key = page.runs.find((r) => r.runId === 'refund-1')!.key;
      const answer = (amountEur: unknown) =>
        post(`${server.origin}/api/runs/${encodeURIComponent(key)}/answer?token=${server.token}`, {
          kind: 'confirmation',
          id: asked.confirmation.id,
          approved: true,
          edits: { [toolCallId]: { orderId: 'A-17', amountEur } },
        });

      const refused = await answer('a lot');
      expect(refused.status).toBe(422);
      expect(JSON.parse(refused.body)).toMatchObject({
        toolCallId,
        retryHint: { reason: 'invalid_arguments' },
      });
      expect(run.status).toBe('awaiting');

      expect((await answer(100)).status).toBe(200);
      await run.result();
      expect(refunded).toEqual([{ orderId: 'A-17', amountEur: 100 }]);
    } finally {
      await runtime.inspector?.close();
    }
  });
});

/** A POST as the inspector page sends it: same origin, the answer header. */
function post(url: string, body: unknown): Promise<{ status: number; body: string }> {
  const { host } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: `http://${host}`,
          [ANSWER_HEADER]: 'answer',
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
