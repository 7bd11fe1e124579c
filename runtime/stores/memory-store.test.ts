import { describe, expect, it } from 'vitest';
import { immutableCopy } from './immutable-copy.ts';
import { memoryStore } from './memory-store.ts';
import { describeRunStoreContract } from './store-contract.ts';

describeRunStoreContract('memoryStore', async ({ now }) => {
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

  it('keeps separate stores separate', async () => {
    const a = memoryStore();
    const b = memoryStore();
    await a.create({ runId: 'run-1', agentId: 'a', status: 'running', snapshot: {} });
    expect(await b.load('run-1')).toBeUndefined();
  });
});
