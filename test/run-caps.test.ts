import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolError } from '../tools/tool-error.ts';
import { call, done, echoTool, hangingStep, nextEvent, sleep, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Go' }];

function countingTool(id = 'util.count') {
  const execute = vi.fn(async ({ n }: { n: number }) => ({ n }));
  const tool = defineTool({ id, description: 'Counts', input: z.object({ n: z.number() }), execute });
  return { tool, execute };
}

describe('maxToolCalls', () => {
  it('refuses a batch that would pass the cap whole, never cutting it, and finalizes with tool_cap', async () => {
    const { tool, execute } = countingTool();
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'util.count', toolCallId: 'a1', input: { n: 1 } },
          { name: 'util.count', toolCallId: 'a2', input: { n: 2 } },
        ],
      },
      {
        toolCalls: [
          { name: 'util.count', toolCallId: 'b1', input: { n: 3 } },
          { name: 'util.count', toolCallId: 'b2', input: { n: 4 } },
        ],
      },
      done('Stopping here: tool budget spent.'),
    ]);
    const runtime = testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 3 } });

    const outcome = await runtime.start({ messages: prompt }).result();

    // 2 + 2 > 3: the second batch is refused, not cut down to the one call that would fit.
    expect(execute).toHaveBeenCalledTimes(2);
    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('tool_cap');
    const finalizing = planner.calls[2]!;
    expect(finalizing.tools).toEqual([]);
    expect('finalize' in finalizing && finalizing.finalize).toMatchObject({ reason: 'tool_cap' });
    const refused = 'toolResults' in finalizing ? finalizing.toolResults : [];
    expect(refused.map((r) => [r.providerToolCallId, r.executed])).toEqual([
      ['b1', false],
      ['b2', false],
    ]);
    expect(refused[0]?.error?.message).toMatch(
      /^Batch refused: 2 more calls would pass maxToolCalls \(3; 2 used\)/,
    );
    // The refused calls are answered in the transcript and in the events, like any result.
    expect(outcome.transcript.filter((m) => m.role === 'tool').map((m) => m.providerToolCallId)).toEqual([
      'a1',
      'a2',
      'b1',
      'b2',
    ]);
    expect(outcome.toolResults.map((r) => r.providerToolCallId)).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('finalizes with tool_cap once the calls made reach the cap', async () => {
    const { tool, execute } = countingTool();
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'util.count', input: { n: 1 } },
          { name: 'util.count', input: { n: 2 } },
        ],
      },
      done(),
    ]);
    const run = testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 2 } }).start({
      messages: prompt,
    });

    const completed = await nextEvent(run, 'run_completed');

    expect(execute).toHaveBeenCalledTimes(2);
    expect(completed.finalizeReason).toBe('tool_cap');
    expect(planner.calls[1]).toMatchObject({ tools: [], finalize: { reason: 'tool_cap' } });
    expect(planner.calls[1]!.caps).toMatchObject({ maxToolCalls: 2, toolCalls: 2, remainingToolCalls: 0 });
  });
});

describe('maxConsecutiveFailedToolCalls', () => {
  const failing = defineTool({
    id: 'util.flaky',
    description: 'Fails unless told to succeed',
    input: z.object({ ok: z.boolean() }),
    execute: async ({ ok }) => {
      if (!ok) throw new Error('backend down');
      return { ok };
    },
  });

  it('finalizes with failure_cap after that many failed calls in a row, and a success resets the count', async () => {
    const planner = scriptedPlanner([
      call('util.flaky', { ok: false }),
      call('util.flaky', { ok: true }),
      call('util.flaky', { ok: false }),
      call('util.flaky', { ok: false }),
      done('Giving up.'),
    ]);
    const runtime = testRuntime({
      planner,
      tools: [failing],
      caps: { maxConsecutiveFailedToolCalls: 2, maxRetriesPerTool: 10 },
    });

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('failure_cap');
    expect(planner.calls).toHaveLength(5);
    expect(planner.calls[4]).toMatchObject({ tools: [], finalize: { reason: 'failure_cap' } });
    expect(planner.calls[4]!.caps.consecutiveFailedToolCalls).toBe(2);
    expect(planner.calls[2]!.caps.consecutiveFailedToolCalls).toBe(0);
  });
});

