import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { allEvents, done, sleep, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Look both up' }];

const waitTool = defineTool({
  id: 'util.wait',
  description: 'Waits `ms` milliseconds, then answers with its label',
  input: z.object({ ms: z.number(), label: z.string() }),
  execute: async ({ ms, label }) => {
    const startedAt = Date.now();
    await sleep(ms);
    return { label, startedAt, finishedAt: Date.now() };
  },
});

describe('a batch of tool calls', () => {
  it('runs its calls in parallel: two 50 ms tools take about 50 ms, not 100', async () => {
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'util.wait', toolCallId: 'p1', input: { ms: 50, label: 'first' } },
          { name: 'util.wait', toolCallId: 'p2', input: { ms: 50, label: 'second' } },
        ],
      },
      done(),
    ]);
    const run = testRuntime({ planner, tools: [waitTool] }).start({ messages: prompt });

    const outcome = await run.result();
    const events = await allEvents(run);
    const scheduled = events.find((e) => e.type === 'tool_call_scheduled')!.at;
    const lastResult = events.filter((e) => e.type === 'tool_result').at(-1)!.at;

    expect(outcome.toolResults.map((r) => r.executed)).toEqual([true, true]);
    expect(lastResult - scheduled).toBeGreaterThanOrEqual(45);
    // In parallel: each call started before the other finished (one after the other, the second
    // would start after the first's 50 ms). Not a bound on the batch's time, which a loaded
    // machine's timer latency crosses (130 ms at load 10 for an < 90 ms bound).
    const [first, second] = outcome.toolResults.map(
      (r) => r.result as { startedAt: number; finishedAt: number },
    );
    expect(second!.startedAt).toBeLessThan(first!.finishedAt);
    expect(first!.startedAt).toBeLessThan(second!.finishedAt);
  });

  it('merges results in call order even when the second call finishes first', async () => {
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'util.wait', toolCallId: 'slow', input: { ms: 60, label: 'slow' } },
          { name: 'util.wait', toolCallId: 'fast', input: { ms: 5, label: 'fast' } },
        ],
      },
      done(),
    ]);
    const run = testRuntime({ planner, tools: [waitTool] }).start({ messages: prompt });

    const outcome = await run.result();
    const events = await allEvents(run);

    // Completion order, as the events report it: the fast call first.
    expect(events.flatMap((e) => (e.type === 'tool_result' ? [e.result.providerToolCallId] : []))).toEqual([
      'fast',
      'slow',
    ]);
    // Call order in what the planner is given and in the transcript.
    const resumed = planner.calls[1]!;
    expect('toolResults' in resumed && resumed.toolResults.map((r) => r.providerToolCallId)).toEqual([
      'slow',
      'fast',
    ]);
    expect(outcome.transcript.flatMap((m) => (m.role === 'tool' ? [m.providerToolCallId] : []))).toEqual([
      'slow',
      'fast',
    ]);
    const finishedAt = (index: number) =>
      'toolResults' in resumed
        ? (resumed.toolResults[index]!.result as { finishedAt: number }).finishedAt
        : 0;
    expect(finishedAt(0)).toBeGreaterThan(finishedAt(1));
  });

  it("gives calls whose planner repeats an id (a provider's call_0) distinct run ids, keeping the planner's for the transcript", async () => {
    const planner = scriptedPlanner([
      {
        toolCalls: [
          { name: 'util.wait', toolCallId: 'dup', input: { ms: 20, label: 'one' } },
          { name: 'util.wait', toolCallId: 'dup', input: { ms: 1, label: 'two' } },
        ],
      },
      done(),
    ]);
    const run = testRuntime({ planner, tools: [waitTool] }).start({ runId: 'run-dup', messages: prompt });

    const outcome = await run.result();

    expect(outcome.toolResults.map((r) => r.toolCallId).sort()).toEqual(['run-dup:t1:c1', 'run-dup:t1:c2']);
    const resumed = planner.calls[1]!;
    expect(
      'toolResults' in resumed &&
        resumed.toolResults.map((r) => [
          r.toolCallId,
          r.providerToolCallId,
          (r.result as { label: string }).label,
        ]),
    ).toEqual([
      ['run-dup:t1:c1', 'dup', 'one'],
      ['run-dup:t1:c2', 'dup', 'two'],
    ]);
    const assistant = outcome.transcript[1];
    expect(
      assistant?.role === 'assistant' &&
        assistant.toolCalls?.map((c) => [c.toolCallId, c.providerToolCallId]),
    ).toEqual([
      ['run-dup:t1:c1', 'dup'],
      ['run-dup:t1:c2', 'dup'],
    ]);
    const toolMessages = outcome.transcript.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.role === 'tool' && [m.toolCallId, m.providerToolCallId])).toEqual([
      ['run-dup:t1:c1', 'dup'],
      ['run-dup:t1:c2', 'dup'],
    ]);
  });

  it('stops each finished tool actor, so done children do not pile up in the snapshot', async () => {
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'util.wait', input: { ms: 1, label: 'a' } }] },
      { toolCalls: [{ name: 'util.wait', input: { ms: 1, label: 'b' } }] },
      () => {
        const children = Object.keys(run.actor.getSnapshot().children);
        expect(children.filter((id) => id.startsWith('tool.'))).toEqual([]);
        return done();
      },
    ]);
    const run = testRuntime({ planner, tools: [waitTool] }).start({ messages: prompt });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(planner.calls).toHaveLength(3);
  });
});
