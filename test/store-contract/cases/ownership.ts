/**
 * The RunStore contract's "ownership (leases)" cases: heartbeat, claim and release; a live lease refuses, a claim fences the old owner off.
 *
 * @module
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'vitest';
import type { RunStore } from '../../../stores/run-store.ts';
import { RunLeasedError } from '../../../stores/run-store-errors.ts';
import { type StoreCaseGroup, T0 } from '../store-case.ts';

/** A full garbage collection (exposed from inside: vitest's workers run without `--expose-gc`). */
function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const claim = (target: RunStore, runId: string, owner: string) => target.claim!(runId, owner);

export const ownership: StoreCaseGroup = {
  name: 'ownership (leases)',
  cases: [
    {
      name: 'implements heartbeat, claim and release',
      run: ({ store }) => {
        expect(store.heartbeat).toBeTypeOf('function');
        expect(store.claim).toBeTypeOf('function');
        expect(store.release).toBeTypeOf('function');
      },
    },
    {
      name: 'refuses to let a second process claim a run whose owner has a live lease',
      run: async ({ store, fixture, clock, newRun }) => {
        const processB = await fixture.openSecond();
        await store.heartbeat!('process-a', 30_000);
        const created = await store.create(newRun('run-1', { owner: 'process-a' }));
        expect(created.owner).toBe('process-a');
        clock.advance(29_999);
        const error = await claim(processB, 'run-1', 'process-b').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RunLeasedError);
        expect(error).toMatchObject({
          name: 'RunLeasedError',
          runId: 'run-1',
          owner: 'process-a',
          leaseUntil: T0 + 30_000,
        });
        expect((error as Error).message).toMatch(/held by owner "process-a"/);
        expect(await processB.load('run-1')).toMatchObject({ version: 1, owner: 'process-a' });
      },
    },
    {
      name: "claims a run once its owner's lease has run out, and fences the old owner off",
      run: async ({ store, fixture, clock, newRun }) => {
        const processB = await fixture.openSecond();
        await store.heartbeat!('process-a', 1_000);
        await processB.heartbeat!('process-b', 30_000);
        await store.create(newRun('run-1', { owner: 'process-a', snapshot: { by: 'A' } }));
        clock.advance(1_000);
        const claimed = await claim(processB, 'run-1', 'process-b');
        expect(claimed).toMatchObject({ version: 2, owner: 'process-b', snapshot: { by: 'A' } });
        expect(claimed.updatedAt).toBe(T0 + 1_000);
        // Process A was only paused; its save computed from version 1 is stale now.
        await expect(
          store.save('run-1', { expectedVersion: 1, status: 'running', snapshot: { by: 'A again' } }),
        ).rejects.toMatchObject({ name: 'StaleRunVersionError', actualVersion: 2 });
        // And it cannot claim the run back while B's lease is live.
        await expect(claim(store, 'run-1', 'process-a')).rejects.toMatchObject({
          name: 'RunLeasedError',
          owner: 'process-b',
        });
      },
    },
    {
      name: 'lets an owner claim its own run again at once (a process restarted under the same name)',
      run: async ({ store, newRun }) => {
        await store.heartbeat!('pod-7', 30_000);
        await store.create(newRun('run-1', { owner: 'pod-7' }));
        expect(await claim(store, 'run-1', 'pod-7')).toMatchObject({ version: 2, owner: 'pod-7' });
      },
    },
    {
      name: 'claims runs that are released, unowned, held by an owner that never beat, or whose owner ended its lease',
      run: async ({ store, newRun }) => {
        await store.heartbeat!('a', 30_000);
        await store.create(newRun('released', { owner: 'a' }));
        expect(await store.release!('released', 'a')).toBe(true);
        expect((await store.load('released'))?.owner).toBeUndefined();
        await store.create(newRun('unowned'));
        await store.create(newRun('ghost-owner', { owner: 'never-beat' }));
        await store.heartbeat!('leaving', 30_000);
        await store.create(newRun('left', { owner: 'leaving' }));
        await store.heartbeat!('leaving', 0);
        for (const runId of ['released', 'unowned', 'ghost-owner', 'left']) {
          expect(await claim(store, runId, 'b'), runId).toMatchObject({ owner: 'b', version: 2 });
        }
      },
    },
    {
      name: 'returns a finished run unchanged to any claimer: nothing can advance it',
      run: async ({ store, newRun }) => {
        await store.heartbeat!('a', 30_000);
        await store.create(newRun('run-1', { owner: 'a' }));
        const done = await store.save('run-1', {
          expectedVersion: 1,
          status: 'completed',
          snapshot: { done: 1 },
        });
        expect(await claim(store, 'run-1', 'b')).toStrictEqual(done);
      },
    },
    {
      name: 'releases only for the holder and leaves the version alone',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1', { owner: 'a' }));
        expect(await store.release!('run-1', 'b')).toBe(false);
        expect(await store.release!('run-1', 'a')).toBe(true);
        expect(await store.release!('run-1', 'a')).toBe(false);
        expect(await store.release!('ghost', 'a')).toBe(false);
        expect(await store.load('run-1')).toMatchObject({ version: 1 });
      },
    },
    {
      name: 'holds nothing it was given of a released run: an evicted run leaves no transcript in memory (issue 29 item 3)',
      run: async ({ store, newRun }) => {
        const gc = fullGc();
        // The objects a runtime hands over at each step: a transcript that grows by appending.
        const given = (() => {
          const first = { role: 'user', content: 'x'.repeat(10_000) };
          let messages = [first];
          const snapshot = () => ({ value: 'awaiting', context: { messages, hints: [] } });
          return {
            first: new WeakRef(first),
            snapshot,
            grow: () => (messages = [...messages, { role: 'tool', content: 'y' }]),
          };
        })();
        await store.create(newRun('run-1', { owner: 'a', status: 'running', snapshot: given.snapshot() }));
        for (let version = 1; version <= 3; version++) {
          given.grow();
          await store.save('run-1', {
            expectedVersion: version,
            status: 'awaiting',
            snapshot: given.snapshot(),
          });
        }
        expect(await store.release!('run-1', 'a')).toBe(true);
        const { first } = given;
        // Drop our own references, then let WeakRefs clear (they hold their target for the job).
        (given as { snapshot?: unknown; grow?: unknown }).snapshot = undefined;
        (given as { snapshot?: unknown; grow?: unknown }).grow = undefined;
        await new Promise((resolve) => setTimeout(resolve, 0));
        gc();
        await new Promise((resolve) => setTimeout(resolve, 0));
        gc();
        expect(first.deref()).toBeUndefined();
        expect((await store.load('run-1'))?.snapshot).toMatchObject({ context: { messages: { length: 4 } } });
      },
    },
    {
      name: 'rejects a claim of an unknown run with RunNotFoundError',
      run: async ({ store }) => {
        await expect(claim(store, 'ghost', 'a')).rejects.toMatchObject({
          name: 'RunNotFoundError',
          runId: 'ghost',
        });
      },
    },
    {
      name: 'lets exactly one of two processes claiming at once win',
      run: async ({ store, fixture, newRun }) => {
        const processB = await fixture.openSecond();
        await store.heartbeat!('a', 30_000);
        await processB.heartbeat!('b', 30_000);
        await store.create(newRun('run-1'));
        const outcomes = await Promise.allSettled([
          claim(store, 'run-1', 'a'),
          claim(processB, 'run-1', 'b'),
          claim(store, 'run-1', 'a'),
          claim(processB, 'run-1', 'b'),
        ]);
        const winners = new Set(
          outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.owner] : [])),
        );
        expect(winners.size).toBe(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(RunLeasedError);
        }
        expect((await store.load('run-1'))?.owner).toBe([...winners][0]);
      },
    },
    {
      name: 'rejects a malformed owner or ttl with TypeError or RangeError',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await expect(claim(store, 'run-1', '')).rejects.toBeInstanceOf(TypeError);
        await expect(store.heartbeat!('a', -1)).rejects.toBeInstanceOf(RangeError);
        await expect(store.heartbeat!('a', 1.5)).rejects.toBeInstanceOf(RangeError);
        await expect(store.create(newRun('run-2', { owner: '' }))).rejects.toBeInstanceOf(TypeError);
        await expect(
          store.save('run-1', {
            expectedVersion: 1,
            status: 'running',
            snapshot: {},
            events: [{ event: 'x', at: Number.NaN }],
          }),
        ).rejects.toBeInstanceOf(TypeError);
        expect(await store.load('run-1')).toMatchObject({ version: 1 });
      },
    },
  ],
};
