/**
 * Issue 34 (docs/durability.md §Recovery): a recovery pass lists the stored runs nobody advances,
 * then claims each; a run its holder finished in between comes back from the claim finished and
 * unchanged. It was handed to `onRecovered` (and `recover().recovered`) as if it had been
 * recovered: the effect trials' "run handed to onRecovered in both workers in turn". The listing
 * is made stale here on purpose (a store whose `list` answers from before the run finished).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { done } from './run-fixtures.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** `store`, whose `list` answers with each run as it was before it finished (`running`). */
function staleListing(store: RunStore): RunStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'list')
        return async () => (await target.list()).map((run) => ({ ...run, status: 'running' as const }));
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('a recovery pass over a run finished since the listing', () => {
  it('does not hand it on as recovered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwarden-recover-finished-'));
    dirs.push(dir);
    const path = join(dir, 'runs.db');
    const options = { agent: { id: 'worker' }, telemetry: false as const, onError: () => {} };
    const first = createRuntime({
      ...options,
      planner: scriptedPlanner([done('booked')]),
      store: sqliteStore({ path }),
      durable: { owner: 'pod-1' },
    });
    const run = first.start({ runId: 'r1', messages: [{ role: 'user', content: 'book' }] });
    expect((await run.result()).status).toBe('completed');
    await run.persisted();

    const handed: string[] = [];
    const store = staleListing(sqliteStore({ path }));
    const second = createRuntime({
      ...options,
      planner: scriptedPlanner([]),
      store,
      durable: { owner: 'pod-1', recover: { onRecovered: (recovered) => handed.push(recovered.runId) } },
    });
    const pass = await second.recover();

    expect(pass.recovered).toEqual([]);
    expect(handed).toEqual([]);
    expect((await store.load('r1'))?.status).toBe('completed');
    await second.close();
    await store.close();
    await first.close();
    await first.store.close();
  });
});
