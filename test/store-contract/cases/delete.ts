/**
 * The RunStore contract's "delete" cases: a run goes with its log, and its id can start over.
 *
 * @module
 */

import { expect } from 'vitest';
import type { StoredRun } from '../../../stores/run-store.ts';
import type { StoreCaseGroup } from '../store-case.ts';

function ids(runs: StoredRun[]): string[] {
  return runs.map((run) => run.runId);
}

export const deleteRuns: StoreCaseGroup = {
  name: 'delete',
  cases: [
    {
      name: 'deletes the run and its events, and reports whether it existed',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await store.create(newRun('run-2'));
        await store.appendEvents('run-1', [
          { event: 'e1', at: 1 },
          { event: 'e2', at: 2 },
        ]);
        await store.appendEvents('run-2', [{ event: 'other', at: 1 }]);

        expect(await store.delete('run-1')).toBe(true);
        expect(await store.load('run-1')).toBeUndefined();
        expect(await store.readEvents('run-1')).toEqual([]);
        expect(await store.delete('run-1')).toBe(false);
        expect(ids(await store.list())).toEqual(['run-2']);
        expect(await store.readEvents('run-2')).toHaveLength(1);
      },
    },
    {
      name: 'lets a deleted run id start over at version 1 with an empty event log',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await store.save('run-1', { expectedVersion: 1, status: 'completed', snapshot: {} });
        await store.appendEvents('run-1', [{ event: 'old', at: 1 }]);
        await store.delete('run-1');

        expect((await store.create(newRun('run-1'))).version).toBe(1);
        await store.appendEvents('run-1', [{ event: 'new', at: 2 }]);
        expect((await store.readEvents('run-1')).map((e) => [e.seq, e.event])).toEqual([[1, 'new']]);
      },
    },
  ],
};
