import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import { appendHints, HINT_WINDOW, MAX_HINTS } from './hint-window.ts';

const hint = (n: number) => ({ toolCallId: `c${n}` }) as PolicyRetryHint;
const ids = (hints: PolicyRetryHint[]) => hints.map((h) => h.toolCallId);

describe('appendHints', () => {
  it('appends until MAX_HINTS, then keeps the newest HINT_WINDOW', () => {
    let hints: PolicyRetryHint[] = [];
    for (let n = 1; n <= MAX_HINTS; n++) hints = appendHints(hints, [hint(n)]);
    expect(hints).toHaveLength(MAX_HINTS);
    hints = appendHints(hints, [hint(MAX_HINTS + 1)]);
    expect(ids(hints)).toEqual(
      Array.from({ length: HINT_WINDOW }, (_, i) => `c${MAX_HINTS + 2 - HINT_WINDOW + i}`),
    );
  });

  it('keeps the newest HINT_WINDOW of one batch larger than the window, and the same list for none', () => {
    const batch = Array.from({ length: 4_000 }, (_, i) => hint(i));
    expect(ids(appendHints([hint(-1)], batch))).toEqual(ids(batch.slice(-HINT_WINDOW)));
    const kept = [hint(1)];
    expect(appendHints(kept, [])).toBe(kept);
  });
});

describe('a run with many refused calls', () => {
  it('keeps a bounded window of hints in its context and its stored snapshot, and counts every failure per tool', async () => {
    const echo = defineTool({
      id: 'util.echo',
      description: 'Echo',
      input: z.object({ text: z.string() }),
      execute: async ({ text }) => ({ text }),
    });
    // 150 turns of one refused call each (a number where a string belongs), then an answer.
    const steps = Array.from({ length: 150 }, (_, n) => ({
      toolCalls: [{ name: 'util.echo', input: { text: n } }],
    }));
    const runtime = createRuntime({
      agent: { id: 'a' },
      telemetry: false,
      tools: [echo],
      planner: scriptedPlanner([...steps, { finalResponse: { text: 'gave up' } }]),
      caps: {
        maxToolCalls: 1_000,
        maxConsecutiveFailedToolCalls: 1_000,
        maxRetriesPerTool: 1_000,
        maxTurns: 1_000,
      },
    });
    const run = runtime.start({ runId: 'r-hints', messages: [{ role: 'user', content: 'echo' }] });
    const outcome = await run.result();
    expect(outcome.error).toBeUndefined();
    expect(outcome.status).toBe('completed');
    expect(run.context.hints.length).toBeGreaterThanOrEqual(HINT_WINDOW);
    expect(run.context.hints.length).toBeLessThanOrEqual(MAX_HINTS);
    expect(run.context.hints.at(-1)?.toolCallId).toBe('r-hints:t150:c1');
    expect(run.context.toolStats['util.echo']).toMatchObject({ calls: 150, failures: 150 });
    const stored = (await runtime.store.load('r-hints'))!;
    expect((stored.snapshot as { context: { hints: unknown[] } }).context.hints.length).toBeLessThanOrEqual(
      MAX_HINTS,
    );
    await runtime.close();
  });
});
