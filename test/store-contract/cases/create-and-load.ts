/**
 * The RunStore contract's "create and load" cases: a run is created at version 1 and loads back as it was given.
 *
 * @module
 */

import { expect } from 'vitest';
import { RunExistsError } from '../../../stores/run-store-errors.ts';
import { type StoreCaseGroup, T0 } from '../store-case.ts';

export const createAndLoad: StoreCaseGroup = {
  name: 'create and load',
  cases: [
    {
      name: 'creates a run at version 1 stamped with the store clock, and loads it back equal',
      run: async ({ store, newRun }) => {
        const created = await store.create(
          newRun('run-1', {
            sessionId: 'sess-1',
            labels: { tenant: 'acme' },
            snapshot: { value: 'planning', turn: 1 },
          }),
        );
        expect(created).toEqual({
          runId: 'run-1',
          sessionId: 'sess-1',
          agentId: 'support',
          status: 'running',
          version: 1,
          snapshot: { value: 'planning', turn: 1 },
          createdAt: T0,
          updatedAt: T0,
          labels: { tenant: 'acme' },
        });
        expect(await store.load('run-1')).toStrictEqual(created);
      },
    },
    {
      name: 'leaves sessionId and labels absent (not undefined, not null) when not given',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        const loaded = await store.load('run-1');
        expect(loaded).toBeDefined();
        expect(Object.keys(loaded!).sort()).toEqual(
          ['agentId', 'createdAt', 'runId', 'snapshot', 'status', 'updatedAt', 'version'].sort(),
        );
      },
    },
    {
      name: 'rejects a second create with the same runId with RunExistsError and keeps the first run',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1', { snapshot: { first: true } }));
        const error = await store
          .create(newRun('run-1', { snapshot: { first: false } }))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RunExistsError);
        expect(error).toMatchObject({ name: 'RunExistsError', runId: 'run-1' });
        expect((await store.load('run-1'))?.snapshot).toEqual({ first: true });
      },
    },
    {
      name: 'loads undefined for an unknown run',
      run: async ({ store }) => {
        expect(await store.load('no-such-run')).toBeUndefined();
      },
    },
    {
      name: 'stores copies: mutating the input or a returned run never changes the stored run',
      run: async ({ store, newRun }) => {
        const input = newRun('run-1', { snapshot: { items: [1, 2] }, labels: { a: '1' } });
        const created = await store.create(input);
        (input.snapshot as { items: number[] }).items.push(3);
        input.labels!.a = 'changed';
        (created.snapshot as { items: number[] }).items.push(4);
        const loaded = await store.load('run-1');
        (loaded!.snapshot as { items: number[] }).items.push(5);
        expect(await store.load('run-1')).toMatchObject({ snapshot: { items: [1, 2] }, labels: { a: '1' } });
      },
    },
    {
      name: 'keeps top-level JSON values that are not objects',
      run: async ({ store, newRun }) => {
        const snapshots: unknown[] = [null, 'just text', 42.5, [1, 'two', { three: 3 }], true];
        for (const [index, snapshot] of snapshots.entries()) {
          await store.create(newRun(`run-${index}`, { snapshot }));
          expect((await store.load(`run-${index}`))?.snapshot).toEqual(snapshot);
        }
      },
    },
  ],
};
