/**
 * The RunStore contract's "unavailable" cases: a closed store and a dead database fail with RunStoreUnavailableError saying which store and why.
 *
 * @module
 */

import { expect } from 'vitest';
import { RunStoreUnavailableError } from '../../../stores/run-store-errors.ts';
import type { StoreCaseGroup } from '../store-case.ts';

export const unavailable: StoreCaseGroup = {
  name: 'unavailable',
  cases: [
    {
      name: 'rejects every call on a closed store with RunStoreUnavailableError naming the store',
      run: async ({ store, fixture, newRun }) => {
        await store.create(newRun('run-1'));
        await store.close();
        await store.close(); // idempotent
        const calls: [string, () => Promise<unknown>][] = [
          ['create', () => store.create(newRun('run-2'))],
          ['load', () => store.load('run-1')],
          ['save', () => store.save('run-1', { expectedVersion: 1, status: 'running', snapshot: {} })],
          ['list', () => store.list()],
          ['appendEvents', () => store.appendEvents('run-1', [{ event: 'e', at: 1 }])],
          ['readEvents', () => store.readEvents('run-1')],
          ['delete', () => store.delete('run-1')],
          ['heartbeat', () => store.heartbeat!('a', 1000)],
          ['claim', () => store.claim!('run-1', 'a')],
          ['release', () => store.release!('run-1', 'a')],
        ];
        for (const [operation, call] of calls) {
          const error = await call().catch((e: unknown) => e);
          expect(error, operation).toBeInstanceOf(RunStoreUnavailableError);
          expect(error, operation).toMatchObject({ name: 'RunStoreUnavailableError', operation });
          expect((error as Error).message).toMatch(/run store .*is unavailable: .*failed: .*closed/);
          expect((error as Error).message).toMatch(fixture.deadMessage[0]!);
        }
      },
    },
    {
      name: 'rejects calls on a dead database with RunStoreUnavailableError saying which store and why',
      run: async ({ fixture, newRun }) => {
        const dead = await fixture.openDead();
        const update = { expectedVersion: 1, status: 'running' as const, snapshot: { keep: ['me'] } };
        const calls: [string, () => Promise<unknown>][] = [
          ['load', () => dead.load('run-1')],
          ['create', () => dead.create(newRun('run-1'))],
          ['save', () => dead.save('run-1', update)],
          ['list', () => dead.list({ status: 'awaiting' })],
        ];
        for (const [operation, call] of calls) {
          const error = await call().catch((e: unknown) => e);
          expect(error, operation).toBeInstanceOf(RunStoreUnavailableError);
          expect(error, operation).toMatchObject({ operation });
          expect((error as Error).cause, operation).toBeDefined();
          for (const pattern of fixture.deadMessage)
            expect((error as Error).message, operation).toMatch(pattern);
        }
        // The caller's state is untouched, ready to be saved again when the database is back.
        expect(update).toEqual({ expectedVersion: 1, status: 'running', snapshot: { keep: ['me'] } });
        await dead.close();
      },
    },
  ],
};
