/**
 * Issue 12, defects 1 and 3 (the durable layer's part): a value the store cannot write (a BigInt,
 * a cycle, a function) was retried for ever as if the database were down, left the write-ahead
 * gate waiting for ever, or crashed the process from an unhandled rejection. A value error is
 * not an outage: the persister gives up at once, rejects its waiters and tells the runtime,
 * which stops that run; other runs go on. Values an app hands in are refused at the handle.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../../run/planner.ts';
import { RunValueError } from '../../runtime/durable/durable-errors.ts';
import { RunPersister } from '../../runtime/durable/run-persister.ts';
import { RunAnswerError } from '../../runtime/run-handle.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { nextEvent, testRuntime } from '../run-fixtures.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function sqlite() {
  const dir = await mkdtemp(join(tmpdir(), 'tw-values-'));
  dirs.push(dir);
  return sqliteStore({ path: join(dir, 'runs.db') });
}

describe.each([['sqlite', sqlite]])('a snapshot the %s store cannot write', (_, open) => {
  it.each([
    ['a BigInt', () => ({ n: 10n })],
    [
      'a cycle',
      () => {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        return cyclic;
      },
    ],
  ])('(%s) is given up at once, not retried; waiters are rejected; the runtime is told', async (__, bad) => {
    const store = await open();
    const lost: Error[] = [];
    const failures: Error[] = [];
    const persister = new RunPersister({
      store,
      runId: 'r-bad',
      agentId: 'agent',
      retry: { initialMs: 5, maxMs: 10 },
      onError: (error) => failures.push(error),
      onConflict: (error) => lost.push(error),
    });
    const gate = persister.whenRecorded('r-bad:t1:c1');
    persister.snapshot({
      status: 'running',
      state: 'executing',
      snapshot: { value: 'executing', context: bad() },
      labels: {},
      toolCallIds: ['r-bad:t1:c1'],
    });
    await expect(persister.persisted()).rejects.toBeInstanceOf(RunValueError);
    await expect(gate).rejects.toBeInstanceOf(RunValueError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lost).toHaveLength(1);
    expect(failures).toEqual([]); // never reported as an outage being retried
    expect(persister.status.state).toBe('unstorable');
    await store.close?.();
  });
});

describe('an external tool result JSON cannot carry', () => {
  it('is refused by provideToolResults; the run still waits and takes a good answer', async () => {
    const runtime = testRuntime({
      planner: scriptedPlanner([
        {
          await: { externalTools: { id: 'ext', calls: [{ name: 'app.pay', toolCallId: 'p1', input: {} }] } },
        },
        { finalResponse: { text: 'paid' } },
      ]),
    });
    const run = runtime.start({ messages: [] });
    await nextEvent(run, 'await_external_tools');

    await expect(run.provideToolResults([{ toolCallId: 'p1', result: { cents: 10n } }])).rejects.toThrowError(
      RunAnswerError,
    );
    expect(run.status).toBe('awaiting');
    await run.provideToolResults([{ toolCallId: 'p1', result: { cents: 10 } }]);
    expect((await run.result()).status).toBe('completed');
  });
});
