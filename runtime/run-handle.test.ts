import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { firstValueFrom, Observable } from 'rxjs';
import { take, toArray } from 'rxjs/operators';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { memoryStore } from '../stores/memory-store.ts';
import type { NewRunEvent, RunStore } from '../stores/run-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createRuntime } from './create-runtime.ts';

const add = defineTool({
  id: 'math.add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  output: z.object({ sum: z.number() }),
  execute: async ({ a, b }) => ({ sum: a + b }),
});

/** A memory store that records every event object it is given to keep. */
function recordingStore(): { store: RunStore; given: unknown[] } {
  const inner = memoryStore();
  const given: unknown[] = [];
  const record = (events: NewRunEvent[] | undefined) => {
    for (const { event } of events ?? []) given.push(event);
  };
  const store: RunStore = {
    ...inner,
    create: (run) => {
      record(run.events);
      return inner.create(run);
    },
    save: (runId, update) => {
      record(update.events);
      return inner.save(runId, update);
    },
  };
  return { store, given };
}

function twoStepRun(store: RunStore) {
  const runtime = createRuntime({
    agent: { id: 'adder' },
    store,
    tools: [add],
    planner: scriptedPlanner([
      { toolCalls: [{ name: 'math.add', toolCallId: 'c1', input: { a: 1, b: 2 } }] },
      { toolCalls: [{ name: 'math.add', toolCallId: 'c2', input: { a: 3, b: 4 } }] },
      { finalResponse: { text: 'done' } },
    ]),
  });
  return { runtime, run: runtime.start({ messages: [{ role: 'user', content: 'Add' }] }) };
}

describe('RunHandle events$', () => {
  it("is an Observable of the app's own rxjs (loaded on first use, the very class `import 'rxjs'` gives)", async () => {
    const { runtime, run } = twoStepRun(recordingStore().store);
    await run.result();
    expect(run.events$).toBeInstanceOf(Observable);
    await runtime.close();
  });

  it('replays the very event objects the memory store keeps: one copy of each event per run', async () => {
    const { store, given } = recordingStore();
    const { runtime, run } = twoStepRun(store);
    await run.result();

    const replayed = await firstValueFrom(run.events$.pipe(toArray()));

    expect(replayed.length).toBeGreaterThan(10);
    expect(replayed.map((event) => event.type)).toContain('tool_result');
    // The same objects, not equal copies: the store keeps what it is given (immutable copies).
    expect(replayed).toHaveLength(given.length);
    for (const [index, event] of replayed.entries()) expect(event).toBe(given[index]);
    await runtime.close();
  });

  it('keeps on a memory store the very objects the run emitted, frozen, not copies of them', async () => {
    const { store, given } = recordingStore();
    const { runtime, run } = twoStepRun(store);
    const emitted: unknown[] = [];
    // After the runtime's own listener: it gets each event first, as the store will keep it.
    run.actor.on('*', (event) => emitted.push(event));
    await run.result();

    const results = emitted.filter((event) => (event as RunEvent).type === 'tool_result');
    expect(results).toHaveLength(2);
    for (const event of results) {
      expect(given).toContain(event);
      expect(Object.isFrozen((event as Extract<RunEvent, { type: 'tool_result' }>).result)).toBe(true);
    }
    await runtime.close();
  });

  it('still gives the outcome every tool result, in order, from the replayed events', async () => {
    const { store } = recordingStore();
    const { runtime, run } = twoStepRun(store);

    const outcome = await run.result();

    expect(outcome.toolResults.map((result) => [result.providerToolCallId, result.result])).toEqual([
      ['c1', { sum: 3 }],
      ['c2', { sum: 7 }],
    ]);
    await runtime.close();
  });

  it('gives a subscriber an event published during its replay once, after the ones before it', async () => {
    const runtime = createRuntime({
      agent: { id: 'asker' },
      planner: scriptedPlanner([
        { await: { clarification: { id: 'q', question: 'Which numbers?', missingFields: ['a'] } } },
      ]),
    });
    const run = runtime.start({ messages: [{ role: 'user', content: 'Add' }] });
    while (run.awaiting === null) await new Promise((resolve) => setTimeout(resolve, 5));
    const before = await firstValueFrom(run.events$.pipe(take(4), toArray()));
    const note: RunEvent = { type: 'planner_note', runId: run.runId, at: Date.now(), turnId: 't', note: 'n' };

    const seen: RunEvent[] = [];
    run.events$.subscribe((event) => {
      seen.push(event);
      if (seen.length === 1) run.publish(note);
    });

    expect(seen.slice(0, 4)).toEqual(before);
    expect(seen.filter((event) => event === note)).toHaveLength(1);
    expect(seen.at(-1)).toBe(note);
    run.cancel();
    await run.result();
    await runtime.close();
  });
});

describe('RunHandle: what a run keeps for its handle (issue 29 item 3)', () => {
  function awaitingRun() {
    const runtime = createRuntime({
      agent: { id: 'asker' },
      telemetry: false,
      planner: scriptedPlanner([
        { await: { clarification: { id: 'q', question: 'Which?', missingFields: ['a'] } } },
        { finalResponse: { text: 'done' } },
      ]),
    });
    return { runtime, run: runtime.start({ messages: [{ role: 'user', content: 'Hi' }] }) };
  }
  const observersOf = (run: { actor: unknown }) => (run.actor as { observers: Set<unknown> }).observers.size;

  it('does not observe its actor (the runtime settles it) and makes no promise nor subject until asked', async () => {
    const { runtime, run } = awaitingRun();
    await run.persisted();
    const internals = run as unknown as { outcome?: unknown; subjects?: unknown };

    // The runtime's own observer only; the handle added none.
    expect(observersOf(run)).toBe(1);
    expect(internals.outcome).toBeUndefined();
    expect(internals.subjects).toBeUndefined();
    await run.provideClarification({ id: 'q', answer: 'this' });
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'done' } });
    expect(run.result()).toBe(run.result());
    await runtime.close();
  });

  it('answers result() asked before the end, after the end, and events$ subscribed after the end', async () => {
    const { runtime, run } = awaitingRun();
    const early = run.result();
    const live = firstValueFrom(run.events$.pipe(toArray()));
    await run.persisted();
    await run.provideClarification({ id: 'q', answer: 'this' });
    const [outcome, events] = await Promise.all([early, live]);
    const late = await firstValueFrom(run.events$.pipe(toArray()));

    expect(outcome.status).toBe('completed');
    expect(late).toEqual(events);
    expect(events.at(-1)?.type).toBe('run_completed');
    await runtime.close();
  });
});

describe('a hosted run', () => {
  it('keeps nothing of what the app gave `start` but its own copies while it waits', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const runtime = createRuntime({
      agent: { id: 'asker' },
      telemetry: false,
      planner: scriptedPlanner([
        { await: { clarification: { id: 'q', question: 'Which?', missingFields: ['a'] } } },
      ]),
    });
    const started = (() => {
      const messages = [{ role: 'user' as const, content: 'Hi' }];
      return {
        run: runtime.start({ messages, labels: { tenant: 'acme' } }),
        messages: new WeakRef(messages),
      };
    })();
    await started.run.persisted();
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }

    // XState keeps an actor's input for its life: the host lets go of it once the actor started.
    expect(started.messages.deref()).toBeUndefined();
    expect(started.run.context.messages[0]).toEqual({ role: 'user', content: 'Hi' });
    await runtime.close();
  });
});
