import { describe, expect, it } from 'vitest';
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

  it('keeps separate stores separate', async () => {
    const a = memoryStore();
    const b = memoryStore();
    await a.create({ runId: 'run-1', agentId: 'a', status: 'running', snapshot: {} });
    expect(await b.load('run-1')).toBeUndefined();
  });
});