describe('maxRetriesPerTool', () => {
  it('refuses and disables a tool past its repairs: never executed again, no longer advertised', async () => {
    const execute = vi.fn(async () => ({ id: 'cus_1' }));
    const upsert = defineTool({
      id: 'crm.upsert_profile',
      description: 'Create or update a customer profile',
      input: z.object({ email: z.email() }),
      execute,
    });
    const planner = scriptedPlanner([
      call('crm.upsert_profile', { email: 'ada' }, 'try1'),
      call('crm.upsert_profile', { email: 'ada@' }, 'try2'),
      call('crm.upsert_profile', { email: 'ada@example.com' }, 'try3'),
      done('Could not add Ada.'),
    ]);
    const runtime = testRuntime({
      planner,
      tools: [upsert, echoTool],
      caps: { maxRetriesPerTool: 1, maxConsecutiveFailedToolCalls: 10 },
    });

    const run = runtime.start({ messages: prompt });
    const outcome = await run.result();

    // One attempt plus one repair were spent; the third call is refused although it is valid.
    expect(execute).not.toHaveBeenCalled();
    const third = outcome.toolResults.find((r) => r.providerToolCallId === 'try3');
    expect(third).toMatchObject({ executed: false, retryHint: { reason: 'tool_unavailable' } });
    expect(third?.error).toBeInstanceOf(ToolError);
    expect(third?.error?.message).toContain('maxRetriesPerTool reached');
    expect(run.context.disabledTools).toEqual({ 'crm.upsert_profile': 'retry_cap' });
    expect(planner.calls[2]!.tools.map((t) => t.name)).toEqual(['crm.upsert_profile', 'util.echo']);
    expect(planner.calls[3]!.tools.map((t) => t.name)).toEqual(['util.echo']);
    expect(outcome.status).toBe('completed');
  });
});

/** A tool that takes `ms` to answer `{ ok: true }`. */
function slowTool(ms: number) {
  return defineTool({
    id: 'util.slow',
    description: 'Takes its time',
    input: z.object({}),
    execute: async () => {
      await sleep(ms);
      return { ok: true };
    },
  });
}

