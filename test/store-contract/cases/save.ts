/**
 * The RunStore contract's "save" cases: optimistic concurrency: a save names the version it was computed from, and only then lands.
 *
 * @module
 */

import fc from 'fast-check';
import { expect } from 'vitest';
import type { RunStatus, StoredRun } from '../../../stores/run-store.ts';
import { RunNotFoundError, StaleRunVersionError } from '../../../stores/run-store-errors.ts';
import { type StoreCaseGroup, T0 } from '../store-case.ts';

export const save: StoreCaseGroup = {
  name: 'save',
  cases: [
    {
      name: 'advances the version by one and replaces status and snapshot, keeping createdAt',
      run: async ({ store, clock, newRun }) => {
        await store.create(newRun('run-1'));
        clock.set(T0 + 1500);
        const saved = await store.save('run-1', {
          expectedVersion: 1,
          status: 'awaiting',
          snapshot: { value: 'awaiting', context: { turn: 2 } },
        });
        expect(saved).toMatchObject({
          runId: 'run-1',
          version: 2,
          status: 'awaiting',
          snapshot: { value: 'awaiting', context: { turn: 2 } },
          createdAt: T0,
          updatedAt: T0 + 1500,
        });
        expect(await store.load('run-1')).toStrictEqual(saved);
        const third = await store.save('run-1', {
          expectedVersion: 2,
          status: 'completed',
          snapshot: { done: true },
        });
        expect(third.version).toBe(3);
      },
    },
    {
      name: 'keeps the labels when a save omits them and replaces them when it gives them',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1', { labels: { tenant: 'acme', tier: 'gold' } }));
        const kept = await store.save('run-1', { expectedVersion: 1, status: 'running', snapshot: {} });
        expect(kept.labels).toEqual({ tenant: 'acme', tier: 'gold' });
        const replaced = await store.save('run-1', {
          expectedVersion: 2,
          status: 'running',
          snapshot: {},
          labels: { tenant: 'acme' },
        });
        expect(replaced.labels).toEqual({ tenant: 'acme' });
        expect((await store.load('run-1'))?.labels).toEqual({ tenant: 'acme' });
      },
    },
    {
      name: 'rejects a save of an unknown run with RunNotFoundError',
      run: async ({ store }) => {
        const error = await store
          .save('ghost', { expectedVersion: 1, status: 'running', snapshot: {} })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RunNotFoundError);
        expect(error).toMatchObject({ name: 'RunNotFoundError', runId: 'ghost' });
      },
    },
    {
      name: 'rejects a stale write: two processes load v1, one saves, the other gets StaleRunVersionError',
      run: async ({ store, fixture, newRun }) => {
        const processA = store;
        const processB = await fixture.openSecond();
        await processA.create(newRun('run-1', { snapshot: { step: 0 } }));
        const seenByA = await processA.load('run-1');
        const seenByB = await processB.load('run-1');
        expect([seenByA?.version, seenByB?.version]).toEqual([1, 1]);

        await processA.save('run-1', {
          expectedVersion: seenByA!.version,
          status: 'running',
          snapshot: { step: 'A' },
        });
        const error = await processB
          .save('run-1', { expectedVersion: seenByB!.version, status: 'failed', snapshot: { step: 'B' } })
          .catch((e: unknown) => e);

        expect(error).toBeInstanceOf(StaleRunVersionError);
        expect(error).toMatchObject({
          name: 'StaleRunVersionError',
          runId: 'run-1',
          expectedVersion: 1,
          actualVersion: 2,
        });
        expect(await processB.load('run-1')).toMatchObject({
          version: 2,
          status: 'running',
          snapshot: { step: 'A' },
        });
      },
    },
    {
      name: 'rejects an expectedVersion ahead of the stored one as stale too',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1'));
        await expect(
          store.save('run-1', { expectedVersion: 3, status: 'running', snapshot: {} }),
        ).rejects.toMatchObject({ name: 'StaleRunVersionError', expectedVersion: 3, actualVersion: 1 });
      },
    },
    {
      name: 'lets exactly one of many concurrent saves from the same version win',
      run: async ({ store, fixture, newRun }) => {
        const second = await fixture.openSecond();
        await store.create(newRun('run-1'));
        const writers = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : second));
        const outcomes = await Promise.allSettled(
          writers.map((writer, i) =>
            writer.save('run-1', { expectedVersion: 1, status: 'running', snapshot: { writer: i } }),
          ),
        );
        const winners = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') {
            expect(outcome.reason).toBeInstanceOf(StaleRunVersionError);
            expect(outcome.reason).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
          }
        }
        expect(await store.load('run-1')).toMatchObject({ version: 2, snapshot: { writer: winners[0] } });
      },
    },
    {
      name: 'keeps the version moving by exactly 1 per accepted save under random right and wrong versions',
      // ~7 s alone on the memory store; 23 s at a load of 13 (2 cores shared by many test runs).
      timeoutMs: 120_000,
      run: async ({ store, fixture, newRun, propertyRuns }) => {
        const second = await fixture.openSecond();
        const json = fc
          .jsonValue({ maxDepth: 2, stringUnit: 'binary' })
          .map((v) => JSON.parse(JSON.stringify(v)));
        const step = fc.record({
          writer: fc.constantFrom(0, 1),
          offset: fc.oneof(
            { weight: 3, arbitrary: fc.constant(0) },
            { weight: 2, arbitrary: fc.integer({ min: -2, max: 2 }) },
          ),
          status: fc.constantFrom<RunStatus>('running', 'awaiting', 'completed', 'failed', 'canceled'),
          snapshot: json,
        });
        let runs = 0;
        await fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
            const runId = `prop-${++runs}`;
            await store.create(newRun(runId, { snapshot: 'start' }));
            let model = { version: 1, snapshot: 'start' as unknown, status: 'running' as RunStatus };
            for (const { writer, offset, status, snapshot } of steps) {
              const expectedVersion = Math.max(1, model.version + offset);
              const target = writer === 0 ? store : second;
              const outcome = await target.save(runId, { expectedVersion, status, snapshot }).then(
                (run) => ({ run }),
                (error: unknown) => ({ error }),
              );
              if (expectedVersion === model.version) {
                expect(outcome).toHaveProperty('run');
                expect((outcome as { run: StoredRun }).run.version).toBe(model.version + 1);
                model = { version: model.version + 1, snapshot, status };
              } else {
                expect((outcome as { error: unknown }).error).toBeInstanceOf(StaleRunVersionError);
                expect((outcome as { error: StaleRunVersionError }).error.actualVersion).toBe(model.version);
              }
            }
            const stored = await second.load(runId);
            expect(stored).toMatchObject({ version: model.version, status: model.status });
            expect(stored?.snapshot).toEqual(model.snapshot);
            await store.delete(runId);
          }),
          { numRuns: propertyRuns },
        );
      },
    },
  ],
};
