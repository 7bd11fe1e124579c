/**
 * The SQLite {@link CostLedger} (docs/policies.md §Money): the shared money budgets of
 * `costBudget({ ledger })` in the run store's SQLite file (tables `toolwarden_cost_accounts` and
 * `toolwarden_cost_holds`, added by the store's schema migration), atomic across the processes
 * that open the file.
 *
 * `reserve` is one `BEGIN IMMEDIATE` transaction (SQLite's write lock: writers of the file queue,
 * waiting on timers, not blocking the event loop, sqlite-connection.ts): the account is created if
 * absent, expired holds are deleted and their amounts taken off `reserved`, then
 * `UPDATE … SET reserved = reserved + Δ WHERE key = ? AND spent + reserved + Δ <= limit` decides;
 * only if it matched are the holds written. `settle` and `release` are one transaction each.
 * Amounts are INTEGER micro-units; times are this machine's clock (epoch ms), which is every
 * process's that can open the file.
 *
 * @module
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CostLedger, checkedLedger } from '../policies/builtins/cost-ledger.ts';
import { SqliteConnection } from './sqlite-connection.ts';
import { migrate } from './sqlite-schema.ts';

/** Options of {@link sqliteCostLedger}. */
export interface SqliteCostLedgerOptions {
  /** The run store's SQLite file (`sqliteStore({ path })`'s), created and migrated when absent. */
  path: string;
  /** How long a call waits for another process's write lock before it fails, ms. Default 5000. */
  busyTimeoutMs?: number;
}

/**
 * A money ledger in a SQLite file, shared by every process that opens the file
 * (`toolwarden/sqlite`). Opens and migrates on first use.
 *
 * ```ts
 * const ledger = sqliteCostLedger({ path: './runs.db' });
 * costBudget({ limit: 20, currency: 'USD', prices, ledger: { store: ledger, key: 'tenant-42' } });
 * ```
 *
 * @throws TypeError for an empty path. Calls reject with SQLite's error when the file cannot be
 *   opened (or SQLITE_BUSY after `busyTimeoutMs`), and with `CostLedgerInputError` for a bad key,
 *   id or amount.
 */
export function sqliteCostLedger(options: SqliteCostLedgerOptions): CostLedger {
  if (typeof options?.path !== 'string' || options.path === '')
    throw new TypeError('sqliteCostLedger: path must be a non-empty string');
  // As sqliteStore opens it: a file path, a `file:` URL, or `:memory:` (a ledger of its own).
  const path = options.path.startsWith('file:')
    ? fileURLToPath(options.path.replace(/[?#].*$/, ''))
    : options.path === ':memory:'
      ? options.path
      : resolve(options.path);
  let opened: Promise<SqliteConnection> | undefined;
  const connection = (): Promise<SqliteConnection> => {
    opened ??= (async () => {
      const db = await SqliteConnection.open(path, options.busyTimeoutMs ?? 5_000);
      try {
        await db.retrying(() => db.exec('PRAGMA journal_mode = WAL'));
        await migrate(db);
        return db;
      } catch (error) {
        db.close();
        throw error;
      }
    })().catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };

  /** A hold ended: its amount off `reserved`, `spent` added. */
  const end = async (key: string, id: string, spent: number) => {
    const db = await connection();
    await db.write(() => {
      const hold = db.get('SELECT amount FROM toolwarden_cost_holds WHERE key = ? AND id = ?', key, id);
      const amount = Number(hold?.amount ?? 0);
      if (hold) db.run('DELETE FROM toolwarden_cost_holds WHERE key = ? AND id = ?', key, id);
      db.run(
        `INSERT INTO toolwarden_cost_accounts (key, spent, reserved) VALUES (?, ?, 0)
         ON CONFLICT (key) DO UPDATE SET spent = spent + excluded.spent, reserved = reserved - ?`,
        key,
        spent,
        amount,
      );
    });
  };

  return checkedLedger({
    end,
    async reserve(request) {
      const { key, limit } = request;
      const db = await connection();
      return db.write(() => {
        const now = Date.now();
        db.run('INSERT INTO toolwarden_cost_accounts (key) VALUES (?) ON CONFLICT (key) DO NOTHING', key);
        const expired = db.get(
          'SELECT coalesce(sum(amount), 0) AS total FROM toolwarden_cost_holds WHERE key = ? AND expires_at <= ?',
          key,
          now,
        );
        const reclaimed = Number(expired?.total ?? 0);
        if (reclaimed > 0) {
          db.run('DELETE FROM toolwarden_cost_holds WHERE key = ? AND expires_at <= ?', key, now);
          db.run('UPDATE toolwarden_cost_accounts SET reserved = reserved - ? WHERE key = ?', reclaimed, key);
        }
        let delta = 0;
        for (const hold of request.holds) {
          const existing = db.get(
            'SELECT amount FROM toolwarden_cost_holds WHERE key = ? AND id = ?',
            key,
            hold.id,
          );
          delta += hold.amount - Number(existing?.amount ?? 0);
        }
        const taken = db.run(
          `UPDATE toolwarden_cost_accounts SET reserved = reserved + ?
           WHERE key = ? AND (? <= 0 OR spent + reserved + ? <= ?)`,
          delta,
          key,
          delta,
          delta,
          limit,
        );
        // Over the limit: nothing reserved (the reclaimed holds stay reclaimed).
        if (taken === 0) return false;
        for (const hold of request.holds)
          db.run(
            `INSERT INTO toolwarden_cost_holds (key, id, amount, expires_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (key, id) DO UPDATE SET amount = excluded.amount, expires_at = excluded.expires_at`,
            key,
            hold.id,
            hold.amount,
            now + request.ttlMs,
          );
        return true;
      });
    },

    async balance(key) {
      const db = await connection();
      return db.read(() => {
        const account = db.get('SELECT spent FROM toolwarden_cost_accounts WHERE key = ?', key);
        const live = db.get(
          'SELECT coalesce(sum(amount), 0) AS total FROM toolwarden_cost_holds WHERE key = ? AND expires_at > ?',
          key,
          Date.now(),
        );
        return { spent: Number(account?.spent ?? 0), reserved: Number(live?.total ?? 0) };
      });
    },

    async close() {
      const made = opened;
      opened = undefined;
      (await made?.catch(() => undefined))?.close();
    },
  });
}
