import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { BatchKillChildConfig } from './support/batch-kill-child.ts';
import {
  allAnswers,
  answersOf,
  batchRowKinds,
  CALLS,
  contextOf,
  describeOnSqlStores,
  finishOnNewRuntime,
} from './support/batch-rows.ts';
import { readJsonLines, spawnWorker, waitForLine } from './support/worker-output.ts';

/**
 * A run executing a 2,000-call batch whose process is killed with SIGKILL in the middle of the
 * batch's saves (test/support/batch-kill-child.ts), on SQLite and PostgreSQL (issue 36 item 5,
 * docs/durability.md §Appended rows): what the store holds is the results of calls that had
 * finished, each at its own call, and the run restored elsewhere runs exactly the others.
 */

const kinds = await batchRowKinds('batch rows after SIGKILL (PostgreSQL)');

describeOnSqlStores(kinds, (scope) => {
  it("restores a run whose process was killed with SIGKILL mid-batch with the results its store holds, each the call's own, and runs only the others", {
    timeout: 90_000,
  }, async () => {
    const fixture = await scope.fixture();
    const dir = await mkdtemp(join(tmpdir(), 'toolwarden-batch-kill-'));
    scope.disposeAfter(() => rm(dir, { recursive: true, force: true }));
    const log = join(dir, 'finished.log');
    const worker = spawnWorker(join(import.meta.dirname, 'support', 'batch-kill-child.ts'), {
      ...fixture.child,
      calls: CALLS,
      readyAfter: 600,
      log,
      owner: 'pod-a',
      leaseMs: 400,
    } satisfies BatchKillChildConfig);
    await waitForLine(worker.lines, /^READY$/, worker.exited, 60_000);
    worker.child.kill('SIGKILL');
    expect(await worker.exited).toBe('SIGKILL');
    const finishedInChild = new Set(readJsonLines<number>(log));

    const stored = contextOf((await fixture.open().load('run-killed'))?.snapshot);
    expect(stored.batch.pending).toHaveLength(CALLS);
    const held = new Set<number>();
    stored.batch.results.forEach((result, i) => {
      if (result === null) return;
      held.add(i);
      // A result the store holds is its own call's, and that call had finished in the child.
      expect(result).toMatchObject({
        toolCallId: stored.batch.pending[i]!.toolCallId,
        result: { customer: `customer-${i}` },
      });
      expect(finishedInChild.has(i)).toBe(true);
    });
    expect(held.size).toBeGreaterThan(0);
    expect(held.size).toBeLessThan(CALLS);

    await new Promise((resolve) => setTimeout(resolve, 600)); // the child's lease lapses
    const finished = await finishOnNewRuntime(scope, fixture.open(), 'run-killed');
    expect(finished.status).toBe('completed');
    expect(finished.ran).toEqual(Array.from({ length: CALLS }, (_, n) => n).filter((n) => !held.has(n)));
    expect(answersOf(finished.context)).toEqual(allAnswers());
  });
});
