/**
 * A shared money budget across processes (docs/policies.md §Money, issue 35 item 2): two worker
 * processes, eight runs each, every run a planner that would loop forever, all drawing on one
 * ledger account, in a SQLite file and in PostgreSQL. Together they never spend past the limit,
 * both make progress, and every reservation is settled or released at the end.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CostLedger } from '../policies/builtins/cost-ledger.ts';
import { postgresCostLedger } from '../stores/postgres-cost-ledger.ts';
import { sqliteCostLedger } from '../stores/sqlite-cost-ledger.ts';
import type { CostLedgerChildConfig, CostLedgerChildReport } from './support/cost-ledger-child.ts';
import { postgresTestGate } from './support/durable-stores.ts';
import { dropSchema, uniqueSchemaName } from './support/postgres-test-database.ts';
import { spawnWorker, waitForLine } from './support/worker-output.ts';

const CHILD = join(import.meta.dirname, 'support', 'cost-ledger-child.ts');
const LIMIT = 0.5; // USD: a turn costs at most 0.013, so ~38 turns between 16 runs
const RUNS = 8;

const { database, skip: postgresSkip } = await postgresTestGate('cost ledger across processes (PostgreSQL)');
const pgSkip = postgresSkip !== undefined;

/** Two workers at once on `ledger`; their reports. */
async function twoWorkers(ledger: CostLedgerChildConfig['ledger']): Promise<CostLedgerChildReport[]> {
  // Both begin their runs at one moment, past the time a child takes to load under load.
  const startAt = Date.now() + 5_000;
  const config: CostLedgerChildConfig = { ledger, key: 'tenant-42', limit: LIMIT, runs: RUNS, startAt };
  return Promise.all(
    [0, 1].map(async () => {
      const worker = spawnWorker(CHILD, config);
      const line = await waitForLine(worker.lines, /^\{"outcomes"/, worker.exited, 90_000);
      expect(await worker.exited).toBe(0);
      return JSON.parse(line) as CostLedgerChildReport;
    }),
  );
}

async function expectKeptTogether(reports: CostLedgerChildReport[], ledger: CostLedger): Promise<void> {
  const balance = await ledger.balance('tenant-42');
  const turns = reports.map((report) => report.outcomes.reduce((sum, outcome) => sum + outcome.turns, 0));
  console.log(
    `shared ledger: ${balance.spent / 1e6} of ${LIMIT} USD spent, planner turns per process ${turns.join(' + ')}`,
  );
  // Together, never past the limit (micro-units), and nothing left reserved.
  expect(balance.spent).toBeLessThanOrEqual(LIMIT * 1e6);
  expect(balance.reserved).toBe(0);
  // What the runs say they spent is what the ledger holds.
  const spent = reports.flatMap((report) => report.outcomes).reduce((sum, outcome) => sum + outcome.spent, 0);
  expect(Math.round(spent * 1e6)).toBe(balance.spent);
  // The budget was used, not refused: most of it spent.
  expect(balance.spent).toBeGreaterThan((LIMIT / 2) * 1e6);
  for (const report of reports) {
    expect(report.outcomes).toHaveLength(RUNS);
    for (const outcome of report.outcomes)
      expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'budget_exhausted' });
    // Both processes made progress: tool turns beyond their runs' first.
    const turns = report.outcomes.reduce((sum, outcome) => sum + outcome.turns, 0);
    expect(turns).toBeGreaterThan(RUNS);
  }
}

describe('a shared cost ledger across two processes', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('in one SQLite file: sixteen runs of two processes never overspend it together', async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-cost-'));
    const path = join(dir, 'runs.db');
    const reports = await twoWorkers({ kind: 'sqlite', path });
    const ledger = sqliteCostLedger({ path });
    try {
      await expectKeptTogether(reports, ledger);
    } finally {
      await ledger.close?.();
    }
  }, 120_000);

  it.skipIf(pgSkip)(
    'in PostgreSQL: sixteen runs of two processes never overspend it together',
    async () => {
      if (!database.reachable) throw new Error(database.failMessage);
      const schema = uniqueSchemaName('tw_cost');
      const ledger = postgresCostLedger({ connectionString: database.url, schema });
      try {
        const reports = await twoWorkers({ kind: 'postgres', url: database.url, schema });
        await expectKeptTogether(reports, ledger);
      } finally {
        await ledger.close?.();
        await dropSchema(database.url, schema);
      }
    },
    120_000,
  );
});
