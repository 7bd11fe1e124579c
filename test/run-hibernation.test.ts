/**
 * Hibernation by default on durable stores (issue 36 item 3; docs/durability.md §Hibernation): a
 * run waiting for an answer for `durable.hibernateAfterMs` (default 60 s on a durable store)
 * leaves memory; its handle stays valid, and answering, confirming, canceling or awaiting its
 * result restores it. On SQLite and PostgreSQL (gated as test/support/durable-stores.ts says).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { inspectorPlugin } from '../inspector/inspector-plugin.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { DEFAULT_HIBERNATE_AFTER_MS, hibernateAfter } from '../runtime/durable/durable-runs.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { durableStoreKinds, type StoreFixture } from './support/durable-stores.ts';

const kinds = (await durableStoreKinds('run hibernation (PostgreSQL)')).filter(
  (kind) => kind.name !== 'memory',
);
const ask = [{ role: 'user' as const, content: 'Refund order 42' }];

describe('durable.hibernateAfterMs', () => {
  it('is 60 s by default on a durable store, off on a volatile one, and false turns it off', () => {
    expect(DEFAULT_HIBERNATE_AFTER_MS).toBe(60_000);
    expect(hibernateAfter({}, { volatile: false })).toBe(60_000);
    expect(hibernateAfter({}, {})).toBe(60_000);
    expect(hibernateAfter({}, memoryStore())).toBeUndefined();
    expect(hibernateAfter({ hibernateAfterMs: false }, { volatile: false })).toBeUndefined();
    expect(hibernateAfter({ hibernateAfterMs: 5 }, memoryStore())).toBe(5);
    // The older name still works, for any store.
    expect(hibernateAfter({ evictAfterMs: 7 }, memoryStore())).toBe(7);
    expect(hibernateAfter({ hibernateAfterMs: 5, evictAfterMs: 7 }, {})).toBe(5);
    expect(() => hibernateAfter({ hibernateAfterMs: -1 }, {})).toThrow(RangeError);
    expect(() => hibernateAfter({ hibernateAfterMs: Number.NaN }, {})).toThrow(/hibernateAfterMs must be/);
  });
});

for (const kind of kinds) {
  describe.skipIf(kind.skip !== undefined)(
    `hibernation on the ${kind.name} store${kind.skip ? ` (${kind.skip})` : ''}`,
    () => {
      let fixture: StoreFixture | undefined;
      const runtimes: Runtime[] = [];
      afterEach(async () => {
        vi.useRealTimers();
        await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
        await fixture?.dispose();
        fixture = undefined;
      });

      async function runtimeOn(options: Partial<RuntimeOptions> = {}) {
        kind.require();
        fixture ??= await kind.fixture();
        const refunds: string[] = [];
        const refund = defineTool({
          id: 'shop.refund',
          description: 'Refunds an order',
          input: z.object({ order: z.number() }),
          execute: async ({ order }, { meta }) => {
            refunds.push(`${meta.toolCallId}:${order}`);
            return { refunded: order };
          },
        });
        const runtime = createRuntime({
          agent: { id: 'shop' },
          planner: scriptedPlanner([
            { await: { clarification: { id: 'which', question: 'Which order?', missingFields: ['order'] } } },
            { await: { confirmation: { id: 'sure', prompt: 'Refund it?' } } },
            { toolCalls: [{ name: 'shop.refund', input: { order: 42 } }] },
            { finalResponse: { text: 'Refunded 42.' } },
          ]),
          tools: [refund],
          store: fixture.open(),
          telemetry: false,
          ...options,
        });
        runtimes.push(runtime);
        return { runtime, refunds };
      }

      async function hibernated(runtime: Runtime, run: RunHandle, state: string): Promise<void> {
        await vi.waitFor(() => expect(run.state).toBe(state));
        await vi.waitFor(() => expect(runtime.get(run.runId)).toBeUndefined(), { timeout: 5_000 });
        expect(run.actor.getSnapshot().status).toBe('stopped');
      }

      it('hibernates a waiting run after 60 s by default; the handle stays valid and answering through it restores the run', async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
        const { runtime, refunds } = await runtimeOn();
        const run = runtime.start({ runId: 'h-default', messages: ask });
        const result = run.result();
        await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'));
        await run.persisted();
        await vi.advanceTimersByTimeAsync(DEFAULT_HIBERNATE_AFTER_MS - 1_000);
        expect(runtime.get('h-default')).toBe(run);
        await vi.advanceTimersByTimeAsync(2_000);
        vi.useRealTimers();
        await hibernated(runtime, run, 'awaiting.clarification');
        // What the app reads of a hibernated run, through the handle it kept.
        expect(run.status).toBe('awaiting');
        expect(run.awaiting).toMatchObject({ kind: 'clarification', id: 'which', question: 'Which order?' });

        await run.provideClarification({ id: 'which', answer: '42' });
        expect(runtime.get('h-default')).toBe(run);
        await vi.waitFor(() => expect(run.state).toBe('awaiting.confirmation'));
        await run.confirm({ id: 'sure', approved: true });
        const outcome = await result;
        expect(outcome.status).toBe('completed');
        expect(outcome.finalResponse?.text).toBe('Refunded 42.');
        expect(refunds).toEqual(['h-default:t3:c1:42']);
      });

      it('answers, confirms and completes a run hibernated at each wait; events keep flowing to the subscriber it had', async () => {
        const { runtime, refunds } = await runtimeOn({ durable: { hibernateAfterMs: 20 } });
        const run = runtime.start({ runId: 'h-events', messages: ask });
        const seen: RunEvent['type'][] = [];
        run.events$.subscribe((event) => seen.push(event.type));
        await hibernated(runtime, run, 'awaiting.clarification');
        // By id, from the runtime, as another part of the app would answer.
        await runtime.provideClarification('h-events', { id: 'which', answer: '42' });
        await hibernated(runtime, run, 'awaiting.confirmation');
        await runtime.confirm('h-events', { id: 'sure', approved: true, by: 'ops@example.com' });
        const outcome = await run.result();
        expect(outcome.status).toBe('completed');
        expect(refunds).toEqual(['h-events:t3:c1:42']);
        // One subscription saw the whole run: before, between and after both hibernations.
        expect(seen[0]).toBe('run_started');
        expect(seen.filter((type) => type === 'run_resumed')).toHaveLength(2);
        expect(seen).toContain('await_confirmation');
        expect(seen).toContain('tool_result');
        expect(seen.at(-1)).toBe('run_completed');
        await runtime.flush();
        const stored = (await runtime.store.readEvents('h-events')).map(
          (record) => (record.event as RunEvent).type,
        );
        expect(stored.filter((type) => type === 'run_started')).toHaveLength(1);
        expect(stored.at(-1)).toBe('run_completed');
      });

      it('cancels a hibernated run through its handle: the stored run ends canceled and result() says so', async () => {
        const { runtime, refunds } = await runtimeOn({ durable: { hibernateAfterMs: 20 } });
        const run = runtime.start({ runId: 'h-cancel', messages: ask });
        await hibernated(runtime, run, 'awaiting.clarification');
        run.cancel('customer left');
        const outcome = await run.result();
        expect(outcome.status).toBe('canceled');
        await runtime.flush();
        expect((await runtime.store.load('h-cancel'))?.status).toBe('canceled');
        expect(refunds).toEqual([]);
      });

      it('lists a hibernated run in the inspector as awaiting, and the same entry follows it once restored', async () => {
        const inspector = inspectorPlugin({ serve: false });
        const { runtime } = await runtimeOn({ durable: { hibernateAfterMs: 20 }, plugins: [inspector] });
        const run = runtime.start({ runId: 'h-inspect', messages: ask });
        await hibernated(runtime, run, 'awaiting.clarification');
        const listed = () => inspector.store.runs().filter((view) => view.runId === 'h-inspect');
        expect(listed().map((view) => view.status)).toEqual(['awaiting']);
        await run.provideClarification({ id: 'which', answer: '42' });
        await vi.waitFor(() => expect(run.state).toBe('awaiting.confirmation'));
        await run.confirm({ id: 'sure', approved: true });
        await run.result();
        await vi.waitFor(() => expect(listed().map((view) => view.status)).toEqual(['completed']));
      });
    },
  );
}
