/**
 * Issue 12, defect 4: runs whose planners answer at once chained every step of every run in one
 * run of microtasks, so no timer (a lease renewal, an HTTP request) ran until all were done: a
 * 17 s stall with 10,000 runs. Planner turns now start from the turn scheduler's macrotasks. The
 * stall itself is measured by `bench/event-loop.bench.ts`; these tests check the behaviour: a
 * timer gets its turn while the runs are still going, and a durable store's writes are spread
 * over the event loop's turns too (SQLite's client writes synchronously: every run's first write
 * waited for the owner lease and then all ran back to back, a 12.6 s stall with 10,000 runs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../../run/planner.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
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

  it('on SQLite, spread the runs’ writes over the event loop’s turns instead of one burst', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-loop-'));
    const sqlite = sqliteStore({ path: join(dir, 'runs.db') });
    // Counts the writes made in each turn of the event loop: the most in one turn is the burst.
    let writesThisTurn = 0;
    let mostInOneTurn = 0;
    const counted = (write: () => void) => {
      write();
      writesThisTurn++;
      mostInOneTurn = Math.max(mostInOneTurn, writesThisTurn);
    };
    const store: RunStore = {
      ...sqlite,
      create: (run) => {
        let out!: ReturnType<RunStore['create']>;
        counted(() => {
          out = sqlite.create(run);
        });
        return out;
      },
      save: (runId, update) => {
        let out!: ReturnType<RunStore['save']>;
        counted(() => {
          out = sqlite.save(runId, update);
        });
        return out;
      },
    };
    // A new turn of the event loop resets the count (an immediate that queues itself again).
    let looping = true;
    const nextTurn = () => {
      writesThisTurn = 0;
      if (looping) setImmediate(nextTurn);
    };
    setImmediate(nextTurn);
    const runtime = testRuntime({
      planner: {
        planStart: async () => ({ toolCalls: [{ name: 'math.add', input: { a: 1, b: 1 } }] }),
        planResume: async () => ({ finalResponse: { text: 'done' } }),
      },
      tools: [add],
      store,
    });
    const count = 400;
    try {
      const runs = Array.from({ length: count }, () => runtime.start({ messages: [] }));
      await Promise.all(runs.map((run) => run.result()));
      await Promise.all(runs.map((run) => run.persisted()));
      expect(runs.every((run) => run.status === 'completed')).toBe(true);
      expect(mostInOneTurn).toBeGreaterThan(0);
      // Before: all 400 first writes in one turn of the loop, once the lease was in the store.
      expect(mostInOneTurn).toBeLessThan(count / 4);
    } finally {
      looping = false;
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
