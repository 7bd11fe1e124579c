import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { definePolicy } from '../policies/define-policy.ts';
import type { Message } from '../run/message.ts';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { RunConflictError, RunPersistenceError } from '../runtime/durable/durable-errors.ts';
import type { PersistedWrite } from '../runtime/durable/run-persister.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import type { RunStore } from '../stores/run-store.ts';
import { RunNotFoundError } from '../stores/run-store-errors.ts';
import { defineTool } from '../tools/define-tool.ts';
import { durableStoreKinds, flakyStore, type StoreFixture } from './support/durable-stores.ts';

/**
 * Durable runs at the runtime level (issue 7), against every store: memory, SQLite, PostgreSQL.
 * A "process" is a runtime; a "restart" is a new runtime on a new store connection to the same
 * database.
 */

const kinds = await durableStoreKinds('durable runtime (PostgreSQL)');

/** Applied ledger entries by toolCallId: what a side-effecting tool did, and how many times it was asked. */
function crm() {
  const applied = new Map<string, { email: string; plan: string }>();
  const calls: string[] = [];
  let gate: Promise<void> | undefined;
  const upsert = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.string(), plan: z.enum(['free', 'pro']) }),
    output: z.object({ id: z.string() }),
    // Re-run after a crash under the same key: it applies nothing twice (docs/durability.md §Effects).
    idempotent: true,
    execute: async (input, { meta }) => {
      calls.push(meta.toolCallId);
      await gate;
      // Idempotent by its key: a call run again applies nothing twice.
      if (!applied.has(meta.toolCallId)) applied.set(meta.toolCallId, input);
      return { id: `profile-${input.email}` };
    },
  });
  return {
    upsert,
    applied,
    calls,
    /** Holds every call until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise((resolve) => {
        open = resolve;
      });
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

/**
 * A planner that decides from the transcript alone (so a restarted runtime can take over): asks
 * which plan, then upserts the profile, then answers.
 */
function supportPlanner(): Planner & { turns: string[] } {
  const turns: string[] = [];
  const decide = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    turns.push(input.turnId);
    const last = input.messages[input.messages.length - 1] as Message;
    if ('finalize' in input && input.finalize) return { finalResponse: { text: 'Stopped early.' } };
    if (last.role === 'tool') return { finalResponse: { text: 'Ada is on the pro plan.' } };
    if (input.messages.length === 1) {
      return {
        await: {
          clarification: { id: 'which-plan', question: 'Which plan for ada?', missingFields: ['plan'] },
        },
      };
    }
    return {
      toolCalls: [
        {
          name: 'crm.upsert_profile',
          toolCallId: 'call-upsert',
          input: { email: 'ada@example.com', plan: 'pro' },
        },
      ],
    };
  };
  return { turns, planStart: decide, planResume: decide };
}

const ask: Message[] = [{ role: 'user', content: 'Add ada@example.com' }];

