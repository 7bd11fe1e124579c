/**
 * Issue 12, defects 3 and 9: what a plugin's `wrapToolCall` hook cannot do to a run. A hook that
 * never calls `next` kept the run in `executing` for ever (the tool's timeout lives inside
 * `next`); a hook that called `next` twice ran the side effect twice; a hook that threw before
 * `next` was reported as `executed: true`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../../plugins/define-plugin.ts';
import { scriptedPlanner } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { testRuntime } from '../run-fixtures.ts';

function countingTool(timeoutMs = 50) {
  const runs: string[] = [];
  const tool = defineTool({
    id: 'crm.note',
    description: 'Adds a note',
    input: z.object({ text: z.string() }),
    timeoutMs,
    execute: async ({ text }) => {
      runs.push(text);
      return { ok: true };
    },
  });
  return { tool, runs };
}

const oneCall = () =>
  scriptedPlanner([
    { toolCalls: [{ name: 'crm.note', input: { text: 'hello' } }] },
    { finalResponse: { text: 'done' } },
  ]);

describe('a wrapToolCall hook', () => {
  it('that never calls next holds the call only until the tool timeout plus a grace, then the run goes on', async () => {
    const { tool, runs } = countingTool(50);
    let aborted = false;
    const stuck = definePlugin({
      name: 'stuck',
      wrapToolCall: (call) =>
        new Promise(() => {
          call.signal?.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    });
    const run = testRuntime({ planner: oneCall(), tools: [tool], plugins: [stuck] }).start({ messages: [] });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(runs).toEqual([]);
    expect(outcome.toolResults[0]).toMatchObject({ executed: false, retryHint: { reason: 'timeout' } });
    expect(outcome.toolResults[0]?.error?.message).toContain('a wrapToolCall hook held the call');
    expect(aborted).toBe(true);
  });

  it('that calls next twice runs execute once; the second call is an error', async () => {
    const { tool, runs } = countingTool(1_000);
    const twice = definePlugin({
      name: 'twice',
      async wrapToolCall(call, next) {
        await next(call);
        return next(call);
      },
    });
    const outcome = await testRuntime({ planner: oneCall(), tools: [tool], plugins: [twice] })
      .start({ messages: [] })
      .result();

    expect(runs).toEqual(['hello']);
    expect(outcome.toolResults[0]).toMatchObject({ executed: true });
    expect(outcome.toolResults[0]?.error?.message).toContain('called next() twice');
  });

  it('that throws before next leaves the call not executed', async () => {
    const { tool, runs } = countingTool(1_000);
    const throwing = definePlugin({
      name: 'throwing',
      wrapToolCall() {
        throw new Error('no quota');
      },
    });
    const outcome = await testRuntime({ planner: oneCall(), tools: [tool], plugins: [throwing] })
      .start({ messages: [] })
      .result();

    expect(runs).toEqual([]);
    expect(outcome.toolResults[0]).toMatchObject({ executed: false, error: { message: 'no quota' } });
  });
});

describe('executeToolCall', () => {
  it('never starts execute when the call was stopped before it began', async () => {
    const { tool, runs } = countingTool(1_000);
    const { executeToolCall } = await import('../../tools/call-tool.ts');
    const stopped = new AbortController();
    stopped.abort(new Error('run lost to another owner'));
    const meta = { runId: 'r', turnId: 'r:t1', toolCallId: 'r:t1:c1', agentId: 'a', attempt: 1 };
    const result = await executeToolCall(tool, { text: 'x' }, { meta, signal: stopped.signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(runs).toEqual([]);
    expect(result).toMatchObject({ executed: false, error: { message: 'run lost to another owner' } });
  });
});

describe('a plugin onRunStart hook that throws', () => {
  it('is reported and isolated: runtime.start() returns and the run completes', async () => {
    const errors: string[] = [];
    const faulty = definePlugin({
      name: 'faulty',
      onRunStart() {
        throw new Error('no config');
      },
    });
    const runtime = testRuntime({
      planner: scriptedPlanner([{ finalResponse: { text: 'ok' } }]),
      plugins: [faulty],
      onError: (_err, where) => errors.push(where),
    });
    const outcome = await runtime.start({ messages: [] }).result();
    expect(outcome.status).toBe('completed');
    expect(errors).toContain('plugin faulty onRunStart');
  });
});
