/**
 * The RunStore contract as one vitest suite that every store runs unchanged (docs/durability.md): what
 * `run-store.ts` promises, shown with real values. A store that passes it can back the runtime.
 *
 * Usage, in `<store>.test.ts`:
 *
 *     describeRunStoreContract('sqliteStore', async ({ now }) => ({ store, openSecond, openDead, ... }));
 *
 * Test-only: imports vitest and fast-check.
 *
 * @module
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewRun, RunStatus, RunStore, StoredRun } from './run-store.ts';
import {
  RunExistsError,
  RunLeasedError,
  RunNotFoundError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from './run-store-errors.ts';

/** What the contract gives a fixture: the clock every store it opens must use. */
export interface RunStoreContractContext {
  /** Epoch ms; tests move it forward to order runs. */
  now: () => number;
}

/** One test's database and the stores on it. */
export interface RunStoreContractFixture {
  /** A store on a fresh, empty database, using `context.now`. */
  store: RunStore;
  /**
   * Another store on the same database, as a second process would open it (for the memory
   * store, which has no database apart from the object, the same store).
   */
  openSecond(): Promise<RunStore>;
  /** A store whose database is dead or unreachable. */
  openDead(): Promise<RunStore>;
  /** What a RunStoreUnavailableError from `openDead()`'s store must say: the store, the cause. */
  deadMessage: RegExp[];
  /** Closes every store the fixture opened and removes the database. */
  dispose(): Promise<void>;
}

export interface RunStoreContractOptions {
  /** Skip the whole suite (e.g. its database is not running); the reason is in the suite name. */
  skip?: string;
  /** fast-check runs of the version property. Default 40. */
  propertyRuns?: number;
}

const T0 = Date.UTC(2026, 0, 15, 9, 30);

