/**
 * Issue 12, defect 4: runs whose planners answer at once chained every step of every run in one
 * run of microtasks, so no timer (a lease renewal, an HTTP request) ran until all were done: a
 * 17 s stall with 10,000 runs. Planner turns now start from the turn scheduler's macrotasks. The
 * stall itself is measured by `bench/event-loop.bench.ts`; this test checks the behaviour: a
 * timer gets its turn while the runs are still going.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { testRuntime } from '../run-fixtures.ts';

const add = defineTool({
  id: 'math.add',
  description: 'Adds',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => ({ sum: a + b }),
});

describe('many runs with instant planners', () => {
  it('leave the event loop its turns: a timer fires before the runs are done', async () => {
    const runtime = testRuntime({
      planner: {
        planStart: (input) => scriptedFor(input.runId).planStart(input),
        planResume: (input) => scriptedFor(input.runId).planResume(input),
      },
      tools: [add],
    });
    const scripts = new Map<string, ReturnType<typeof scriptedPlanner>>();
    function scriptedFor(runId: string) {
      let script = scripts.get(runId);
      if (!script) {
        script = scriptedPlanner([
          ...Array.from({ length: 20 }, (_, i) => ({
            toolCalls: [{ name: 'math.add', input: { a: i, b: 1 } }],
          })),
          { finalResponse: { text: 'done' } },
        ]);
        scripts.set(runId, script);
      }
      return script;
    }

    let ticks = 0;
    let ticksWhenDone: number | undefined;
    const timer = setInterval(() => ticks++, 0);
    const runs = Array.from({ length: 200 }, () => runtime.start({ messages: [] }));
    await Promise.all(runs.map((run) => run.result())).then(() => {
      ticksWhenDone = ticks;
    });
    clearInterval(timer);

    expect(runs.every((run) => run.status === 'completed')).toBe(true);
    expect(ticksWhenDone).toBeGreaterThan(0);
  });
});
