/**
 * The RunStore contract's "bad input" cases: malformed arguments are refused before the store is touched.
 *
 * @module
 */

import { expect } from 'vitest';
import type { RunStatus } from '../../../stores/run-store.ts';
import type { StoreCaseGroup } from '../store-case.ts';

export const badInput: StoreCaseGroup = {
  name: 'bad input',
  cases: [
    {
      name: 'rejects malformed arguments with TypeError or RangeError before touching the store',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await expect(store.create(newRun(''))).rejects.toBeInstanceOf(TypeError);
        await expect(store.create(newRun('x', { status: 'sleeping' as RunStatus }))).rejects.toBeInstanceOf(
          TypeError,
        );
        await expect(store.create(newRun('x', { snapshot: undefined }))).rejects.toBeInstanceOf(TypeError);
        await expect(
          store.save('run-1', { expectedVersion: 0, status: 'running', snapshot: {} }),
        ).rejects.toBeInstanceOf(RangeError);
        await expect(store.list({ limit: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(store.readEvents('run-1', { afterSeq: -1 })).rejects.toBeInstanceOf(RangeError);
        await expect(store.appendEvents('run-1', [{ event: 'e', at: Number.NaN }])).rejects.toBeInstanceOf(
          TypeError,
        );
        expect(await store.load('x')).toBeUndefined();
        expect(await store.readEvents('run-1')).toEqual([]);
      },
    },
  ],
};
