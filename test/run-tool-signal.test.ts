/**
 * A tool call's AbortSignal (`ctx.signal`, and the hooks' `call.signal`) is made only when read
 * (issue 29 item 1: a controller, its signal and a listener were ~3.8 µs of every call): what a
 * tool or hook sees of it must not change. Read late, it is aborted already, with the reason it
 * would have had; a hook may hand on a signal of its own, by assignment or in a copy of the call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../plugins/define-plugin.ts';
import { type PlanInput, scriptedPlanner } from '../run/planner.ts';
import { memoryStore } from '../stores/memory-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import type { ToolContext } from '../tools/define-tool.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolTimeoutError } from '../tools/tool-error.ts';
import { call, deferred, done, reachState, testRuntime } from './run-fixtures.ts';
import { abortableTool } from './support/abortable-tool.ts';

const prompt = [{ role: 'user' as const, content: 'Do it' }];
const Native = globalThis.AbortController;

afterEach(() => {
  globalThis.AbortController = Native;
});

/** Counts the AbortControllers made from now on (the runtime's code reads the global). */
function countControllers(): { made: number } {
  const count = { made: 0 };
  globalThis.AbortController = class extends Native {
    constructor() {
      super();
      count.made++;
    }
  };
  return count;
}

describe("a tool call's signal", () => {
  it('is not made for calls that never read it', async () => {
    const add = defineTool({
      id: 'math.add',
      description: 'Adds',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => a + b,
    });
    const planner = scriptedPlanner([
      call('math.add', { a: 1, b: 2 }),
      call('math.add', { a: 3, b: 4 }),
      call('math.add', { a: 5, b: 6 }),
      done('7, 11'),
    ]);
    const count = countControllers();
    const outcome = await testRuntime({ planner, tools: [add] })
      .start({ messages: prompt })
      .result();
    expect(outcome.toolResults.map((result) => result.result)).toEqual([3, 7, 11]);
    expect(count.made).toBe(0);
  });

  it('read after the call timed out is aborted, with the timeout as its reason', async () => {
    const held = deferred<ToolContext>();
    const late = deferred();
    const slow = defineTool({
      id: 'util.slow',
      description: 'Ignores its signal',
      input: z.object({}),
      timeoutMs: 20,
      execute: async (_, ctx) => {
        held.resolve(ctx);
        await late.promise;
        return 'late';
      },
    });
    const planner = scriptedPlanner([call('util.slow', {}), done('gave up')]);
    const outcome = await testRuntime({ planner, tools: [slow] })
      .start({ messages: prompt })
      .result();
    expect(outcome.toolResults[0]?.retryHint?.reason).toBe('timeout');
    const ctx = await held.promise;
    expect(ctx.signal.aborted).toBe(true);
    expect(ToolTimeoutError.is(ctx.signal.reason)).toBe(true);
    late.resolve();
  });

  it('aborts when the run is canceled, also when a hook handed on a copy of the call', async () => {
    const started = deferred<AbortSignal>();
    const waits = defineTool({
      id: 'util.wait',
      description: 'Runs until aborted',
      input: z.object({}),
      execute: (_, ctx) => {
        started.resolve(ctx.signal);
        return new Promise(() => {});
      },
    });
    const copier = definePlugin({ name: 'copier', wrapToolCall: (c, next) => next({ ...c }) });
    const planner = scriptedPlanner([call('util.wait', {}), done('stopped')]);
    const run = testRuntime({ planner, tools: [waits], plugins: [copier] }).start({ messages: prompt });
    await reachState(run, 'executing');
    const signal = await started.promise;
    expect(signal.aborted).toBe(false);
    run.cancel('enough');
    expect((await run.result()).status).toBe('canceled');
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
  });

  it("is the hook's own when a hook assigns one to the call", async () => {
    const mine = new AbortController();
    const assigning = definePlugin({
      name: 'assigning',
      wrapToolCall(c, next) {
        c.signal = mine.signal;
        setTimeout(() => mine.abort(new Error('stopped by the hook')), 5);
        return next(c);
      },
    });
    const { tool: waits } = abortableTool();
    const planner = scriptedPlanner([call('util.wait', {}), done('stopped')]);
    const outcome = await testRuntime({ planner, tools: [waits], plugins: [assigning] })
      .start({ messages: prompt })
      .result();
    expect(outcome.toolResults[0]).toMatchObject({
      executed: true,
      error: { message: 'stopped by the hook' },
    });
  });

  describe('on a durable store (the write-ahead gate: a call runs once its record is written)', () => {
    /** A memory store that says it is durable, whose `save` can be held. */
    function durableStore() {
      const inner = memoryStore();
      const hold = { on: false, released: deferred() };
      const store: RunStore = {
        ...inner,
        volatile: false,
        save: async (...args) => {
          if (hold.on) await hold.released.promise;
          return inner.save(...args);
        },
      };
      return { store, hold };
    }
    const marking = () => {
      const ran: string[] = [];
      const tool = defineTool({
        id: 'util.mark',
        description: 'Marks',
        input: z.object({ n: z.number() }),
        execute: ({ n }) => {
          ran.push(`mark ${n}`);
          return n;
        },
      });
      return { tool, ran };
    };

    it('waits for the record without making a signal', async () => {
      const { store } = durableStore();
      const { tool, ran } = marking();
      const planner = scriptedPlanner([call('util.mark', { n: 1 }), call('util.mark', { n: 2 }), done('ok')]);
      const count = countControllers();
      const outcome = await testRuntime({ planner, tools: [tool], store })
        .start({ messages: prompt })
        .result();
      expect(outcome.status).toBe('completed');
      expect(ran).toEqual(['mark 1', 'mark 2']);
      expect(count.made).toBe(0);
    });

    it('a cancel while the call waits for its record stops it before it runs', async () => {
      const { store, hold } = durableStore();
      const { tool, ran } = marking();
      hold.on = true;
      const planner = scriptedPlanner([call('util.mark', { n: 1 }), done('ok')]);
      const run = testRuntime({ planner, tools: [tool], store }).start({ messages: prompt });
      await reachState(run, 'executing');
      run.cancel('enough');
      expect((await run.result()).status).toBe('canceled');
      hold.released.resolve();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(ran).toEqual([]);
    });
  });

  it("is in a copy of the call's context a tool makes, and Object.keys lists it", async () => {
    let copied: { signal?: AbortSignal } = {};
    let keys: string[] = [];
    const copying = defineTool({
      id: 'util.copy',
      description: 'Copies its context',
      input: z.object({}),
      execute: (_, ctx) => {
        copied = { ...ctx };
        keys = Object.keys(ctx);
        return 'ok';
      },
    });
    const planner = scriptedPlanner([call('util.copy', {}), done('ok')]);
    await testRuntime({ planner, tools: [copying] })
      .start({ messages: prompt })
      .result();
    expect(copied.signal).toBeInstanceOf(AbortSignal);
    expect(keys.sort()).toEqual(['idempotencyKey', 'labels', 'meta', 'signal']);
  });
});

describe("a planner turn's signal", () => {
  it('is in a copy of the input a planner makes, and aborts when the run is canceled', async () => {
    const seen = deferred<AbortSignal | undefined>();
    const planner = {
      planStart: (input: PlanInput) => {
        seen.resolve({ ...input }.signal);
        return new Promise<never>(() => {});
      },
      planResume: async () => done('never'),
    };
    const run = testRuntime({ planner }).start({ messages: prompt });
    const signal = await seen.promise;
    expect(signal).toBeInstanceOf(AbortSignal);
    run.cancel('enough');
    expect((await run.result()).status).toBe('canceled');
    expect(signal?.aborted).toBe(true);
  });
});
