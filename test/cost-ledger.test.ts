/**
 * The CostLedger contract (policies/builtins/cost-ledger.ts, docs/policies.md §Money), run on
 * every implementation: the memory ledger, a SQLite file, and PostgreSQL (skipped with a reason
 * when it is not reachable, required with CI=true).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CostLedger, CostLedgerInputError, memoryCostLedger } from '../policies/builtins/cost-ledger.ts';
import { postgresCostLedger } from '../stores/postgres-cost-ledger.ts';
import { sqliteCostLedger } from '../stores/sqlite-cost-ledger.ts';
import { postgresTestGate } from './support/durable-stores.ts';
import { dropSchema, uniqueSchemaName } from './support/postgres-test-database.ts';

const { database, skip: postgresSkip } = await postgresTestGate('CostLedger contract (PostgreSQL)');
const pgSkip = postgresSkip !== undefined;

const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropSchema(database.url, schema);
});

const implementations: { name: string; skip?: boolean; open: () => Promise<CostLedger> }[] = [
  { name: 'memoryCostLedger', open: async () => memoryCostLedger() },
  {
    name: 'sqliteCostLedger',
    open: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'toolwarden-ledger-'));
      dirs.push(dir);
      return sqliteCostLedger({ path: join(dir, 'runs.db') });
    },
  },
  {
    name: 'postgresCostLedger',
    skip: pgSkip,
    open: async () => {
      if (!database.reachable) throw new Error(database.failMessage);
      const schema = uniqueSchemaName('tw_ledger');
      schemas.push(schema);
      return postgresCostLedger({ connectionString: database.url, schema });
    },
  },
];

const hold = (id: string, amount: number) => ({ id, amount });
const ask = (holds: { id: string; amount: number }[], limit = 100, ttlMs = 60_000) => ({
  key: 'tenant-42',
  limit,
  holds,
  ttlMs,
});

for (const { name, skip, open } of implementations) {
  describe.skipIf(skip === true)(name, () => {
    const withLedger = (test: (ledger: CostLedger) => Promise<void>) => async () => {
      const ledger = await open();
      try {
        await test(ledger);
      } finally {
        await ledger.close?.();
      }
    };

    it(
      'reserves within the limit, refuses past it with nothing changed, settles and releases',
      withLedger(async (ledger) => {
        expect(await ledger.reserve(ask([hold('a', 60)]))).toBe(true);
        expect(await ledger.reserve(ask([hold('b', 41)]))).toBe(false);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 0, reserved: 60 });
        expect(await ledger.reserve(ask([hold('b', 40)]))).toBe(true);
        await ledger.settle('tenant-42', 'a', 25); // 35 of a's 60 go back
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 25, reserved: 40 });
        await ledger.release('tenant-42', 'b');
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 25, reserved: 0 });
        // Settling what was really spent records it, even past the limit.
        expect(await ledger.reserve(ask([hold('c', 75)]))).toBe(true);
        await ledger.settle('tenant-42', 'c', 80);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 105, reserved: 0 });
        expect(await ledger.reserve(ask([hold('d', 0)]))).toBe(true);
        expect(await ledger.reserve(ask([hold('e', 1)]))).toBe(false);
        expect(await ledger.balance('other-tenant')).toEqual({ spent: 0, reserved: 0 });
      }),
    );

    it(
      'reserves several holds all or none, and replaces a hold of the same id by its difference',
      withLedger(async (ledger) => {
        expect(await ledger.reserve(ask([hold('turn-1', 30), hold('final', 50)]))).toBe(true);
        expect(await ledger.reserve(ask([hold('turn-2', 10), hold('other', 15)]))).toBe(false);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 0, reserved: 80 });
        await ledger.settle('tenant-42', 'turn-1', 30);
        // final 50 → 60: needs 10 more (30 spent + 60 + 10 ≤ 100).
        expect(await ledger.reserve(ask([hold('turn-2', 10), hold('final', 60)]))).toBe(true);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 30, reserved: 70 });
        // Shrinking always fits.
        expect(await ledger.reserve(ask([hold('final', 5)], 0))).toBe(true);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 30, reserved: 15 });
      }),
    );

    it(
      'reclaims holds past their expiry (a process that died holding them)',
      withLedger(async (ledger) => {
        // A second to spare: the next call must come before it lapses, even on a loaded machine.
        expect(await ledger.reserve(ask([hold('dead', 90)], 100, 1_000))).toBe(true);
        expect(await ledger.reserve(ask([hold('live', 20)]))).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 0, reserved: 0 });
        expect(await ledger.reserve(ask([hold('live', 20)]))).toBe(true);
        // Settling a reclaimed hold spends, and takes nothing off what others reserved.
        await ledger.settle('tenant-42', 'dead', 10);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 10, reserved: 20 });
      }),
    );

    it(
      'grants exactly what fits to many reservations at once',
      withLedger(async (ledger) => {
        const granted = await Promise.all(
          Array.from({ length: 40 }, (_, i) => ledger.reserve(ask([hold(`turn-${i}`, 5)], 100))),
        );
        expect(granted.filter(Boolean)).toHaveLength(20);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 0, reserved: 100 });
      }),
    );

    it(
      'refuses bad input with CostLedgerInputError and changes nothing; keys are data, not SQL',
      withLedger(async (ledger) => {
        const bad = [
          { key: '', limit: 100, holds: [hold('a', 1)], ttlMs: 1_000 },
          { key: 'k'.repeat(257), limit: 100, holds: [hold('a', 1)], ttlMs: 1_000 },
          { key: 'tenant\u000042', limit: 100, holds: [hold('a', 1)], ttlMs: 1_000 },
          ask([hold('a', -1)]),
          ask([hold('a', 1.5)]),
          ask([hold('a', Number.NaN)]),
          ask([hold('a', 2 ** 60)]),
          ask([hold('a', 1), hold('a', 2)]),
          ask([]),
          ask([hold('', 1)]),
          ask([hold('a', 1)], -5),
          ask([hold('a', 1)], 100, 0),
        ];
        for (const request of bad)
          await expect(ledger.reserve(request)).rejects.toThrow(CostLedgerInputError);
        await expect(ledger.settle('tenant-42', 'a', -3)).rejects.toThrow(CostLedgerInputError);
        expect(await ledger.balance('tenant-42')).toEqual({ spent: 0, reserved: 0 });
        const key = "tenant'); DROP TABLE cost_accounts; -- é";
        expect(await ledger.reserve({ ...ask([hold('a', 7)]), key })).toBe(true);
        expect(await ledger.balance(key)).toEqual({ spent: 0, reserved: 7 });
      }),
    );
  });
}
