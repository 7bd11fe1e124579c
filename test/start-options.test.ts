import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import { RunValueError } from '../runtime/durable/durable-errors.ts';
import { StartOptionsError } from '../runtime/start-input.ts';
import type { RunStore } from '../stores/run-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { durableStoreKinds, type StoreFixture } from './support/durable-stores.ts';

/**
 * Input that wedged a run (issue 36 item 4, attacked from outside): odd labels and run ids were
 * accepted by `start()`, then every store write was refused and retried forever (on SQLite the
 * run never ended). Now `start()` refuses them itself, and a store refusal that no retry can
 * change fails the run once.
 */

const kinds = await durableStoreKinds('start options (PostgreSQL)');
const prompt = [{ role: 'user' as const, content: 'Charge lin' }];

/** What start() must refuse, with the option its error names. */
const refused: [string, Record<string, unknown>, string][] = [
  ['a number label', { labels: { tenant: 42 } }, 'labels.tenant'],
  ['an object label', { labels: { tenant: { id: 'acme' } } }, 'labels.tenant'],
  ['a BigInt label', { labels: { tenant: 42n } }, 'labels.tenant'],
  ['an own __proto__ label (parsed JSON)', { labels: JSON.parse('{"__proto__": "x"}') }, 'labels.__proto__'],
  ['a constructor label', { labels: { constructor: 'x' } }, 'labels.constructor'],
  ['labels inherited through a prototype', { labels: { __proto__: { tenant: 'acme' } } }, 'labels'],
  ['labels that are an array', { labels: ['acme'] }, 'labels'],
  ['an empty run id', { runId: '' }, 'runId'],
  ['a run id with NUL', { runId: 'a\u0000x' }, 'runId'],
  ['a run id with a lone surrogate', { runId: 'a\ud800' }, 'runId'],
  ['a run id over 512 UTF-8 bytes', { runId: 'x'.repeat(513) }, 'runId'],
  ['a run id of 257 two-byte characters (514 bytes)', { runId: 'é'.repeat(257) }, 'runId'],
  ['a session id with NUL', { sessionId: 's\u0000' }, 'sessionId'],
];

for (const kind of kinds) {
  describe.skipIf(kind.skip !== undefined)(`start() on the ${kind.name} store`, () => {
    let fixture: StoreFixture;
    const runtimes: Runtime[] = [];
    beforeEach(async () => {
      kind.require();
      fixture = await kind.fixture();
    });
    afterEach(async () => {
      await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
      await fixture?.dispose();
    });

    function runtimeOn(store: RunStore, errors: unknown[] = []) {
      const charge = defineTool({
        id: 'billing.charge',
        description: 'Charge a customer',
        input: z.object({ cents: z.number() }),
        execute: async ({ cents }) => ({ charged: cents }),
      });
      const runtime = createRuntime({
        agent: { id: 'billing' },
        telemetry: false,
        store,
        tools: [charge],
        planner: scriptedPlanner([
          { toolCalls: [{ name: 'billing.charge', input: { cents: 4200 } }] },
          { finalResponse: { text: 'Charged.' } },
        ]),
        durable: { retry: { initialMs: 5, maxMs: 10 } },
        onError: (error) => errors.push(error),
      });
      runtimes.push(runtime);
      return runtime;
    }

    it.each(refused)(
      'refuses %s with a StartOptionsError naming it, starting and storing nothing',
      async (_, options, option) => {
        const store = fixture.open();
        const runtime = runtimeOn(store);
        let error: unknown;
        try {
          runtime.start({ messages: prompt, ...(options as object) });
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(StartOptionsError);
        expect(error).toMatchObject({ name: 'StartOptionsError', option });
        expect((error as Error).message).toMatch(
          new RegExp(`^runtime\\.start\\(\\): ${option.replace('.', '\\.')} `),
        );
        await runtime.flush();
        expect(await store.list()).toEqual([]);
      },
    );

    it('takes a run id of exactly 512 UTF-8 bytes, and every label a string, to the end', async () => {
      const store = fixture.open();
      const runId = `${'é'.repeat(255)}xx`;
      const run = runtimeOn(store).start({
        runId,
        messages: prompt,
        labels: { tenant: 'acme', '': 'empty name' },
      });
      expect((await run.result()).status).toBe('completed');
      expect(await store.load(runId)).toMatchObject({
        status: 'completed',
        labels: { tenant: 'acme', '': 'empty name' },
      });
    });

    it('refuses ids with NUL at the store itself, never reading `a\\0x` as `a`', async () => {
      const store = fixture.open();
      await expect(store.load('a\u0000x')).rejects.toThrow(/runId must not contain NUL characters/);
      await expect(
        store.create({ runId: 'a\u0000x', agentId: 'billing', status: 'running', snapshot: {} }),
      ).rejects.toThrow(TypeError);
    });

    it('fails a run whose store refuses its arguments once, instead of retrying forever', async () => {
      // A wrapper that declares a higher limit than the store under it takes: start() lets the
      // id through, the real store refuses it at every write. Before, the run retried forever
      // (on SQLite, stuck in `executing` behind the write-ahead gate).
      const inner = fixture.open();
      let creates = 0;
      const store: RunStore = Object.assign(Object.create(inner) as RunStore, {
        maxRunIdBytes: 1_024,
        create: (run: Parameters<RunStore['create']>[0]) => {
          creates += 1;
          return inner.create(run);
        },
      });
      const errors: unknown[] = [];
      const run = runtimeOn(store, errors).start({ runId: 'r'.repeat(600), messages: prompt });

      await expect(run.result()).rejects.toThrow(RunValueError);
      await expect(run.result()).rejects.toThrow(/runId must be at most 512 UTF-8 bytes, got 600/);
      expect(run.status).toBe('failed');
      expect(run.storage.state).toBe('unstorable');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(creates).toBe(1);
      expect(errors.filter((error) => error instanceof RunValueError)).toHaveLength(1);
      expect(await inner.list()).toEqual([]);
    });
  });
}
