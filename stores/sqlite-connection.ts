/**
 * One SQLite connection for the SQLite run store (`sqlite-store.ts`), through the `libsql` package:
 * statements prepared once and kept for the connection's life, transactions that run whole inside
 * one synchronous call, and waits for another process's lock that never block the event loop.
 *
 * libsql (like better-sqlite3) runs each statement synchronously on the calling thread. With a
 * busy timeout, a statement that meets another process's write lock sleeps inside SQLite until
 * the lock is free or the timeout passes, and the whole process with it (issue 24 item 8: an 8 s
 * external `BEGIN IMMEDIATE` stalled the event loop for 5,042 ms). Here the busy timeout is 0: the
 * statement fails at once with SQLITE_BUSY, the transaction is rolled back, and
 * {@link SqliteConnection.retrying} tries it again after 1–20 ms on a timer, until `busyTimeoutMs`
 * has passed; then the SQLITE_BUSY error is thrown. The event loop runs in between.
 *
 * Statements that return rows are always stepped with `get` or `all`, never `run`: libsql's
 * `run` of a statement with `RETURNING` leaves it in progress (and its transaction open).
 *
 * @module
 */

import type Libsql from 'libsql';

/** A result row: column name → value (libsql adds a `_metadata` member, never read). */
export type SqliteRow = Record<string, unknown>;
type Statement = Libsql.Statement<unknown[]>;

/** Pause before the attempt after `attempt` failed with SQLITE_BUSY, ms: 1, 2, 4, ... up to 20. */
const pauseAfter = (attempt: number) => Math.min(20, 2 ** (attempt - 1));

/** Whether `error` is SQLite's "database is locked" (SQLITE_BUSY or an extended BUSY code). */
export function isBusy(error: unknown): boolean {
  const { code, rawCode } = (error ?? {}) as { code?: unknown; rawCode?: unknown };
  return (
    (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) ||
    (typeof rawCode === 'number' && (rawCode & 0xff) === 5)
  );
}

export class SqliteConnection {
  private readonly statements = new Map<string, Statement>();

  private constructor(
    private readonly db: Libsql.Database,
    private readonly busyTimeoutMs: number,
  ) {}

  /** Opens `path` (a file path or `:memory:`) with `libsql`, loaded on first use. */
  static async open(path: string, busyTimeoutMs: number): Promise<SqliteConnection> {
    const { default: Database } = await import('libsql');
    const db = new Database(path, { timeout: 0 });
    try {
      db.exec('PRAGMA busy_timeout = 0');
    } catch (error) {
      db.close();
      throw error;
    }
    return new SqliteConnection(db, busyTimeoutMs);
  }

  /** The statement for `sql`, prepared on first use and kept. */
  private prepared(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql) as Statement;
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs a statement that returns no rows; resolves to the rows it changed. */
  run(sql: string, ...args: unknown[]): number {
    return this.prepared(sql).run(args).changes;
  }

  /** The first row of a statement's result, or `undefined`. */
  get(sql: string, ...args: unknown[]): SqliteRow | undefined {
    return this.prepared(sql).get(args) as SqliteRow | undefined;
  }

  /** Every row of a statement's result. */
  all(sql: string, ...args: unknown[]): SqliteRow[] {
    return this.prepared(sql).all(args) as SqliteRow[];
  }

  /** Runs a statement once without keeping it prepared (migrations). */
  once(sql: string, ...args: unknown[]): void {
    this.db.prepare(sql).run(args);
  }

  /** Runs SQL text (no parameters; several statements allowed), not kept prepared. */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  /**
   * Runs `work` in one `BEGIN IMMEDIATE` transaction, whole, within this call's synchronous part:
   * committed when it returns, rolled back when it throws. While another connection holds the
   * write lock, tried again later ({@link retrying}).
   */
  write<T>(work: () => T): Promise<T> {
    return this.retrying(() => this.transaction('BEGIN IMMEDIATE', work));
  }

  /** Runs `work` in one read transaction: its statements see one state of the database. */
  read<T>(work: () => T): Promise<T> {
    return this.retrying(() => this.transaction('BEGIN', work));
  }

  /**
   * `attempt()`, and again after a pause each time it fails with SQLITE_BUSY, until
   * `busyTimeoutMs` has passed since the first try. Resolves at once when the first try succeeds
   * (no timer, no extra tick beyond the promise).
   */
  async retrying<T>(attempt: () => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let tries = 1; ; tries++) {
      try {
        return attempt();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      const pause = Math.min(pauseAfter(tries), Math.max(1, deadline - Date.now()));
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }

  /**
   * `BEGIN`, `COMMIT` and `ROLLBACK` go through `exec`, not a kept statement: a kept statement
   * that failed with SQLITE_BUSY stays "in progress" in libsql until it is run again, and every
   * later `COMMIT` on the connection then fails ("SQL statements in progress"). Inside a
   * `BEGIN IMMEDIATE` no statement can meet a lock (the transaction holds the write lock, WAL).
   */
  private transaction<T>(begin: string, work: () => T): T {
    this.db.exec(begin);
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }
}
