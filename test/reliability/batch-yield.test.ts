/**
 * Issue 24 item 8: a 4,000-call batch never yielded: calls that answer at once started each other
 * in one chain of microtasks, and the event loop stalled 2.9 s (3.8 s here) until the batch was
 * done. The steps actor now lets the event loop run between slices of call starts
 * (machines/run-steps.ts `CALL_SLICE_MS`).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { testRuntime } from '../run-fixtures.ts';

describe('a large batch of calls that answer at once', () => {
  it('lets timers run between its calls', async () => {
    let executed = 0;
    const echo = defineTool({
      id: 'util.echo',
      description: 'Echoes',
      input: z.object({ text: z.string() }),
      execute: async ({ text }) => {
        executed++;
        return { text };
      },
    });
    const calls = Array.from({ length: 1_000 }, (_, i) => ({ name: 'util.echo', input: { text: `t${i}` } }));
    const run = testRuntime({
      planner: scriptedPlanner([{ toolCalls: calls }, { finalResponse: { text: 'done' } }]),
      tools: [echo],
      caps: { maxToolCalls: 10_000, maxCallsPerBatch: 10_000, timeBudgetMs: 120_000 },
    }).start({ messages: [{ role: 'user', content: 'echo 1,000 times' }] });
    // What a timer saw of the batch each time it fired.
    const seen: number[] = [];
    const timer = setInterval(() => seen.push(executed), 1);
    const outcome = await run.result();
    clearInterval(timer);

    expect(outcome.status).toBe('completed');
    expect(executed).toBe(1_000);
    const during = seen.filter((count) => count > 0 && count < 1_000);
    expect(during.length).toBeGreaterThan(0);
  });
});
