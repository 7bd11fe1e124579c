/**
 * The RunStore contract's "list" cases: order (latest write first), filters and limit.
 *
 * @module
 */

import { expect } from 'vitest';
import type { RunStatus, StoredRun } from '../../../stores/run-store.ts';
import type { StoreCaseContext, StoreCaseGroup } from '../store-case.ts';

async function seed({ store, clock, newRun }: StoreCaseContext): Promise<void> {
  const runs: [string, RunStatus, string | undefined][] = [
    ['r-a', 'running', 's-1'],
    ['r-b', 'awaiting', 's-1'],
    ['r-c', 'completed', 's-2'],
    ['r-d', 'awaiting', undefined],
    ['r-e', 'failed', 's-2'],
  ];
  for (const [runId, status, sessionId] of runs) {
    clock.advance(1000);
    await store.create(newRun(runId, { status, ...(sessionId === undefined ? {} : { sessionId }) }));
  }
}
const ids = (runs: StoredRun[]) => runs.map((run) => run.runId);

export const list: StoreCaseGroup = {
  name: 'list',
  cases: [
    {
      name: 'lists every run, most recently updated first',
      run: async (t) => {
        const { clock, store } = t;
        await seed(t);
        expect(ids(await store.list())).toEqual(['r-e', 'r-d', 'r-c', 'r-b', 'r-a']);
        clock.advance(1000);
        await store.save('r-b', { expectedVersion: 1, status: 'running', snapshot: {} });
        expect(ids(await store.list())).toEqual(['r-b', 'r-e', 'r-d', 'r-c', 'r-a']);
      },
    },
    {
      name: 'breaks updatedAt ties by write order, latest write first',
      run: async ({ store, newRun }) => {
        for (const runId of ['t-1', 't-2', 't-3']) await store.create(newRun(runId));
        await store.save('t-1', { expectedVersion: 1, status: 'running', snapshot: {} });
        expect(ids(await store.list())).toEqual(['t-1', 't-3', 't-2']);
      },
    },
    {
      name: 'filters by one status, several statuses, none, a session, and combinations',
      run: async (t) => {
        const { store } = t;
        await seed(t);
        expect(ids(await store.list({ status: 'awaiting' }))).toEqual(['r-d', 'r-b']);
        expect(ids(await store.list({ status: ['completed', 'failed'] }))).toEqual(['r-e', 'r-c']);
        expect(await store.list({ status: [] })).toEqual([]);
        expect(ids(await store.list({ sessionId: 's-1' }))).toEqual(['r-b', 'r-a']);
        expect(ids(await store.list({ sessionId: 's-2', status: 'failed' }))).toEqual(['r-e']);
        expect(await store.list({ sessionId: 'nobody' })).toEqual([]);
      },
    },
    {
      name: 'returns at most `limit` runs, the newest ones',
      run: async (t) => {
        const { store } = t;
        await seed(t);
        expect(ids(await store.list({ limit: 2 }))).toEqual(['r-e', 'r-d']);
        expect(ids(await store.list({ status: 'awaiting', limit: 1 }))).toEqual(['r-d']);
      },
    },
    {
      name: 'returns whole runs with their snapshots',
      run: async ({ store, newRun }) => {
        await store.create(
          newRun('r-1', { sessionId: 's-1', snapshot: { deep: { list: [1, { x: 'y' }] } } }),
        );
        expect(await store.list({ sessionId: 's-1' })).toEqual([await store.load('r-1')]);
      },
    },
  ],
};
