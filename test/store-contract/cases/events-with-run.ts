/**
 * The RunStore contract's "events written with the run" cases: events given to create and save land exactly when the run does.
 *
 * @module
 */

import { expect } from 'vitest';
import { RunExistsError, RunNotFoundError, StaleRunVersionError } from '../../../stores/run-store-errors.ts';
import { type StoreCaseGroup, T0 } from '../store-case.ts';

export const eventsWithRun: StoreCaseGroup = {
  name: 'events written with the run',
  cases: [
    {
      name: 'appends the events given to create and save in the same write, numbered after the log',
      run: async ({ store, newRun }) => {
        await store.create(
          newRun('run-1', {
            events: [
              { event: { type: 'run_started' }, at: T0 },
              { event: { type: 'state_changed', state: 'planning' }, at: T0 + 1 },
            ],
          }),
        );
        await store.appendEvents('run-1', [{ event: 'appended', at: T0 + 2 }]);
        const saved = await store.save('run-1', {
          expectedVersion: 1,
          status: 'awaiting',
          snapshot: { step: 2 },
          events: [
            { event: { type: 'state_changed', state: 'awaiting' }, at: T0 + 3 },
            { event: { type: 'await_clarification' }, at: T0 + 4 },
          ],
        });
        expect(saved.version).toBe(2);
        expect((await store.readEvents('run-1')).map((e) => [e.seq, e.event, e.at])).toEqual([
          [1, { type: 'run_started' }, T0],
          [2, { type: 'state_changed', state: 'planning' }, T0 + 1],
          [3, 'appended', T0 + 2],
          [4, { type: 'state_changed', state: 'awaiting' }, T0 + 3],
          [5, { type: 'await_clarification' }, T0 + 4],
        ]);
      },
    },
    {
      name: 'appends nothing when the save is stale or the run unknown: events land exactly when the snapshot does',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1', { events: [{ event: 'first', at: 1 }] }));
        await store.save('run-1', { expectedVersion: 1, status: 'running', snapshot: { by: 'A' } });
        const stale = await store
          .save('run-1', {
            expectedVersion: 1,
            status: 'failed',
            snapshot: { by: 'B' },
            events: [{ event: 'from B', at: 2 }],
          })
          .catch((e: unknown) => e);
        expect(stale).toBeInstanceOf(StaleRunVersionError);
        expect((await store.readEvents('run-1')).map((e) => e.event)).toEqual(['first']);
        await expect(
          store.save('ghost', {
            expectedVersion: 1,
            status: 'running',
            snapshot: {},
            events: [{ event: 'lost', at: 3 }],
          }),
        ).rejects.toBeInstanceOf(RunNotFoundError);
        expect(await store.readEvents('ghost')).toEqual([]);
      },
    },
    {
      name: 'keeps the first run and its log when a create with events finds the id taken',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1', { events: [{ event: 'original', at: 1 }] }));
        await expect(
          store.create(newRun('run-1', { events: [{ event: 'intruder', at: 2 }] })),
        ).rejects.toBeInstanceOf(RunExistsError);
        expect((await store.readEvents('run-1')).map((e) => [e.seq, e.event])).toEqual([[1, 'original']]);
      },
    },
    {
      name: 'gives saves with events from two processes distinct, gapless numbers',
      run: async ({ store, fixture, newRun }) => {
        const second = await fixture.openSecond();
        await store.create(newRun('run-1'));
        let version = 1;
        for (let i = 0; i < 6; i++) {
          const writer = i % 2 === 0 ? store : second;
          const saved = await writer.save('run-1', {
            expectedVersion: version,
            status: 'running',
            snapshot: { i },
            events: [
              { event: { i, part: 0 }, at: i },
              { event: { i, part: 1 }, at: i },
            ],
          });
          version = saved.version;
        }
        const events = await second.readEvents('run-1');
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
        expect(events.map((e) => (e.event as { i: number }).i)).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
      },
    },
  ],
};
