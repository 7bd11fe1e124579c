import { describe, expect, it } from 'vitest';
import { memoryStore } from './memory-store.ts';
import { RUN_STORE_METHODS } from './plain-store.ts';
import type { RunStore } from './run-store.ts';
import { sqliteStore } from './sqlite-store.ts';

describe('plainStore: the factories return plain objects of the store’s own members', () => {
  const run = { runId: 'run-1', agentId: 'a', status: 'running' as const, snapshot: { step: 1 } };

  it.each([
    ['memoryStore', () => memoryStore(), ['volatile', ...RUN_STORE_METHODS]],
    ['sqliteStore', () => sqliteStore({ path: ':memory:' }), [...RUN_STORE_METHODS]],
  ] as const)(
    '%s: an app’s wrapper that spreads it or detaches a method keeps working',
    async (_, open, keys) => {
      const store = open();
      try {
        expect(Object.keys(store)).toEqual(keys);
        const saves: number[] = [];
        // A wrapper as an app writes one: the store's members, one of them replaced.
        const wrapped: RunStore = {
          ...store,
          save: (runId, update) => {
            saves.push(update.expectedVersion);
            return store.save(runId, update);
          },
        };
        const { load } = store;
        await wrapped.create(run);
        await wrapped.save('run-1', { expectedVersion: 1, status: 'running', snapshot: { step: 2 } });
        expect(saves).toEqual([1]);
        expect((await load('run-1'))?.snapshot).toEqual({ step: 2 });
      } finally {
        await store.close();
      }
    },
  );
});
