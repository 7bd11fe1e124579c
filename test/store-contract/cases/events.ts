/**
 * The RunStore contract's "events" cases: the append-only event log: numbering, paging, concurrent appenders.
 *
 * @module
 */

import { expect } from 'vitest';
import { RunNotFoundError } from '../../../stores/run-store-errors.ts';
import { type StoreCaseGroup, T0 } from '../store-case.ts';

export const events: StoreCaseGroup = {
  name: 'events',
  cases: [
    {
      name: 'numbers appended events 1..n per run, in order, across calls',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await store.appendEvents('run-1', [
          { event: { type: 'run_started', runId: 'run-1' }, at: T0 },
          { event: { type: 'state_changed', to: 'planning' }, at: T0 + 1 },
        ]);
        await store.appendEvents('run-1', [{ event: { type: 'run_completed' }, at: T0 + 2 }]);
        expect(await store.readEvents('run-1')).toEqual([
          { runId: 'run-1', seq: 1, event: { type: 'run_started', runId: 'run-1' }, at: T0 },
          { runId: 'run-1', seq: 2, event: { type: 'state_changed', to: 'planning' }, at: T0 + 1 },
          { runId: 'run-1', seq: 3, event: { type: 'run_completed' }, at: T0 + 2 },
        ]);
      },
    },
    {
      name: 'keeps a separate sequence per run',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await store.create(newRun('run-2'));
        await store.appendEvents('run-1', [{ event: 'a1', at: 1 }]);
        await store.appendEvents('run-2', [{ event: 'b1', at: 2 }]);
        await store.appendEvents('run-1', [{ event: 'a2', at: 3 }]);
        expect((await store.readEvents('run-1')).map((e) => [e.seq, e.event])).toEqual([
          [1, 'a1'],
          [2, 'a2'],
        ]);
        expect((await store.readEvents('run-2')).map((e) => [e.seq, e.event])).toEqual([[1, 'b1']]);
      },
    },
    {
      name: 'pages with afterSeq and limit',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await store.appendEvents(
          'run-1',
          Array.from({ length: 10 }, (_, i) => ({ event: { n: i + 1 }, at: T0 + i })),
        );
        const seqs = async (options: { afterSeq?: number; limit?: number }) =>
          (await store.readEvents('run-1', options)).map((e) => e.seq);
        expect(await seqs({ afterSeq: 7 })).toEqual([8, 9, 10]);
        expect(await seqs({ limit: 3 })).toEqual([1, 2, 3]);
        expect(await seqs({ afterSeq: 4, limit: 2 })).toEqual([5, 6]);
        expect(await seqs({ afterSeq: 10 })).toEqual([]);
      },
    },
    {
      name: 'gives concurrent appenders from two processes distinct, gapless numbers',
      run: async ({ store, fixture, newRun }) => {
        const second = await fixture.openSecond();
        await store.create(newRun('run-1'));
        await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 === 0 ? store : second).appendEvents('run-1', [
              { event: { writer: i, part: 0 }, at: i },
              { event: { writer: i, part: 1 }, at: i },
            ]),
          ),
        );
        const events = await store.readEvents('run-1');
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
        // Each call's events are contiguous and in order: an append is atomic.
        for (let i = 0; i < events.length; i += 2) {
          const [first, next] = [events[i]!.event, events[i + 1]!.event] as {
            writer: number;
            part: number;
          }[];
          expect([first!.part, next!.part, next!.writer]).toEqual([0, 1, first!.writer]);
        }
      },
    },
    {
      name: 'rejects appending to an unknown run with RunNotFoundError and reads [] for it',
      run: async ({ store }) => {
        await expect(store.appendEvents('ghost', [{ event: {}, at: 1 }])).rejects.toBeInstanceOf(
          RunNotFoundError,
        );
        expect(await store.readEvents('ghost')).toEqual([]);
      },
    },
    {
      name: 'treats an empty append as a no-op',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await store.appendEvents('run-1', []);
        await store.appendEvents('run-1', [{ event: 'first', at: 1 }]);
        expect((await store.readEvents('run-1')).map((e) => e.seq)).toEqual([1]);
      },
    },
    {
      name: 'does not change the run: appending events leaves version and updatedAt alone',
      run: async ({ store, clock, newRun }) => {
        const created = await store.create(newRun('run-1'));
        clock.advance(5000);
        await store.appendEvents('run-1', [{ event: 'x', at: clock.now() }]);
        expect(await store.load('run-1')).toStrictEqual(created);
      },
    },
  ],
};