/** A full garbage collection (exposed from inside: vitest's workers run without `--expose-gc`). */
function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Registers the contract suite for one store. */
export function describeRunStoreContract(
  name: string,
  makeStore: (context: RunStoreContractContext) => Promise<RunStoreContractFixture>,
  options: RunStoreContractOptions = {},
): void {
  const title =
    options.skip === undefined
      ? `RunStore contract: ${name}`
      : `RunStore contract: ${name} (${options.skip})`;
  describe.skipIf(options.skip !== undefined)(title, () => {
    let clock = T0;
    let fixture: RunStoreContractFixture | undefined;
    let store: RunStore;

    beforeEach(async () => {
      clock = T0;
      fixture = undefined;
      fixture = await makeStore({ now: () => clock });
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture?.dispose();
    });

    function newRun(runId: string, extra: Partial<NewRun> = {}): NewRun {
      return {
        runId,
        agentId: 'support',
        status: 'running',
        snapshot: { value: 'planning', context: { turn: 1 } },
        ...extra,
      };
    }

    describe('create and load', () => {
      it('creates a run at version 1 stamped with the store clock, and loads it back equal', async () => {
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
      });

      it('leaves sessionId and labels absent (not undefined, not null) when not given', async () => {
        await store.create(newRun('run-1'));
        const loaded = await store.load('run-1');
        expect(loaded).toBeDefined();
        expect(Object.keys(loaded!).sort()).toEqual(
          ['agentId', 'createdAt', 'runId', 'snapshot', 'status', 'updatedAt', 'version'].sort(),
        );
      });

      it('rejects a second create with the same runId with RunExistsError and keeps the first run', async () => {
        await store.create(newRun('run-1', { snapshot: { first: true } }));
        const error = await store
          .create(newRun('run-1', { snapshot: { first: false } }))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RunExistsError);
        expect(error).toMatchObject({ name: 'RunExistsError', runId: 'run-1' });
        expect((await store.load('run-1'))?.snapshot).toEqual({ first: true });
      });

      it('loads undefined for an unknown run', async () => {
        expect(await store.load('no-such-run')).toBeUndefined();
      });

      it('stores copies: mutating the input or a returned run never changes the stored run', async () => {
        const input = newRun('run-1', { snapshot: { items: [1, 2] }, labels: { a: '1' } });
        const created = await store.create(input);
        (input.snapshot as { items: number[] }).items.push(3);
        input.labels!.a = 'changed';
        (created.snapshot as { items: number[] }).items.push(4);
        const loaded = await store.load('run-1');
        (loaded!.snapshot as { items: number[] }).items.push(5);
        expect(await store.load('run-1')).toMatchObject({ snapshot: { items: [1, 2] }, labels: { a: '1' } });
      });

      it('keeps top-level JSON values that are not objects', async () => {
        const snapshots: unknown[] = [null, 'just text', 42.5, [1, 'two', { three: 3 }], true];
        for (const [index, snapshot] of snapshots.entries()) {
          await store.create(newRun(`run-${index}`, { snapshot }));
          expect((await store.load(`run-${index}`))?.snapshot).toEqual(snapshot);
        }
      });
    });

    describe('save', () => {
      it('advances the version by one and replaces status and snapshot, keeping createdAt', async () => {
        await store.create(newRun('run-1'));
        clock = T0 + 1500;
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
      });

      it('keeps the labels when a save omits them and replaces them when it gives them', async () => {
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
      });

      it('rejects a save of an unknown run with RunNotFoundError', async () => {
        const error = await store
          .save('ghost', { expectedVersion: 1, status: 'running', snapshot: {} })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RunNotFoundError);
        expect(error).toMatchObject({ name: 'RunNotFoundError', runId: 'ghost' });
      });

      it('rejects a stale write: two processes load v1, one saves, the other gets StaleRunVersionError', async () => {
        const processA = store;
        const processB = await fixture!.openSecond();
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
      });

      it('rejects an expectedVersion ahead of the stored one as stale too', async () => {
        await store.create(newRun('run-1'));
        await expect(
          store.save('run-1', { expectedVersion: 3, status: 'running', snapshot: {} }),
        ).rejects.toMatchObject({ name: 'StaleRunVersionError', expectedVersion: 3, actualVersion: 1 });
      });

      it('lets exactly one of many concurrent saves from the same version win', async () => {
        const second = await fixture!.openSecond();
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
      });

      it('keeps the version moving by exactly 1 per accepted save under random right and wrong versions', async () => {
        const second = await fixture!.openSecond();
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
          { numRuns: options.propertyRuns ?? 40 },
        );
      });
    });

    describe('run snapshots (transcript and hints grow at every step)', () => {
      /** A snapshot shaped like a run's: its transcript and hints only ever gain entries. */
      function runSnapshot(messages: unknown[], hints: unknown[] = [], value = 'planning') {
        return { status: 'active', value, context: { turn: messages.length, messages, hints }, children: {} };
      }
      const message = (n: number) => ({ role: n % 2 === 0 ? 'assistant' : 'tool', content: `entry ${n}` });

      it('loads back every step of a growing run, including after a reload, a rebuild and a shrink', async () => {
        let messages = [message(0)];
        let hints: unknown[] = [];
        await store.create(newRun('run-1', { snapshot: runSnapshot(messages) }));
        let version = 1;
        for (let step = 1; step <= 12; step++) {
          messages = [...messages, message(step)];
          if (step % 4 === 0) hints = [...hints, { tool: 't', reason: 'invalid_arguments', step }];
          // Step 6 rebuilds the transcript (equal entries, new objects); step 9 shrinks it.
          if (step === 6) messages = structuredClone(messages);
          if (step === 9) messages = messages.slice(0, 3);
          const saved = await store.save('run-1', {
            expectedVersion: version,
            status: 'running',
            snapshot: runSnapshot(messages, hints),
          });
          version = saved.version;
          expect(saved.snapshot).toEqual(runSnapshot(messages, hints));
          expect((await store.load('run-1'))?.snapshot).toEqual(runSnapshot(messages, hints));
        }
        expect((await store.list())[0]?.snapshot).toEqual(runSnapshot(messages, hints));
      });

      it('a stale save of a run snapshot changes nothing, and the next save from the stored version is whole', async () => {
        const messages = [message(0), message(1)];
        await store.create(newRun('run-1', { snapshot: runSnapshot(messages) }));
        await store.save('run-1', {
          expectedVersion: 1,
          status: 'running',
          snapshot: runSnapshot([...messages, message(2)]),
        });
        const stale = await store
          .save('run-1', {
            expectedVersion: 1,
            status: 'running',
            snapshot: runSnapshot([...messages, message(9), message(10)]),
          })
          .catch((error: unknown) => error);
        expect(stale).toBeInstanceOf(StaleRunVersionError);
        const loaded = await store.load('run-1');
        expect(loaded?.snapshot).toEqual(runSnapshot([...messages, message(2)]));
        // A writer that loaded the run (new objects) appends after what it loaded.
        const reloaded = loaded!.snapshot as ReturnType<typeof runSnapshot>;
        await store.save('run-1', {
          expectedVersion: 2,
          status: 'awaiting',
          snapshot: runSnapshot([...reloaded.context.messages, message(3)], [], 'awaiting'),
        });
        expect((await store.load('run-1'))?.snapshot).toEqual(
          runSnapshot([...messages, message(2), message(3)], [], 'awaiting'),
        );
      });

      it('loads and lists a run whole while saves land (another process reading a live run)', async () => {
        // A snapshot kept apart in rows must be read at one point in time with its head: read in two
        // statements, a save landing between them gave "messages should have 2 rows, the store has 4".
        let messages = [message(0)];
        await store.create(newRun('run-1', { snapshot: runSnapshot(messages) }));
        const reader = await fixture!.openSecond();
        let writing = true;
        const writes = (async () => {
          for (let step = 1, version = 1; step <= 40; step++) {
            messages = [...messages, message(step)];
            version = (
              await store.save('run-1', {
                expectedVersion: version,
                status: 'running',
                snapshot: runSnapshot(messages),
              })
            ).version;
          }
          writing = false;
        })();
        const seen: number[] = [];
        while (writing) {
          for (const run of [await reader.load('run-1'), (await reader.list())[0]]) {
            const context = (run!.snapshot as ReturnType<typeof runSnapshot>).context;
            expect(context.messages).toHaveLength(context.turn);
            seen.push(context.turn);
          }
        }
        await writes;
        expect(seen.length).toBeGreaterThan(0);
      });

      it('claims and deletes a run whose transcript is kept apart', async () => {
        await store.create(newRun('run-1', { snapshot: runSnapshot([message(0), message(1)]) }));
        const claimed = await store.claim!('run-1', 'owner-a');
        expect(claimed.snapshot).toEqual(runSnapshot([message(0), message(1)]));
        expect(await store.delete('run-1')).toBe(true);
        await store.create(newRun('run-1', { snapshot: runSnapshot([message(7)]) }));
        expect((await store.load('run-1'))?.snapshot).toEqual(runSnapshot([message(7)]));
      });
    });

    describe('list', () => {
      async function seed(): Promise<void> {
        const runs: [string, RunStatus, string | undefined][] = [
          ['r-a', 'running', 's-1'],
          ['r-b', 'awaiting', 's-1'],
          ['r-c', 'completed', 's-2'],
          ['r-d', 'awaiting', undefined],
          ['r-e', 'failed', 's-2'],
        ];
        for (const [runId, status, sessionId] of runs) {
          clock += 1000;
          await store.create(newRun(runId, { status, ...(sessionId === undefined ? {} : { sessionId }) }));
        }
      }
      const ids = (runs: StoredRun[]) => runs.map((run) => run.runId);

      it('lists every run, most recently updated first', async () => {
        await seed();
        expect(ids(await store.list())).toEqual(['r-e', 'r-d', 'r-c', 'r-b', 'r-a']);
        clock += 1000;
        await store.save('r-b', { expectedVersion: 1, status: 'running', snapshot: {} });
        expect(ids(await store.list())).toEqual(['r-b', 'r-e', 'r-d', 'r-c', 'r-a']);
      });

      it('breaks updatedAt ties by write order, latest write first', async () => {
        for (const runId of ['t-1', 't-2', 't-3']) await store.create(newRun(runId));
        await store.save('t-1', { expectedVersion: 1, status: 'running', snapshot: {} });
        expect(ids(await store.list())).toEqual(['t-1', 't-3', 't-2']);
      });

      it('filters by one status, several statuses, none, a session, and combinations', async () => {
        await seed();
        expect(ids(await store.list({ status: 'awaiting' }))).toEqual(['r-d', 'r-b']);
        expect(ids(await store.list({ status: ['completed', 'failed'] }))).toEqual(['r-e', 'r-c']);
        expect(await store.list({ status: [] })).toEqual([]);
        expect(ids(await store.list({ sessionId: 's-1' }))).toEqual(['r-b', 'r-a']);
        expect(ids(await store.list({ sessionId: 's-2', status: 'failed' }))).toEqual(['r-e']);
        expect(await store.list({ sessionId: 'nobody' })).toEqual([]);
      });

      it('returns at most `limit` runs, the newest ones', async () => {
        await seed();
        expect(ids(await store.list({ limit: 2 }))).toEqual(['r-e', 'r-d']);
        expect(ids(await store.list({ status: 'awaiting', limit: 1 }))).toEqual(['r-d']);
      });

      it('returns whole runs with their snapshots', async () => {
        await store.create(
          newRun('r-1', { sessionId: 's-1', snapshot: { deep: { list: [1, { x: 'y' }] } } }),
        );
        expect(await store.list({ sessionId: 's-1' })).toEqual([await store.load('r-1')]);
      });
    });

    describe('events', () => {
      it('numbers appended events 1..n per run, in order, across calls', async () => {
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
      });

      it('keeps a separate sequence per run', async () => {
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
      });

      it('pages with afterSeq and limit', async () => {
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
      });

      it('gives concurrent appenders from two processes distinct, gapless numbers', async () => {
        const second = await fixture!.openSecond();
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
      });

      it('rejects appending to an unknown run with RunNotFoundError and reads [] for it', async () => {
        await expect(store.appendEvents('ghost', [{ event: {}, at: 1 }])).rejects.toBeInstanceOf(
          RunNotFoundError,
        );
        expect(await store.readEvents('ghost')).toEqual([]);
      });

      it('treats an empty append as a no-op', async () => {
        await store.create(newRun('run-1'));
        await store.appendEvents('run-1', []);
        await store.appendEvents('run-1', [{ event: 'first', at: 1 }]);
        expect((await store.readEvents('run-1')).map((e) => e.seq)).toEqual([1]);
      });

      it('does not change the run: appending events leaves version and updatedAt alone', async () => {
        const created = await store.create(newRun('run-1'));
        clock += 5000;
        await store.appendEvents('run-1', [{ event: 'x', at: clock }]);
        expect(await store.load('run-1')).toStrictEqual(created);
      });
    });

    describe('events written with the run', () => {
      it('appends the events given to create and save in the same write, numbered after the log', async () => {
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
      });

      it('appends nothing when the save is stale or the run unknown: events land exactly when the snapshot does', async () => {
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
      });

      it('keeps the first run and its log when a create with events finds the id taken', async () => {
        await store.create(newRun('run-1', { events: [{ event: 'original', at: 1 }] }));
        await expect(
          store.create(newRun('run-1', { events: [{ event: 'intruder', at: 2 }] })),
        ).rejects.toBeInstanceOf(RunExistsError);
        expect((await store.readEvents('run-1')).map((e) => [e.seq, e.event])).toEqual([[1, 'original']]);
      });

      it('gives saves with events from two processes distinct, gapless numbers', async () => {
        const second = await fixture!.openSecond();
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
      });
    });

    describe('ownership (leases)', () => {
      const claim = (target: RunStore, runId: string, owner: string) => target.claim!(runId, owner);

      it('implements heartbeat, claim and release', () => {
        expect(store.heartbeat).toBeTypeOf('function');
        expect(store.claim).toBeTypeOf('function');
        expect(store.release).toBeTypeOf('function');
      });

      it('refuses to let a second process claim a run whose owner has a live lease', async () => {
        const processB = await fixture!.openSecond();
        await store.heartbeat!('process-a', 30_000);
        const created = await store.create(newRun('run-1', { owner: 'process-a' }));
        expect(created.owner).toBe('process-a');
        clock += 29_999;
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
      });

      it("claims a run once its owner's lease has run out, and fences the old owner off", async () => {
        const processB = await fixture!.openSecond();
        await store.heartbeat!('process-a', 1_000);
        await processB.heartbeat!('process-b', 30_000);
        await store.create(newRun('run-1', { owner: 'process-a', snapshot: { by: 'A' } }));
        clock += 1_000;
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
      });

      it('lets an owner claim its own run again at once (a process restarted under the same name)', async () => {
        await store.heartbeat!('pod-7', 30_000);
        await store.create(newRun('run-1', { owner: 'pod-7' }));
        expect(await claim(store, 'run-1', 'pod-7')).toMatchObject({ version: 2, owner: 'pod-7' });
      });

      it('claims runs that are released, unowned, held by an owner that never beat, or whose owner ended its lease', async () => {
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
      });

      it('returns a finished run unchanged to any claimer: nothing can advance it', async () => {
        await store.heartbeat!('a', 30_000);
        await store.create(newRun('run-1', { owner: 'a' }));
        const done = await store.save('run-1', {
          expectedVersion: 1,
          status: 'completed',
          snapshot: { done: 1 },
        });
        expect(await claim(store, 'run-1', 'b')).toStrictEqual(done);
      });

      it('releases only for the holder and leaves the version alone', async () => {
        await store.create(newRun('run-1', { owner: 'a' }));
        expect(await store.release!('run-1', 'b')).toBe(false);
        expect(await store.release!('run-1', 'a')).toBe(true);
        expect(await store.release!('run-1', 'a')).toBe(false);
        expect(await store.release!('ghost', 'a')).toBe(false);
        expect(await store.load('run-1')).toMatchObject({ version: 1 });
      });

      it('holds nothing it was given of a released run: an evicted run leaves no transcript in memory (issue 29 item 3)', async () => {
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
      });

      it('rejects a claim of an unknown run with RunNotFoundError', async () => {
        await expect(claim(store, 'ghost', 'a')).rejects.toMatchObject({
          name: 'RunNotFoundError',
          runId: 'ghost',
        });
      });

      it('lets exactly one of two processes claiming at once win', async () => {
        const processB = await fixture!.openSecond();
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
      });

      it('rejects a malformed owner or ttl with TypeError or RangeError', async () => {
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
      });
    });

    describe('delete', () => {
      it('deletes the run and its events, and reports whether it existed', async () => {
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
      });

      it('lets a deleted run id start over at version 1 with an empty event log', async () => {
        await store.create(newRun('run-1'));
        await store.save('run-1', { expectedVersion: 1, status: 'completed', snapshot: {} });
        await store.appendEvents('run-1', [{ event: 'old', at: 1 }]);
        await store.delete('run-1');

        expect((await store.create(newRun('run-1'))).version).toBe(1);
        await store.appendEvents('run-1', [{ event: 'new', at: 2 }]);
        expect((await store.readEvents('run-1')).map((e) => [e.seq, e.event])).toEqual([[1, 'new']]);
      });

      function ids(runs: StoredRun[]): string[] {
        return runs.map((run) => run.runId);
      }
    });

    describe('values', () => {
      it('round-trips a ~1 MB snapshot unchanged', async () => {
        const snapshot = {
          status: 'active',
          value: 'awaiting',
          context: {
            messages: Array.from({ length: 2000 }, (_, i) => ({
              role: i % 2 === 0 ? 'user' : 'assistant',
              content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(18)}`,
              toolCalls: [{ id: `call-${i}`, name: 'crm.search', input: { q: `q${i}`, page: i } }],
            })),
          },
        };
        const size = JSON.stringify(snapshot).length;
        expect(size).toBeGreaterThan(1_000_000);
        await store.create(newRun('big'));
        await store.save('big', { expectedVersion: 1, status: 'awaiting', snapshot });
        expect((await store.load('big'))?.snapshot).toEqual(snapshot);
      });

      it('round-trips any Unicode, including NUL and lone surrogates, in ids, snapshot, labels and events', async () => {
        const text = 'héllo 世界 مرحبا 🧑‍🚀 e\u0301 \u2028\u2029 "quoted" \\back\\slash\\u0000 \t\n';
        const awkward = {
          text,
          nul: 'before\u0000after',
          lone: ['\ud800', 'x\udc00y', '🙂'.slice(0, 1)],
          'key with \u0000 NUL': 1,
          '\ud83d': 'lone-surrogate key',
          ['__proto__']: { stays: 'a plain key' },
          '$toolwarden.jsonb': 'a key that looks like an escape marker',
          $o: [['k', 'v']],
          $s: [65],
        };
        const snapshot = JSON.parse(JSON.stringify(awkward));
        const runId = 'run-🧑‍🚀-ü';
        await store.create(
          newRun(runId, { sessionId: 'séance-会話', labels: { étiquette: text, nul: 'a\u0000b' }, snapshot }),
        );
        await store.appendEvents(runId, [
          { event: snapshot, at: 1 },
          { event: text, at: 2 },
        ]);

        const loaded = await store.load(runId);
        expect(loaded?.snapshot).toEqual(snapshot);
        expect(Object.hasOwn(loaded?.snapshot as object, '__proto__')).toBe(true);
        expect(loaded?.sessionId).toBe('séance-会話');
        expect(loaded?.labels).toEqual({ étiquette: text, nul: 'a\u0000b' });
        expect((await store.readEvents(runId)).map((e) => e.event)).toEqual([snapshot, text]);
        expect((await store.list({ sessionId: 'séance-会話' })).map((run) => run.runId)).toEqual([runId]);
      });
    });

    describe('bad input', () => {
      it('rejects malformed arguments with TypeError or RangeError before touching the store', async () => {
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
      });
    });

    describe('unavailable', () => {
      it('rejects every call on a closed store with RunStoreUnavailableError naming the store', async () => {
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
          expect((error as Error).message).toMatch(fixture!.deadMessage[0]!);
        }
      });

      it('rejects calls on a dead database with RunStoreUnavailableError saying which store and why', async () => {
        const dead = await fixture!.openDead();
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
          for (const pattern of fixture!.deadMessage)
            expect((error as Error).message, operation).toMatch(pattern);
        }
        // The caller's state is untouched, ready to be saved again when the database is back.
        expect(update).toEqual({ expectedVersion: 1, status: 'running', snapshot: { keep: ['me'] } });
        await dead.close();
      });
    });
  });
}
