import { describe, expect, it } from 'vitest';
import { killWorkerDuring } from './support/temporal-kill.ts';
import { temporalKillSetup } from './support/temporal-kill-setup.ts';
import { probeTemporal } from './support/temporal-server.ts';

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
  const setup = temporalKillSetup(available, 'toolwarden-temporal-in-doubt-');

  it(`holds the retried call in doubt, never runs it again, and resolving continues the run (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const killed = await killWorkerDuring({
        client: setup.client,
        where: 'tool',
        dir: setup.dir,
        bundlePath: setup.bundlePath,
        amounts: [10, 20],
        budgetMs: 60_000,
        children: setup.children,
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
