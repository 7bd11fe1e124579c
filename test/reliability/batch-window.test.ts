/**
 * Issue 12, defect 9: a batch's cost grew with the square of its calls (1,000 calls in one batch
 * took 2.4 s, 4,000 took 11.6 s): every call was a child actor started at once, and XState copies
 * a machine's children at each spawn and stop and persists all of them with every snapshot. Calls
 * now run in a window of MAX_PARALLEL_TOOL_CALLS (docs/architecture.md §Executing), each result
 * starting the next, inside the run's one `steps` actor (no child actor per call); these tests
 * hold the window (never more calls running than it, one child whatever the batch) and what it must
 * keep: every call runs once, results pair with calls in order, and a restored run finishes the
 * batch without running a call twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { MAX_PARALLEL_TOOL_CALLS } from '../../machines/run-steps.ts';
import type { Planner } from '../../run/planner.ts';
import { createRuntime, type Runtime } from '../../runtime/create-runtime.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { testRuntime } from '../run-fixtures.ts';

/** A tool that records how many of its calls run at once; `hold()` keeps calls from finishing. */
function countingTool() {
  let running = 0;
  let gate: Promise<void> | undefined;
  let open = () => {};
  const seen = { maxRunning: 0, calls: [] as string[] };
  const tool = defineTool({
    id: 'math.square',
    description: 'Squares a number',
    input: z.object({ n: z.number() }),
    readOnly: true, // run again after a restore (docs/durability.md §Effects)
    execute: async ({ n }, { meta }) => {
      seen.calls.push(meta.toolCallId);
      running++;
      seen.maxRunning = Math.max(seen.maxRunning, running);
      try {
        await (gate ?? new Promise((resolve) => setTimeout(resolve, 1)));
        return { square: n * n };
      } finally {
        running--;
      }
    },
  });
  const hold = () => {
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    return () => {
      gate = undefined;
      open();
    };
  };
  return { tool, seen, hold, running: () => running };
}

/** One batch of `n` calls, then the answer (a resumed run asks `planResume`). */
const batchOf = (n: number): Planner => ({
  planStart: async () => ({
    toolCalls: Array.from({ length: n }, (_, i) => ({ name: 'math.square', input: { n: i } })),
  }),
  planResume: async () => ({ finalResponse: { text: 'squared' } }),
});

const childCount = (snapshot: { children: Record<string, unknown> }) => Object.keys(snapshot.children).length;

describe('a large batch runs in a window of MAX_PARALLEL_TOOL_CALLS', () => {
  it('never runs or holds more calls at once than the window, and pairs every result in order', async () => {
    const { tool, seen } = countingTool();
    const calls = MAX_PARALLEL_TOOL_CALLS * 3 + 5;
    const run = testRuntime({ planner: batchOf(calls), tools: [tool], caps: { maxToolCalls: 1_000 } }).start({
      messages: [{ role: 'user', content: 'square them' }],
    });
    let maxChildren = 0;
    run.actor.subscribe((snapshot) => {
      maxChildren = Math.max(maxChildren, childCount(snapshot));
    });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(seen.maxRunning).toBe(MAX_PARALLEL_TOOL_CALLS);
    expect(maxChildren).toBe(1);
    expect(new Set(seen.calls).size).toBe(calls);
    const results = outcome.toolResults.map((result) => result.result);
    expect(results).toEqual(Array.from({ length: calls }, (_, i) => ({ square: i * i })));
    const toolMessages = outcome.transcript.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.role === 'tool' && message.toolCallId)).toEqual(
      Array.from({ length: calls }, (_, i) => `${run.runId}:t1:c${i + 1}`),
    );
  });

  it('starts the whole of a batch within the window at once', async () => {
    const { tool, seen } = countingTool();
    const outcome = await testRuntime({ planner: batchOf(5), tools: [tool] })
      .start({ messages: [{ role: 'user', content: 'square them' }] })
      .result();
    expect(outcome.status).toBe('completed');
    expect(seen.maxRunning).toBe(5);
  });

  describe('restored from a store in the middle of a large batch', () => {
    let dir: string | undefined;
    const runtimes: Runtime[] = [];
    afterEach(async () => {
      await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('runs the calls that were running again, then the rest, each once', async () => {
      dir = mkdtempSync(join(tmpdir(), 'tw-window-'));
      const path = join(dir, 'runs.db');
      const calls = MAX_PARALLEL_TOOL_CALLS + 8;
      const first = countingTool();
      const release = first.hold();
      /** A process on the database file: its own runtime and tool. */
      const processWith = (tool: ReturnType<typeof countingTool>['tool']) =>
        createRuntime({
          agent: { id: 'window' },
          planner: batchOf(calls),
          tools: [tool],
          caps: { maxToolCalls: 1_000 },
          store: sqliteStore({ path }),
          telemetry: false,
        });
      const a = processWith(first.tool);
      runtimes.push(a);
      const run = a.start({ runId: 'run-window', messages: [{ role: 'user', content: 'square them' }] });
      await vi.waitFor(() => expect(first.running()).toBe(MAX_PARALLEL_TOOL_CALLS));
      await a.close(); // stops mid-batch: the stored state is `executing` with the window's calls
      release();
      expect(new Set(first.seen.calls).size).toBe(MAX_PARALLEL_TOOL_CALLS);

      const second = countingTool();
      const b = processWith(second.tool);
      runtimes.push(b);
      const resumed = await b.resume(run.runId);
      const outcome = await resumed.result();

      expect(outcome.status).toBe('completed');
      // The 32 interrupted calls ran again with the same keys, then the 8 never started: each once.
      expect(second.seen.calls).toHaveLength(calls);
      expect(new Set(second.seen.calls).size).toBe(calls);
      expect(second.seen.calls.slice(0, MAX_PARALLEL_TOOL_CALLS).sort()).toEqual(
        [...first.seen.calls].sort(),
      );
      expect(second.seen.maxRunning).toBeLessThanOrEqual(MAX_PARALLEL_TOOL_CALLS);
      expect(outcome.toolResults.map((result) => result.result)).toEqual(
        Array.from({ length: calls }, (_, i) => ({ square: i * i })),
      );
    });
  });
});
