/**
 * A memory store keeps a run's own context objects, not a copy (docs/durability.md §Memory
 * store; issue 29 items 1 and 3). What a tool, a planner or the app is handed must then never be
 * those objects in a form they could change: these tests change everything they are handed and
 * check that the stored run did not move.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import type { RunEvent } from '../../run/run-events.ts';
import { memoryStore } from '../../stores/memory-store.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { testRuntime } from '../../test/run-fixtures.ts';
import { defineTool } from '../../tools/define-tool.ts';

/** Changes a value in place, everywhere it can: what an app or a tool "legitimately" might do. */
function scribble(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const members = value as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    try {
      scribble(members[key]);
      if (typeof members[key] !== 'object') members[key] = 'scribbled';
    } catch {
      // A frozen object refuses (strict mode): that is the point.
    }
  }
  if (Array.isArray(value)) {
    try {
      value.push('scribbled');
    } catch {}
  }
}

const tool = defineTool({
  id: 'app.order',
  description: 'Orders items',
  input: z.object({ items: z.array(z.object({ sku: z.string(), qty: z.number() })) }),
  output: z.object({ order: z.object({ id: z.string(), lines: z.array(z.string()) }) }),
  execute: async (input) => {
    const result = { order: { id: 'o-1', lines: input.items.map((item) => item.sku) } };
    // The tool changes its input, and later its own result, once the runtime has it.
    scribble(input);
    setTimeout(() => scribble(result), 0);
    return result;
  },
});

/** One tool call, then a final response with data; each turn scribbles over what it was handed. */
function scribblingPlanner() {
  let turn = 0;
  const plan = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    turn += 1;
    if (turn > 1) scribble(input);
    if (turn === 1) return { toolCalls: [{ name: 'app.order', input: { items: [{ sku: 'a', qty: 1 }] } }] };
    return { finalResponse: { text: 'ordered', data: { orderId: 'o-1', tags: ['x'] } } };
  };
  return { planStart: plan, planResume: plan };
}

async function storedRun(store: RunStore, runId: string) {
  const run = await store.load(runId);
  const events = (await store.readEvents(runId)).map((record) => record.event);
  return { snapshot: run?.snapshot, labels: run?.labels, events };
}

describe('a memory store keeps the run’s own context', () => {
  it('what a tool, the planner and the app are handed cannot change the stored run', async () => {
    const store = memoryStore();
    const runtime = testRuntime({ store, planner: scribblingPlanner(), tools: [tool] });
    const labels = { tenant: 'acme' };
    const messages = [{ role: 'user' as const, content: 'order a' }];
    const events: RunEvent[] = [];
    const run = runtime.start({ runId: 'r-shared', labels, messages });
    run.events$.subscribe((event) => events.push(event));
    const outcome = await run.result();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const before = structuredClone(await storedRun(store, 'r-shared'));
    expect(outcome.status).toBe('completed');
    expect(before.snapshot).toMatchObject({ context: { labels: { tenant: 'acme' } } });

    // The app changes what it gave and everything it got back.
    labels.tenant = 'scribbled';
    messages[0]!.content = 'scribbled';
    scribble(outcome);
    for (const event of events) scribble(event);
    scribble(run.awaiting);

    expect(await storedRun(store, 'r-shared')).toStrictEqual(before);
    const context = (before.snapshot as { context: { messages: { content?: unknown }[] } }).context;
    expect(context.messages[0]!.content).toBe('order a');
    expect(JSON.stringify(before)).not.toContain('scribbled');
    // The app's own arrays are its own: the transcript takes a push.
    expect(outcome.transcript.at(-1)).toBe('scribbled');
    expect(outcome.finalResponse?.data).toEqual({ orderId: 'scribbled', tags: ['scribbled', 'scribbled'] });
  });

  it('the outcome’s messages are read-only: a change throws', async () => {
    const runtime = testRuntime({ planner: scribblingPlanner(), tools: [tool] });
    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'order a' }] }).result();
    const call = outcome.transcript.find((message) => message.role === 'assistant' && message.toolCalls);
    const input = (call as { toolCalls: { input: { items: { qty: number }[] } }[] }).toolCalls[0]!.input;

    expect(() => {
      input.items[0]!.qty = 99;
    }).toThrow(TypeError);
    expect(() => {
      (outcome.transcript[0] as { content: string }).content = 'x';
    }).toThrow(TypeError);
  });
});
