/**
 * Issue 34's SIGKILL trials at full size (docs/durability.md §Effects): counts over many trials
 * of test/support/effects-trials.ts, printed as a table. The CI-sized version is
 * test/reliability/effects-kill.test.ts.
 *
 *     node --import tsx test/reliability/effects-trials.ts [--owners 20] [--effects 30] [--no-postgres]
 *
 * `--owners N`: N two-live-instances trials per store (8 runs × 3 steps under `pod-1`, SIGKILL,
 * two `pod-1` workers with `recover` at once). `--effects N`: N kill-after-effect trials per store
 * without `reconcile` (calls wait in `awaiting.inDoubt`, resolved from the ledger) and N with it.
 * PostgreSQL is `TOOLWARDEN_PG_URL` (default the test database); skipped when unreachable.
 */
import { parseArgs } from 'node:util';
import {
  killAfterEffectTrial,
  type TrialOutcome,
  type TrialStore,
  twoLiveInstancesTrial,
} from '../support/effects-trials.ts';
import { DEFAULT_POSTGRES_TEST_URL, probePostgresTestDatabase } from '../support/postgres-test-database.ts';

const { values } = parseArgs({
  options: {
    owners: { type: 'string', default: '20' },
    effects: { type: 'string', default: '30' },
    'no-postgres': { type: 'boolean', default: false },
  },
});
const stores: { name: string; store: TrialStore }[] = [{ name: 'sqlite', store: { kind: 'sqlite' } }];
if (!values['no-postgres']) {
  const database = await probePostgresTestDatabase('effects trials');
  if (database.reachable) stores.push({ name: 'postgres', store: { kind: 'postgres', url: database.url } });
  else
    console.error(
      `PostgreSQL skipped: not reachable at ${process.env.TOOLWARDEN_PG_URL || DEFAULT_POSTGRES_TEST_URL}`,
    );
}

/** One series' sums: the counts of its trials' outcomes, and what they were told. */
type Row = Omit<TrialOutcome, 'reports' | 'handovers'> & {
  /** Handovers between the recovering workers by kind (effects-leases.ts), and the longest stall seen. */
  overlaps: number;
  takeovers: number;
  unclear: number;
  /** Claims that returned a run its holder had finished meanwhile (nothing passed). */
  finished: number;
  maxGapMs: number;
  trial: string;
  store: string;
  trials: number;
  /** What the worker that did not get a run was told, once per trial (first held entry). */
  told: string;
  failed: number;
};

async function series(
  trial: string,
  store: { name: string; store: TrialStore },
  n: number,
  run: () => Promise<TrialOutcome>,
) {
  const row: Row = {
    trial,
    store: store.name,
    trials: 0,
    doubled: 0,
    lost: 0,
    recoveredTwice: 0,
    inDoubt: 0,
    inDoubtDone: 0,
    effects: 0,
    overlaps: 0,
    takeovers: 0,
    unclear: 0,
    finished: 0,
    maxGapMs: 0,
    told: '',
    failed: 0,
  };
  for (let i = 0; i < n; i++) {
    try {
      const outcome = await run();
      row.trials++;
      row.doubled += outcome.doubled;
      row.lost += outcome.lost;
      row.recoveredTwice += outcome.recoveredTwice;
      row.inDoubt += outcome.inDoubt;
      row.inDoubtDone += outcome.inDoubtDone;
      row.effects += outcome.effects;
      for (const handover of outcome.handovers) {
        if (handover.kind === 'finished') row.finished++;
        if (handover.kind !== 'release' && handover.kind !== 'finished')
          console.error(
            `\n${trial} on ${store.name}, trial ${i + 1}: ${handover.runId} ${handover.kind} ${handover.from} → ${handover.to} (heartbeat gap ${handover.gapMs} ms)`,
          );
        if (handover.kind === 'overlap') row.overlaps++;
        if (handover.kind === 'takeover') row.takeovers++;
        if (handover.kind === 'unclear') row.unclear++;
        if (handover.kind === 'takeover') row.maxGapMs = Math.max(row.maxGapMs, handover.gapMs);
      }
      const held = outcome.reports.flatMap((report) => report.held)[0];
      if (held && !row.told) row.told = `held by ${held.instance} (owner ${held.owner})`;
    } catch (error) {
      row.failed++;
      console.error(`${trial} on ${store.name}, trial ${i + 1}:`, error);
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  return row;
}

const rows: Row[] = [];
for (const store of stores) {
  rows.push(
    await series('two live instances', store, Number(values.owners), () =>
      twoLiveInstancesTrial(store.store),
    ),
  );
  rows.push(
    await series('kill after effect', store, Number(values.effects), () => killAfterEffectTrial(store.store)),
  );
  rows.push(
    await series('kill after effect, reconcile', store, Number(values.effects), () =>
      killAfterEffectTrial(store.store, true),
    ),
  );
}
console.log(
  '| trial | store | trials | effects | doubled | runs lost | hosted twice | overlapping holds | takeovers after a lapsed lease (longest heartbeat gap) | unclear | claims of a run finished meanwhile | calls in doubt (effect had happened) | failed | the other worker was told |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) {
  console.log(
    `| ${r.trial} | ${r.store} | ${r.trials} | ${r.effects} | ${r.doubled} | ${r.lost} | ${r.recoveredTwice} | ${r.overlaps} | ${r.takeovers} (${r.maxGapMs} ms) | ${r.unclear} | ${r.finished} | ${r.inDoubt} (${r.inDoubtDone}) | ${r.failed} | ${r.told || '—'} |`,
  );
}
