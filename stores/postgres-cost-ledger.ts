/**
 * The PostgreSQL {@link CostLedger} (docs/policies.md §Money): the shared money budgets of
 * `costBudget({ ledger })` in the run store's database and schema (tables `cost_accounts` and
 * `cost_holds`, added by the store's schema migration 4), atomic across processes and machines.
 *
 * | call | statements |
 * | --- | --- |
 * | `reserve` | one transaction: the account row is created if absent and locked (`SELECT … FOR UPDATE`: reservers of one key queue), expired holds are deleted and their amounts taken off `reserved`, then `UPDATE cost_accounts SET reserved = reserved + Δ WHERE key = $1 AND spent + reserved + Δ <= $limit` decides; only if it matched are the holds written |
 * | `settle` | one statement: the hold deleted, its amount off `reserved`, `spent` added |
 * | `release` | one statement: the hold deleted, its amount off `reserved` |
 *
 * Amounts are `bigint` micro-units; times are the database's clock (`clock_timestamp()`, ms), so
 * processes on machines whose clocks differ agree on when a hold expires.
 *
 * @module
 */
import type { Pool, PoolConfig } from 'pg';
import { type CostLedger, checkedLedger } from '../policies/builtins/cost-ledger.ts';
import type { PgPool } from './postgres-options.ts';
import { migrate } from './postgres-schema.ts';
import { inTransaction } from './postgres-transaction.ts';

/** Options of {@link postgresCostLedger}: the run store's own (`postgresStore`), one of `connectionString` or `pool`. */
export type PostgresCostLedgerOptions = {
  /** The schema of the run store's tables; created and migrated when absent. Default `toolwarden`. */
  schema?: string;
} & (
  | { connectionString: string; poolConfig?: object; pool?: never }
  | { pool: PgPool; connectionString?: never; poolConfig?: never }
);

const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)';

/**
 * A money ledger in a PostgreSQL database, shared by every process that opens it with the same
 * schema (`toolwarden/postgres`). Connects and migrates on first use; `close()` ends a pool it
 * made (a pool you gave stays open).
 *
 * ```ts
 * const ledger = postgresCostLedger({ connectionString: process.env.DATABASE_URL! });
 * costBudget({ limit: 20, currency: 'USD', prices, ledger: { store: ledger, key: (run) => run.labels.tenant! } });
 * ```
 *
 * @throws TypeError for a schema that is not a plain identifier, or not exactly one of
 *   `connectionString` and `pool`. Calls reject with the driver's error when the database cannot
 *   be reached, and with `CostLedgerInputError` for a bad key, id or amount.
 */
export function postgresCostLedger(options: PostgresCostLedgerOptions): CostLedger {
  const schemaName = options.schema ?? 'toolwarden';
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schemaName))
    throw new TypeError(`postgresCostLedger: schema must be a plain identifier, got "${schemaName}"`);
  if ((options.connectionString === undefined) === (options.pool === undefined))
    throw new TypeError('postgresCostLedger: give exactly one of connectionString or pool');
  const schema = `"${schemaName}"`;
  const accounts = `${schema}.cost_accounts`;
  const holds = `${schema}.cost_holds`;
  let opened: Promise<Pool> | undefined;

  const pool = (): Promise<Pool> => {
    opened ??= (async () => {
      let db = options.pool as Pool | undefined;
      if (db === undefined) {
        const { Pool } = await import('pg');
        db = new Pool({
          connectionTimeoutMillis: 10_000,
          max: 4,
          ...(options.poolConfig as PoolConfig | undefined),
          connectionString: options.connectionString,
        });
        db.on('error', () => {});
      }
      await migrate(db, schemaName, schema);
      return db;
    })().catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };

  /** A hold ended: its amount off `reserved`, `spent` added. One statement. */
  const end = async (key: string, id: string, spent: number) => {
    const db = await pool();
    await db.query(
      `WITH gone AS (DELETE FROM ${holds} WHERE key = $1 AND id = $2 RETURNING amount)
       INSERT INTO ${accounts} AS a (key, spent, reserved) VALUES ($1, $3, 0)
       ON CONFLICT (key) DO UPDATE
       SET spent = a.spent + $3, reserved = a.reserved - coalesce((SELECT sum(amount) FROM gone), 0)`,
      [key, id, spent],
    );
  };

  return checkedLedger({
    end,
    async reserve(request) {
      const { key, limit } = request;
      const ids = request.holds.map((hold) => hold.id);
      const amounts = request.holds.map((hold) => hold.amount);
      return inTransaction(await pool(), async (client) => {
        await client.query(`INSERT INTO ${accounts} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, [key]);
        // Reservers of one key queue here; everything below sees the account as the last one left it.
        await client.query(`SELECT 1 FROM ${accounts} WHERE key = $1 FOR UPDATE`, [key]);
        await client.query(
          `WITH gone AS (DELETE FROM ${holds} WHERE key = $1 AND expires_at <= ${NOW_MS} RETURNING amount)
           UPDATE ${accounts} SET reserved = reserved - coalesce((SELECT sum(amount) FROM gone), 0)
           WHERE key = $1`,
          [key],
        );
        const before = await client.query<{ total: string }>(
          `SELECT coalesce(sum(amount), 0)::text AS total FROM ${holds} WHERE key = $1 AND id = ANY($2::text[])`,
          [key, ids],
        );
        const delta = sum(amounts) - Number(before.rows[0]?.total ?? 0);
        const taken = await client.query(
          `UPDATE ${accounts} SET reserved = reserved + $2
           WHERE key = $1 AND ($2 <= 0 OR spent + reserved + $2 <= $3)`,
          [key, delta, limit],
        );
        // Over the limit: nothing reserved (the reclaimed holds stay reclaimed).
        if (taken.rowCount === 0) return false;
        await client.query(
          `INSERT INTO ${holds} (key, id, amount, expires_at)
           SELECT $1, h.id, h.amount, ${NOW_MS} + $4 FROM unnest($2::text[], $3::bigint[]) AS h(id, amount)
           ON CONFLICT (key, id) DO UPDATE SET amount = excluded.amount, expires_at = excluded.expires_at`,
          [key, ids, amounts, request.ttlMs],
        );
        return true;
      });
    },

    async balance(key) {
      const db = await pool();
      const result = await db.query<{ spent: string; reserved: string }>(
        `SELECT a.spent::text AS spent,
           (SELECT coalesce(sum(amount), 0) FROM ${holds} h WHERE h.key = a.key AND h.expires_at > ${NOW_MS})::text AS reserved
         FROM ${accounts} a WHERE a.key = $1`,
        [key],
      );
      const row = result.rows[0];
      return { spent: Number(row?.spent ?? 0), reserved: Number(row?.reserved ?? 0) };
    },

    async close() {
      const made = opened;
      opened = undefined;
      if (made && options.pool === undefined) await (await made.catch(() => undefined))?.end();
    },
  });
}

function sum(values: number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