describe('timeBudgetMs', () => {
  it('bounds a planner call in flight: a planner that never answers is aborted and the run finalizes with time_budget', async () => {
    const first: { signal?: AbortSignal } = {};
    const planner = scriptedPlanner([hangingStep(first), done('Out of time; here is what I have.')]);
    // Long enough for the first planner call to start on a loaded machine: with 60 ms the budget
    // could run out before it, and the finalizing turn got the hanging step (20 s test timeout).
    const runtime = testRuntime({ planner, caps: { timeBudgetMs: 300 } });
    const started = Date.now();

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(Date.now() - started).toBeLessThan(2_000);
    expect(first.signal?.aborted).toBe(true);
    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('time_budget');
    expect(planner.calls[1]).toMatchObject({ tools: [], finalize: { reason: 'time_budget' } });
  });

  it('still ends a run whose planner never answers at all: failed with TimeBudgetError after the grace', async () => {
    const planner = scriptedPlanner([hangingStep({}), hangingStep({})]);
    const runtime = testRuntime({ planner, caps: { timeBudgetMs: 50 }, finalizeGraceMs: 50 });
    const started = Date.now();

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ name: 'TimeBudgetError', recoverable: false });
    expect(planner.calls).toHaveLength(2);
  });

  it('finalizes with time_budget when the budget ran out while tools ran, stopping the call at the budget (issue 24 item 6)', async () => {
    // The budget leaves a loaded machine time to start the call (40 ms did not, at load 12), and
    // the tool would outlive it by far.
    const slow = slowTool(2_000);
    const planner = scriptedPlanner([call('util.slow', {}), done()]);
    const runtime = testRuntime({ planner, tools: [slow], caps: { timeBudgetMs: 250 } });

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(outcome.finalizeReason).toBe('time_budget');
    expect(planner.calls[1]).toMatchObject({ finalize: { reason: 'time_budget' }, tools: [] });
    // The call was stopped at the budget, not waited for (its signal aborted).
    expect(outcome.toolResults[0]).toMatchObject({ executed: true, error: { recoverable: false } });
    expect(outcome.toolResults[0]?.error?.message).toMatch(/time budget ran out while util.slow was running/);
  });

  it('gives a finalizing turn that starts after the budget its full grace (a tool that ran long)', async () => {
    const slow = slowTool(300);
    const planner = scriptedPlanner([
      call('util.slow', {}),
      async () => {
        await sleep(30);
        return done('Ada is on pro.');
      },
    ]);
    const runtime = testRuntime({ planner, tools: [slow], caps: { timeBudgetMs: 50 }, finalizeGraceMs: 200 });

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('time_budget');
    expect(planner.calls[1]).toMatchObject({ finalize: { reason: 'time_budget' } });
  });

  it('does not count the time a person takes to answer: a late answer resumes the run, not its finalizing turn', async () => {
    const planner = scriptedPlanner([
      { await: { clarification: { id: 'q1', question: 'Which plan?', missingFields: ['plan'] } } },
      call('util.echo', { text: 'pro' }),
      done('Ada is on pro.'),
    ]);
    const runtime = testRuntime({ planner, tools: [echoTool], caps: { timeBudgetMs: 100 } });
    const run = runtime.start({ messages: prompt });
    await nextEvent(run, 'await_clarification');
    // The person answers long after the budget would have run out, had the wait counted.
    await sleep(300);
    await run.provideClarification({ id: 'q1', answer: 'pro' });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBeUndefined();
    expect((planner.calls[1] as { finalize?: unknown }).finalize).toBeUndefined();
    expect(planner.calls[1]!.tools.map((tool) => tool.name)).toContain('util.echo');
    const awaitedMs = run.context.flow.awaitedMs!;
    expect(awaitedMs).toBeGreaterThanOrEqual(290);
    expect(planner.calls[1]!.caps.deadlineAt).toBe(run.context.startedAt + 100 + awaitedMs);
  });

  it('waits correctly for budgets longer than setTimeout can (more than ~24.8 days)', async () => {
    const planner = scriptedPlanner([
      async () => {
        await sleep(20);
        return done('Fine.');
      },
    ]);
    const runtime = testRuntime({ planner, caps: { timeBudgetMs: 30 * 24 * 3_600_000 } });

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBeUndefined();
    expect(planner.calls).toHaveLength(1);
  });
});

describe('per-tool timeoutMs', () => {
  it('turns a call past its timeout into a timeout ToolResult and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const stuck = defineTool({
      id: 'util.stuck',
      description: 'Never returns',
      input: z.object({}),
      timeoutMs: 30,
      execute: (_, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
    });
    const planner = scriptedPlanner([call('util.stuck', {}, 'slow1'), done('It timed out.')]);
    const runtime = testRuntime({ planner, tools: [stuck] });

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(signal?.aborted).toBe(true);
    const [result] = outcome.toolResults;
    expect(result).toMatchObject({
      providerToolCallId: 'slow1',
      executed: true,
      retryHint: { reason: 'timeout', tool: 'util.stuck' },
    });
    expect(result?.error?.recoverable).toBe(true);
    expect(planner.calls[1]).toMatchObject({ toolResults: [{ providerToolCallId: 'slow1' }] });
    expect(outcome.status).toBe('completed');
  });
});