for (const kind of kinds) {
  describe.skipIf(kind.skip !== undefined)(
    `durable runs on the ${kind.name} store${kind.skip ? ` (${kind.skip})` : ''}`,
    () => {
      let fixture: StoreFixture;
      const runtimes: Runtime[] = [];
      const errors: { error: unknown; where: string }[] = [];

      beforeEach(async () => {
        kind.require();
        fixture = await kind.fixture();
        errors.length = 0;
      });
      afterEach(async () => {
        await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
        await fixture?.dispose();
      });

      function runtimeOn(store: RunStore, options: Partial<RuntimeOptions> = {}) {
        const tools = crm();
        const planner = supportPlanner();
        const runtime = createRuntime({
          agent: { id: 'support' },
          planner,
          tools: [tools.upsert],
          store,
          telemetry: false,
          onError: (error, where) => errors.push({ error, where }),
          ...options,
        });
        runtimes.push(runtime);
        return { runtime, tools, planner };
      }

      async function awaiting(run: RunHandle): Promise<void> {
        await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'));
        await run.persisted();
      }

      /** The handle's events as the store's log must hold them (JSON form). */
      function eventsOf(run: RunHandle): RunEvent[] {
        const seen: RunEvent[] = [];
        run.events$.subscribe((event) => seen.push(JSON.parse(JSON.stringify(event))));
        return seen;
      }

      it('persists every state the run stands in across a macrotask, with every event that led to it, and persisted() says when it is written', async () => {
        const writes: PersistedWrite[] = [];
        const store = fixture.open();
        const { runtime } = runtimeOn(store, { durable: { onPersisted: (write) => writes.push(write) } });
        const run = runtime.start({ runId: 'run-steps', messages: ask });
        const emitted = eventsOf(run);
        await awaiting(run);
        expect(await store.load('run-steps')).toMatchObject({ status: 'awaiting', owner: runtime.instance });
        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        expect((await run.result()).status).toBe('completed');
        await run.persisted();

        const stored = await store.load('run-steps');
        expect(stored).toMatchObject({ status: 'completed', version: writes.length });
        expect(stored?.owner).toBeUndefined(); // released once finished
        // Every state the run entered (`resuming` and `validating` pass within one step when no
        // policy is consulted).
        const entered = emitted.flatMap((event) => (event.type === 'state_changed' ? [event.state] : []));
        expect(entered).toEqual([
          'planning',
          'awaiting.clarification',
          'planning',
          'executing',
          'planning',
          'completed',
        ]);
        // Written: the states it stood in across a macrotask (group commit, docs/durability.md
        // §Step boundaries). This planner answers at once, so the first `planning` is written
        // with the wait that followed it, and the step after the answer in one or two writes.
        const written = writes.map((write) => write.state);
        expect(written[0]).toBe('awaiting.clarification');
        expect(written.at(-1)).toBe('completed');
        expect(written.length).toBeLessThan(entered.length);
        for (const state of written) expect(entered).toContain(state);
        expect(run.storage).toEqual({ state: 'saved', version: writes.length });
        const log = await store.readEvents('run-steps');
        expect(log.map((record) => record.seq)).toEqual(log.map((_, index) => index + 1));
        expect(log.map((record) => record.event)).toEqual(emitted);
        expect(writes.reduce((sum, write) => sum + write.events, 0)).toBe(emitted.length);
      });

      it('evicts a run waiting for an answer and restores it when the answer comes by id', async () => {
        const store = fixture.open();
        const { runtime, tools } = runtimeOn(store, { durable: { evictAfterMs: 30 } });
        const run = runtime.start({ runId: 'run-evict', messages: ask });
        await awaiting(run);
        await vi.waitFor(() => expect(runtime.get('run-evict')).toBeUndefined());
        expect(run.actor.getSnapshot().status).toBe('stopped');
        const stored = await store.load('run-evict');
        expect(stored).toMatchObject({ status: 'awaiting' });
        expect(stored?.owner).toBeUndefined(); // released: any process may take it
        expect((await runtime.list({ status: 'awaiting' })).map((r) => r.runId)).toEqual(['run-evict']);

        const restored = await runtime.provideClarification('run-evict', { id: 'which-plan', answer: 'pro' });
        const outcome = await restored.result();
        expect(outcome.status).toBe('completed');
        expect(outcome.finalResponse?.text).toBe('Ada is on the pro plan.');
        expect([...tools.applied.keys()]).toEqual(['run-evict:t2:c1']);
        // The handle the app kept follows the restored run.
        expect(restored).toBe(run);
        expect((await run.result()).status).toBe('completed');
        await runtime.flush();
        const log = await store.readEvents('run-evict');
        expect(log.map((record) => record.seq)).toEqual(log.map((_, index) => index + 1));
        expect(log.filter((record) => (record.event as RunEvent).type === 'run_started')).toHaveLength(1);
        expect((log.at(-1)!.event as RunEvent).type).toBe('run_completed');
      });

      it('restores an evicted run when the app answers through the handle it kept', async () => {
        const { runtime } = runtimeOn(fixture.open(), { durable: { evictAfterMs: 20 } });
        const run = runtime.start({ runId: 'run-kept', messages: ask });
        await awaiting(run);
        await vi.waitFor(() => expect(runtime.get('run-kept')).toBeUndefined());
        // The kept handle still says what the run waits for, though its actor is gone.
        expect(run.status).toBe('awaiting');
        expect(run.awaiting).toMatchObject({ kind: 'clarification', id: 'which-plan' });
        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        expect(runtime.get('run-kept')).toBe(run);
        expect((await run.result()).status).toBe('completed');
      });

      it('resumes a run after a restart: a new runtime on the same database finishes it, the log goes on', async () => {
        const first = runtimeOn(fixture.open());
        const run = first.runtime.start({ runId: 'run-restart', messages: ask, labels: { tenant: 'acme' } });
        await awaiting(run);
        await first.runtime.close();

        const second = runtimeOn(fixture.open());
        const waiting = await second.runtime.list({ status: 'awaiting' });
        expect(waiting.map((stored) => [stored.runId, stored.labels])).toEqual([
          ['run-restart', { tenant: 'acme' }],
        ]);
        const resumed = await second.runtime.resume('run-restart');
        expect(resumed.state).toBe('awaiting.clarification');
        await resumed.provideClarification({ id: 'which-plan', answer: 'pro' });
        const outcome = await resumed.result();
        expect(outcome.status).toBe('completed');
        expect(outcome.transcript.map((message) => message.role)).toEqual([
          'user',
          'assistant',
          'user',
          'assistant',
          'tool',
          'assistant',
        ]);
        expect(second.planner.turns).toEqual(['run-restart:t2', 'run-restart:t3']);
        await second.runtime.flush();
        const types = (await second.runtime.store.readEvents('run-restart')).map(
          (r) => (r.event as RunEvent).type,
        );
        expect(types.filter((type) => type === 'run_started')).toHaveLength(1);
        expect(types.filter((type) => type === 'await_clarification')).toHaveLength(1);
        expect(types.slice(-2)).toEqual(['state_changed', 'run_completed']);
        await expect(second.runtime.resume('no-such-run')).rejects.toBeInstanceOf(RunNotFoundError);
      });

      it('lets only one of two runtimes on one database advance a run: the other gets RunConflictError', async () => {
        const a = runtimeOn(fixture.open(), { durable: { owner: 'process-a' } });
        const b = runtimeOn(fixture.open(), { durable: { owner: 'process-b' } });
        const run = a.runtime.start({ runId: 'run-shared', messages: ask });
        await awaiting(run);

        const refused = await b.runtime.resume('run-shared').catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(RunConflictError);
        expect(refused).toMatchObject({ runId: 'run-shared', owner: 'process-a' });
        expect((refused as Error).message).toMatch(
          /owner "process-a" \(instance process-a#[0-9a-f]{12}\) holds this run/,
        );
        await expect(
          b.runtime.provideClarification('run-shared', { id: 'which-plan', answer: 'free' }),
        ).rejects.toBeInstanceOf(RunConflictError);
        expect(b.runtime.get('run-shared')).toBeUndefined();

        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        expect((await run.result()).status).toBe('completed');
        expect(b.tools.calls).toEqual([]);
        expect(a.tools.calls).toEqual(['run-shared:t2:c1']);
      });

      it('refuses a run to a second live runtime under the same owner name (issue 34 item 1), naming both', async () => {
        const a = runtimeOn(fixture.open(), { durable: { owner: 'pod-1' } });
        const b = runtimeOn(fixture.open(), { durable: { owner: 'pod-1' } });
        expect(a.runtime.instance).toMatch(/^pod-1#[0-9a-f]{12}$/);
        expect(b.runtime.instance).not.toBe(a.runtime.instance);
        const run = a.runtime.start({ runId: 'run-same-name', messages: ask });
        await awaiting(run);

        const refused = await b.runtime.resume('run-same-name').catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(RunConflictError);
        expect(refused).toMatchObject({ owner: 'pod-1', instance: a.runtime.instance });
        expect((refused as Error).message).toMatch(
          /another runtime instance under this owner name \("pod-1"/,
        );
        const { recovered, held } = await b.runtime.recover();
        expect(recovered).toEqual([]);
        expect(b.runtime.get('run-same-name')).toBeUndefined();
        expect(held).toEqual([]); // awaiting an answer: not recovery's to take

        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        expect((await run.result()).status).toBe('completed');
        expect(b.tools.calls).toEqual([]);
      });

      it('fences off a process that lost its lease: its next write is refused and it stops the run', async () => {
        const partitioned = flakyStore(fixture.open());
        const a = runtimeOn(partitioned, { durable: { owner: 'process-a', leaseMs: 150 } });
        const run = a.runtime.start({ runId: 'run-fenced', messages: ask });
        await awaiting(run);
        partitioned.down = true; // A cannot reach the database: its lease runs out
        await new Promise((resolve) => setTimeout(resolve, 250));

        const b = runtimeOn(fixture.open(), { durable: { owner: 'process-b' } });
        const taken = await b.runtime.provideClarification('run-fenced', { id: 'which-plan', answer: 'pro' });
        expect((await taken.result()).status).toBe('completed');

        partitioned.down = false; // A is back, still holding its old actor
        await run.provideClarification({ id: 'which-plan', answer: 'free' });
        await vi.waitFor(() => expect(run.storage.state).toBe('conflict'));
        expect(run.storage.error).toBeInstanceOf(RunConflictError);
        await expect(run.persisted()).rejects.toBeInstanceOf(RunConflictError);
        expect(errors.some(({ error }) => error instanceof RunConflictError)).toBe(true);
        expect(a.runtime.get('run-fenced')).toBeUndefined();
        expect(run.actor.getSnapshot().status).toBe('stopped');
        // The handle the app kept settles (issue 12 defect 3): it used to wait for ever, `running`.
        await expect(run.result()).rejects.toBeInstanceOf(RunConflictError);
        expect(run.status).toBe('failed');
        expect(a.tools.calls).toEqual([]); // its tool never ran: the call was never durable
        expect(await fixture.open().load('run-fenced')).toMatchObject({ status: 'completed' });
      });

      it('keeps a run going in memory while the store is down, says so, and writes everything once it is back', async () => {
        const store = flakyStore(fixture.open());
        const { runtime, tools } = runtimeOn(store, { durable: { retry: { initialMs: 10, maxMs: 40 } } });
        const run = runtime.start({ runId: 'run-outage', messages: ask });
        const emitted = eventsOf(run);
        await awaiting(run);

        store.down = true;
        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        await vi.waitFor(() => expect(run.storage.state).toBe('failing'));
        expect(run.storage.error).toBeInstanceOf(RunPersistenceError);
        expect(run.storage.error?.message).toMatch(/could not be saved .*nothing is dropped.*ECONNREFUSED/);
        await expect(run.persisted()).rejects.toBeInstanceOf(RunPersistenceError);
        expect(errors.find(({ error }) => error instanceof RunPersistenceError)?.where).toBe(
          'store write of run run-outage',
        );
        // Write-ahead: the tool waits until its call is durable, so nothing has run yet.
        await new Promise((resolve) => setTimeout(resolve, 60));
        expect(run.state).toBe('executing');
        expect(tools.calls).toEqual([]);

        store.down = false;
        expect((await run.result()).status).toBe('completed');
        await vi.waitFor(() => runtime.flush());
        expect(run.storage.state).toBe('saved');
        expect(tools.calls).toEqual(['run-outage:t2:c1']);
        const stored = await store.load('run-outage');
        expect(stored?.status).toBe('completed');
        await vi.waitFor(async () => expect((await store.load('run-outage'))?.owner).toBeUndefined());
        const log = await store.readEvents('run-outage');
        expect(log.map((record) => record.seq)).toEqual(log.map((_, index) => index + 1));
        expect(log.map((record) => record.event)).toEqual(emitted);
      });

      it('runs a tool call that was in flight when its process stopped again after resume, with the same toolCallId', async () => {
        const first = runtimeOn(fixture.open());
        const release = first.tools.hold();
        const run = first.runtime.start({ runId: 'run-inflight', messages: ask });
        await awaiting(run);
        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        await vi.waitFor(() => expect(first.tools.calls).toEqual(['run-inflight:t2:c1']));
        await first.runtime.close(); // stops mid-call: the stored state is `executing`
        release();

        const second = runtimeOn(fixture.open());
        const resumed = await second.runtime.resume('run-inflight');
        const outcome = await resumed.result();
        expect(outcome.status).toBe('completed');
        expect(second.tools.calls).toEqual(['run-inflight:t2:c1']);
        const toolMessages = outcome.transcript.filter((message) => message.role === 'tool');
        expect(toolMessages).toMatchObject([
          {
            toolCallId: 'run-inflight:t2:c1',
            providerToolCallId: 'call-upsert',
            content: { id: 'profile-ada@example.com' },
          },
        ]);
      });

      it('keeps a backoff deadline across a restart: the resumed run waits only for what is left', async () => {
        const backOffOnce = definePolicy({
          name: 'back-off-once',
          onToolResult: (_result, ctx) =>
            ctx.state === undefined ? { backoffMs: 1_200, state: { done: true } } : undefined,
        });
        const first = runtimeOn(fixture.open(), { policies: [backOffOnce] });
        const run = first.runtime.start({ runId: 'run-backoff', messages: ask });
        await awaiting(run);
        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        await vi.waitFor(() => expect(run.state).toBe('awaiting.backoff'));
        const until = (run.context.flow.awaiting as { until: number }).until;
        await first.runtime.close();
        // Resumed with 600 ms of the backoff left: time for a loaded machine to open the store and
        // restore the run (250 ms was not, at load 11), and apart from a restarted 1,200 ms wait.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now() - 600)));

        const second = runtimeOn(fixture.open(), { policies: [backOffOnce] });
        const resumedAt = Date.now();
        const resumed = await second.runtime.resume('run-backoff');
        expect(resumed.state).toBe('awaiting.backoff');
        expect((await resumed.result()).status).toBe('completed');
        const planned = Date.now();
        expect(planned).toBeGreaterThanOrEqual(until);
        expect(planned - resumedAt).toBeLessThan(1_100); // not the whole 1,200 ms again
      });

      it('stops a new run whose id the store already holds, and leaves the stored run alone', async () => {
        const store = fixture.open();
        const first = runtimeOn(store);
        const original = first.runtime.start({ runId: 'run-taken', messages: ask });
        await awaiting(original);
        await first.runtime.close();
        const second = runtimeOn(fixture.open());
        const clash = second.runtime.start({ runId: 'run-taken', messages: ask });
        await vi.waitFor(() => expect(clash.storage.state).toBe('conflict'));
        expect(clash.storage.error?.message).toMatch(/already holds a run with this id/);
        expect(second.runtime.get('run-taken')).toBeUndefined();
        expect(await store.load('run-taken')).toMatchObject({ status: 'awaiting', version: 1 });
      });

      it('streams a run’s event log from the store, then live, to its last event', async () => {
        const { runtime } = runtimeOn(fixture.open());
        const run = runtime.start({ runId: 'run-feed', messages: ask });
        await awaiting(run);
        const seen: number[] = [];
        const types: string[] = [];
        const reading = (async () => {
          for await (const record of runtime.events('run-feed', { afterSeq: 2 })) {
            seen.push(record.seq);
            types.push((record.event as RunEvent).type);
          }
        })();
        await vi.waitFor(() => expect(types).toContain('await_clarification'));
        await run.provideClarification({ id: 'which-plan', answer: 'pro' });
        await reading;
        expect(seen[0]).toBe(3);
        expect(seen).toEqual(seen.map((_, index) => index + 3));
        expect(types.slice(-2)).toEqual(['state_changed', 'run_completed']);
        const all = [];
        for await (const record of runtime.events('run-feed', { follow: false })) all.push(record.seq);
        expect(all.length).toBe(seen.length + 2);
      });
    },
  );
}
