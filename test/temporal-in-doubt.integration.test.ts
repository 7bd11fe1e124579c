import { describe, expect, it } from 'vitest';
import { type KilledRun, killWorkerDuring } from './support/temporal-kill.ts';
import { temporalKillSetup } from './support/temporal-kill-setup.ts';
import { probeTemporal } from './support/temporal-server.ts';

/**
 * Issue 34 on Temporal (docs/durability.md §Effects): a worker SIGKILLed during a tool call that
 * must not run twice, after its effect. The activity is retried on the other worker, which does
 * not run the call again: the run waits in `awaiting.inDoubt`; resolved `done` from the ledger,
 * it completes, each effect booked once. `TOOLWARDEN_TRIALS` trials (default 2; the counts of 30
 * are in docs/durability.md §Effects). Every trial runs before the assertions, and the counts are
 * printed, so a failure shows how many trials it was.
 */
const SUITE = 'Temporal: a worker killed mid-activity leaves the call in doubt (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const TRIALS = Number(process.env.TOOLWARDEN_TRIALS ?? 2);

/** One trial's verdict: what the killed call became and whether any effect ran twice. */
function verdict(killed: KilledRun) {
  const first = `${killed.runId}:t1:c1`;
  const perCall = new Map<string, number>();
  for (const entry of killed.ledger) perCall.set(entry.toolCallId, (perCall.get(entry.toolCallId) ?? 0) + 1);
  return {
    status: killed.outcome.status,
    heldInDoubt: killed.inDoubt.length === 1 && killed.inDoubt[0] === first,
    // The killed call ran once (in the killed worker); the retry did not run it.
    killedCallRuns: killed.attempts.filter((attempt) => attempt.toolCallId === first).length,
    doubled: [...perCall.values()].filter((n) => n > 1).length,
    booked: perCall.size,
    recoveryMs: killed.recoveryMs,
  };
}

describe.skipIf(!available && !required)(SUITE, () => {
  const setup = temporalKillSetup(available, 'toolwarden-temporal-in-doubt-');

  it(
    `holds the retried call in doubt, never runs it again, and resolving continues the run (${TRIALS} trials)`,
    async () => {
      const verdicts: ReturnType<typeof verdict>[] = [];
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
        verdicts.push(verdict(killed));
      }
      const count = (test: (v: ReturnType<typeof verdict>) => boolean) => verdicts.filter(test).length;
      const recovery = verdicts.map((v) => v.recoveryMs).sort((a, b) => a - b);
      console.info(
        `temporal in-doubt kill: ${TRIALS} trials, ${count((v) => v.status === 'completed')} completed, ` +
          `${count((v) => v.heldInDoubt)} held in doubt, ${count((v) => v.killedCallRuns === 1)} killed calls run once, ` +
          `${verdicts.reduce((n, v) => n + v.doubled, 0)} effects doubled, ${count((v) => v.booked !== 2)} runs missing an effect; ` +
          `kill → completed median ${recovery[Math.floor(recovery.length / 2)]} ms, max ${recovery.at(-1)} ms`,
      );
      verdicts.forEach((v, trial) => {
        expect(v, `trial ${trial}`).toMatchObject({
          status: 'completed',
          heldInDoubt: true,
          killedCallRuns: 1,
          doubled: 0,
          booked: 2,
        });
      });
    },
    Math.max(600_000, TRIALS * 60_000),
  );
});
