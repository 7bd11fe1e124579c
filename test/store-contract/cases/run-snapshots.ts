/**
 * The RunStore contract's "run snapshots" cases: snapshots shaped like a run's, whose transcript and hints grow at every step and whose batch's results land one by one (the SQL stores keep them apart in rows).
 *
 * @module
 */

import fc from 'fast-check';
import { expect } from 'vitest';
import { StaleRunVersionError } from '../../../stores/run-store-errors.ts';
import type { StoreCaseGroup } from '../store-case.ts';

/** A snapshot shaped like a run's: its transcript and hints only ever gain entries. */
function runSnapshot(messages: unknown[], hints: unknown[] = [], value = 'planning') {
  return { status: 'active', value, context: { turn: messages.length, messages, hints }, children: {} };
}
const message = (n: number) => ({ role: n % 2 === 0 ? 'assistant' : 'tool', content: `entry ${n}` });

/**
 * A run snapshot executing a batch: its calls, their results (null until done), the results
 * handed on, and those the policies are yet to review (`newResults`, the same list until then).
 */
function batchSnapshot(batch: {
  pending: unknown[];
  results: unknown[];
  lastResults: unknown[];
  newResults: unknown[];
}) {
  return {
    status: 'active',
    value: 'executing',
    context: {
      turn: 1,
      messages: [message(0)],
      hints: [],
      batch: { ...batch, newHints: [] },
    },
    children: {},
  };
}
const toolCall = (n: number) => ({ toolCallId: `call-${n}`, name: 'crm.lookup', input: { id: n } });
const toolResult = (n: number, step: number) => ({
  toolCallId: `call-${n}`,
  name: 'crm.lookup',
  result: { step },
});

/** One change between two saves of a batch: results landing in any order, a slot cleared, the batch rebuilt, cut short, folded. */
const batchChange = fc.oneof(
  fc.record({ fill: fc.array(fc.nat(40), { minLength: 1, maxLength: 8 }) }),
  fc.record({ clear: fc.nat(40) }),
  fc.record({ next: fc.integer({ min: 0, max: 40 }) }),
  fc.record({ shrink: fc.nat(40) }),
  fc.constant({ rebuild: true }),
  fc.constant({ fold: true }),
  fc.constant({ reviewed: true }),
  fc.constant({ same: true }),
);

export const runSnapshots: StoreCaseGroup = {
  name: 'run snapshots (transcript and hints grow at every step)',
  cases: [
    {
      name: 'loads back every step of a growing run, including after a reload, a rebuild and a shrink',
      run: async ({ store, newRun }) => {
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
      },
    },
    {
      name: 'a stale save of a run snapshot changes nothing, and the next save from the stored version is whole',
      run: async ({ store, newRun }) => {
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
      },
    },
    {
      name: 'loads and lists a run whole while saves land (another process reading a live run)',
      run: async ({ store, fixture, newRun }) => {
        // A snapshot kept apart in rows must be read at one point in time with its head: read in two
        // statements, a save landing between them gave "messages should have 2 rows, the store has 4".
        let messages = [message(0)];
        await store.create(newRun('run-1', { snapshot: runSnapshot(messages) }));
        const reader = await fixture.openSecond();
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
      },
    },
    {
      name: "round-trips a batch's calls and results through any sequence of results landing out of order, clears, rebuilds, shrinks, folds, reviews and reopened stores",
      run: async ({ store, fixture, newRun, propertyRuns }) => {
        const second = await fixture.openSecond();
        let n = 0;
        // Each change is saved by the store that saved the one before, or (`reopen`) by the other
        // one, which knows nothing of what is stored and rewrites what is kept apart.
        const changes = fc.array(fc.record({ change: batchChange, reopen: fc.boolean() }), { maxLength: 12 });
        await fc.assert(
          fc.asyncProperty(changes, async (steps) => {
            const runId = `run-batch-${n++}`;
            let pending: unknown[] = Array.from({ length: 30 }, (_, i) => toolCall(i));
            let results: unknown[] = pending.map(() => null);
            let lastResults: unknown[] = [];
            let newResults: unknown[] = [];
            let writer = store;
            let version = (
              await writer.create(
                newRun(runId, { snapshot: batchSnapshot({ pending, results, lastResults, newResults }) }),
              )
            ).version;
            for (const [step, { change, reopen }] of steps.entries()) {
              if (reopen) writer = writer === store ? second : store;
              if ('fill' in change && results.length > 0) {
                results = results.slice();
                for (const slot of change.fill) results[slot % results.length] = toolResult(slot, step);
              } else if ('clear' in change && results.length > 0) {
                results = results.slice();
                results[change.clear % results.length] = null;
              } else if ('next' in change) {
                pending = Array.from({ length: change.next }, (_, i) => toolCall(100 * step + i));
                results = pending.map(() => null);
              } else if ('shrink' in change) {
                pending = pending.slice(0, change.shrink);
                results = results.slice(0, change.shrink);
              } else if ('rebuild' in change) {
                [pending, results, lastResults, newResults] = structuredClone([
                  pending,
                  results,
                  lastResults,
                  newResults,
                ]);
              } else if ('fold' in change) {
                lastResults = results.map((result, i) => result ?? toolResult(i, step));
                newResults = lastResults;
                pending = [];
                results = [];
              } else if ('reviewed' in change) {
                newResults = [];
              }
              const snapshot = batchSnapshot({ pending, results, lastResults, newResults });
              const saved = await writer.save(runId, {
                expectedVersion: version,
                status: 'running',
                snapshot,
              });
              version = saved.version;
              expect((await second.load(runId))?.snapshot).toEqual(snapshot);
            }
          }),
          { numRuns: propertyRuns },
        );
      },
    },
    {
      name: 'claims and deletes a run whose transcript is kept apart',
      run: async ({ store, newRun }) => {
        await store.create(newRun('run-1', { snapshot: runSnapshot([message(0), message(1)]) }));
        const claimed = await store.claim!('run-1', 'owner-a');
        expect(claimed.snapshot).toEqual(runSnapshot([message(0), message(1)]));
        expect(await store.delete('run-1')).toBe(true);
        await store.create(newRun('run-1', { snapshot: runSnapshot([message(7)]) }));
        expect((await store.load('run-1'))?.snapshot).toEqual(runSnapshot([message(7)]));
      },
    },
  ],
};
