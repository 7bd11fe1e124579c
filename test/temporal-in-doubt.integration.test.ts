import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWorkflowBundle } from '../temporal/index.ts';
import { killWorkerDuring } from './support/temporal-kill.ts';
import { connectTemporal, probeTemporal } from './support/temporal-server.ts';

/**
 * Issue 34 on Temporal (docs/durability.md §Effects): a worker SIGKILLed during a tool call that
 * must not run twice, after its effect. The activity is retried on the other worker, which does
 * not run the call again: the run waits in `awaiting.inDoubt`; resolved `done` from the ledger,
 * it completes, each effect booked once. `TOOLWARDEN_TRIALS` trials (default 2).
 */
const SUITE = 'Temporal: a worker killed mid-activity leaves the call in doubt (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const TRIALS = Number(process.env.TOOLWARDEN_TRIALS ?? 2);

describe.skipIf(!available && !required)(SUITE, () => {
  const children: ChildProcess[] = [];
  let temporal: Awaited<ReturnType<typeof connectTemporal>>;
  let client: Client;
  let dir: string;
  let bundlePath: string;

  beforeAll(async () => {
    temporal = await connectTemporal(available);
    client = temporal.client;
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-temporal-in-doubt-'));
    ({ codePath: bundlePath } = await writeWorkflowBundle(join(dir, 'workflows.js')));
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await temporal?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`holds the retried call in doubt, never runs it again, and resolving continues the run (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const killed = await killWorkerDuring({
        client,
        where: 'tool',
        dir,
        bundlePath,
        amounts: [10, 20],
        budgetMs: 60_000,
        children,
        once: true,
      });
      const first = `${killed.runId}:t1:c1`;
      expect(killed.outcome.status, `trial ${trial}`).toBe('completed');
      expect(killed.inDoubt).toEqual([first]);
      // The killed call ran once (in the killed worker); the retry did not run it.
      expect(killed.attempts.filter((attempt) => attempt.toolCallId === first)).toHaveLength(1);
      const perCall = new Map<string, number>();
      for (const entry of killed.ledger)
        perCall.set(entry.toolCallId, (perCall.get(entry.toolCallId) ?? 0) + 1);
      expect([...perCall.values()].every((n) => n === 1)).toBe(true);
      expect(perCall.size).toBe(2);
    }
  }, 600_000);
});
