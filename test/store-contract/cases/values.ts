/**
 * The RunStore contract's "values" cases: large snapshots and awkward Unicode are kept exactly.
 *
 * @module
 */

import { expect } from 'vitest';
import type { StoreCaseGroup } from '../store-case.ts';

export const values: StoreCaseGroup = {
  name: 'values',
  cases: [
    {
      name: 'round-trips a ~1 MB snapshot unchanged',
      run: async ({ store, newRun }) => {
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
      },
    },
    {
      name: 'round-trips any Unicode, including NUL and lone surrogates, in ids, snapshot, labels and events',
      run: async ({ store, newRun }) => {
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
      },
    },
  ],
};
