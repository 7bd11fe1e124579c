import { describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { runStoreContract } from '../test/store-contract/run-store-contract.ts';
import { immutableCopy } from './immutable-copy.ts';
import { DEFAULT_FINISHED_TTL_MS, DEFAULT_MAX_FINISHED_RUNS, memoryStore } from './memory-store.ts';
import type { NewRunEvent, RunStore } from './run-store.ts';

runStoreContract('memoryStore', async ({ now }) => {
  const store = memoryStore({ now });
  const dead = memoryStore({ now });
  await dead.close();
  return {
    store,
    // The memory store has no database apart from the object: a second "process" shares it.
    openSecond: async () => store,
    openDead: async () => dead,
    deadMessage: [/memory run store/, /closed/],
    dispose: () => store.close(),
  };
});

/** Creates the running run `run-1` with `events`. */
function createRun(store: RunStore, events: NewRunEvent[]): Promise<unknown> {
  return store.create({ runId: 'run-1', agentId: 'a', status: 'running', snapshot: {}, events });
}

describe('memoryStore', () => {
  it('rejects a snapshot that cannot be cloned and keeps the stored run as it was', async () => {
    const store = memoryStore();
    await store.create({ runId: 'run-1', agentId: 'a', status: 'running', snapshot: { ok: true } });
    await expect(
      store.save('run-1', { expectedVersion: 1, status: 'running', snapshot: { fn: () => 1 } }),
    ).rejects.toThrow(/could not be cloned/);
    expect(await store.load('run-1')).toMatchObject({ version: 1, snapshot: { ok: true } });
  });

  it('keeps an immutable copy without copying it and returns it from save; reads get mutable copies', async () => {
    const store = memoryStore();
    await store.create({ runId: 'run-1', agentId: 'a', status: 'running', snapshot: { step: 1 } });
    const snapshot = immutableCopy({ step: 2, messages: [{ role: 'user', content: 'hi' }] });
    const event = immutableCopy({ type: 'planner_note', note: 'n' });
    const saved = await store.save('run-1', {
      expectedVersion: 1,
      status: 'running',
      snapshot,
      events: [{ event, at: 1 }],
    });
    expect(saved.snapshot).toBe(snapshot);
    const loaded = await store.load('run-1');
    expect(loaded!.snapshot).toEqual(snapshot);
    expect(loaded!.snapshot).not.toBe(snapshot);
    (loaded!.snapshot as { step: number }).step = 3;
    const [record] = await store.readEvents('run-1');
    expect(record!.event).toEqual(event);
    expect(Object.isFrozen(record!.event)).toBe(false);
    expect((await store.load('run-1'))!.snapshot).toEqual({
      step: 2,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('takes `frozen` for a hint: an event declared frozen that is not is still copied', async () => {
    const store = memoryStore();
    const frozen = Object.freeze({ type: 'planner_note', note: 'n' });
    const notFrozen = { type: 'planner_note', note: 'm' };
    await createRun(store, [
      { event: frozen, at: 1, frozen: true },
      { event: notFrozen, at: 2, frozen: true },
    ]);
    notFrozen.note = 'changed';

    const records = await store.readEvents('run-1');
    expect(records.map((record) => record.event)).toEqual([frozen, { type: 'planner_note', note: 'm' }]);
    expect(Object.isFrozen(records[0]!.event)).toBe(false);
  });

  it('keeps every event in order, with its at, across saves of a run that waits (its log compacted)', async () => {
    const store = memoryStore();
    await createRun(store, [{ event: { type: 'a', at: 1 }, at: 1 }]);
    await store.save('run-1', {
      expectedVersion: 1,
      status: 'awaiting',
      snapshot: {},
      events: [
        { event: { type: 'b', at: 2 }, at: 2 },
        { event: { type: 'c', at: 3 }, at: 30 },
      ],
    });
    await store.appendEvents('run-1', [{ event: { type: 'd', at: 4 }, at: 4 }]);
    await store.save('run-1', {
      expectedVersion: 2,
      status: 'awaiting',
      snapshot: {},
      events: [{ event: { type: 'e', at: 5 }, at: 5 }],
    });

    const records = await store.readEvents('run-1');
    expect(records.map(({ seq, at, event }) => [seq, at, (event as { type: string }).type])).toEqual([
      [1, 1, 'a'],
      [2, 2, 'b'],
      [3, 30, 'c'],
      [4, 4, 'd'],
      [5, 5, 'e'],
    ]);
  });

  it("gives each event the at it was written with, whether or not it is the event's own", async () => {
    const store = memoryStore();
    await createRun(store, [{ event: { type: 'a', at: 5 }, at: 5 }]);
    await store.appendEvents('run-1', [
      { event: { type: 'b', at: 6 }, at: 6 },
      { event: { type: 'c', at: 7 }, at: 99 },
      { event: 'not an object', at: 8 },
      { event: { type: 'd', at: 9 }, at: 9 },
    ]);

    const records = await store.readEvents('run-1');

    expect(records.map(({ seq, at }) => [seq, at])).toEqual([
      [1, 5],
      [2, 6],
      [3, 99],
      [4, 8],
      [5, 9],
    ]);
    expect((await store.readEvents('run-1', { afterSeq: 1, limit: 1 }))[0]).toMatchObject({ seq: 2, at: 6 });
  });

  it('keeps separate stores separate', async () => {
    const a = memoryStore();
    const b = memoryStore();
    await a.create({ runId: 'run-1', agentId: 'a', status: 'running', snapshot: {} });
    expect(await b.load('run-1')).toBeUndefined();
  });
});

describe('memoryStore retention of finished runs (issue 24 item 7)', () => {
  const snapshot = { value: 'done' };
  async function finish(store: ReturnType<typeof memoryStore>, runId: string, status = 'completed' as const) {
    await store.create({
      runId,
      agentId: 'a',
      status: 'running',
      snapshot,
      events: [{ event: { n: 1 }, at: 1 }],
    });
    await store.save(runId, { expectedVersion: 1, status, snapshot });
  }

  it('keeps at most maxFinishedRuns finished runs, forgetting the one that finished first, with its events', async () => {
    const store = memoryStore({ maxFinishedRuns: 2 });
    await store.create({ runId: 'waiting', agentId: 'a', status: 'awaiting', snapshot });
    await finish(store, 'run-1');
    await finish(store, 'run-2');
    await finish(store, 'run-3');
    expect(await store.load('run-1')).toBeUndefined();
    expect(await store.readEvents('run-1')).toEqual([]);
    expect((await store.list()).map((run) => run.runId).sort()).toEqual(['run-2', 'run-3', 'waiting']);
    // Runs not finished are never forgotten, however many finish after them.
    for (let i = 4; i < 10; i++) await finish(store, `run-${i}`);
    expect(await store.load('waiting')).toMatchObject({ status: 'awaiting' });
    expect((await store.list({ status: ['completed', 'failed', 'canceled'] })).length).toBe(2);
  });

  it('forgets a finished run finishedTtlMs after it finished, and never a running one', async () => {
    let clock = 1_000;
    const store = memoryStore({ now: () => clock, finishedTtlMs: 500 });
    await finish(store, 'done');
    await store.create({ runId: 'running', agentId: 'a', status: 'running', snapshot });
    clock += 499;
    expect(await store.load('done')).toMatchObject({ status: 'completed' });
    clock += 1;
    expect(await store.load('done')).toBeUndefined();
    clock += 10_000;
    expect(await store.load('running')).toMatchObject({ status: 'running' });
  });

  it('defaults to 1,000 runs and one hour; Infinity keeps every finished run; bad bounds are refused', async () => {
    expect([DEFAULT_MAX_FINISHED_RUNS, DEFAULT_FINISHED_TTL_MS]).toEqual([1_000, 3_600_000]);
    const bounded = memoryStore();
    const unbounded = memoryStore({ maxFinishedRuns: Number.POSITIVE_INFINITY });
    for (let i = 0; i <= 1_000; i++) {
      await finish(bounded, `run-${i}`);
      await finish(unbounded, `run-${i}`);
    }
    expect(await bounded.load('run-0')).toBeUndefined();
    expect(await bounded.load('run-1')).toBeDefined();
    expect((await unbounded.list()).length).toBe(1_001);
    expect(() => memoryStore({ maxFinishedRuns: -1 })).toThrow(RangeError);
    expect(() => memoryStore({ finishedTtlMs: Number.NaN })).toThrow(RangeError);
  });

  it("an evicted finished run's handle still answers result() on the default runtime", async () => {
    const store = memoryStore({ maxFinishedRuns: 1 });
    const runtime = createRuntime({
      agent: { id: 'a' },
      telemetry: false,
      store,
      planner: scriptedPlanner([{ finalResponse: { text: 'one' } }, { finalResponse: { text: 'two' } }]),
    });
    try {
      const first = runtime.start({ runId: 'first', messages: [{ role: 'user', content: 'hi' }] });
      await first.result();
      const second = runtime.start({ runId: 'second', messages: [{ role: 'user', content: 'hi' }] });
      await second.result();
      expect(await store.load('first')).toBeUndefined();
      const outcome = await first.result();
      expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'one' } });
      expect(outcome.transcript.length).toBeGreaterThan(0);
      expect(first.status).toBe('completed');
      expect(await runtime.load('second')).toMatchObject({ status: 'completed' });
    } finally {
      await runtime.close();
    }
  });
});
