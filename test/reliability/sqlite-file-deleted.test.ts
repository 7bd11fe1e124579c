/**
 * Issue 12, defect 9: deleting the SQLite file under a live runtime lost everything after it
 * silently (writes went to the unlinked file). The store now checks that its file is still the
 * one it opened; a write after the file is gone fails as an outage, reported through `onError`
 * and `run.storage`, and the run goes on in memory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { scriptedPlanner } from '../../run/planner.ts';
import { RunStoreUnavailableError } from '../../stores/run-store-errors.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { nextEvent, testRuntime } from '../run-fixtures.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('a SQLite file deleted under a live runtime', () => {
  it('is detected and reported on the next write, not lost silently', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-deleted-'));
    dirs.push(dir);
    const path = join(dir, 'runs.db');
    const errors: unknown[] = [];
    const runtime = testRuntime({
      planner: scriptedPlanner([
        { await: { clarification: { id: 'q', question: 'Which plan?', missingFields: ['plan'] } } },
        { finalResponse: { text: 'ok' } },
      ]),
      store: sqliteStore({ path }),
      durable: { retry: { initialMs: 5, maxMs: 20 } },
      onError: (error) => errors.push(error),
    });
    const run = runtime.start({ runId: 'run-del', messages: [] });
    await nextEvent(run, 'await_clarification');
    await run.persisted();

    await rm(path);
    await run.provideClarification({ id: 'q', answer: 'pro' });

    await vi.waitFor(() => expect(run.storage.state).toBe('failing'));
    const cause = (run.storage.error as Error & { cause?: unknown })?.cause;
    expect(cause).toBeInstanceOf(RunStoreUnavailableError);
    expect(String((cause as Error & { cause?: Error }).cause?.message)).toContain(
      'was deleted while this process had it open',
    );
    expect(errors.length).toBeGreaterThan(0);
  });
});
