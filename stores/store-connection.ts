/**
 * The database connection of a SQL run store (`sqlite-store.ts`, `postgres-store.ts`): opened on
 * the first call, opened again on a later call when opening failed (the database may come back),
 * and every driver failure turned into a {@link RunStoreUnavailableError} naming the store, the
 * operation and the run (docs/durability.md §Stores: "unavailable" is what the runtime retries).
 *
 * @module
 */

import { RunStoreClosedError, RunStoreError, RunStoreUnavailableError } from './run-store-errors.ts';

/** A store's lazily opened database `Db` (a SQLite connection, a `pg` Pool). */
export class StoreConnection<Db> {
  private pending: Promise<Db> | undefined;
  private closed = false;

  /**
   * @param storeName What errors call the store, e.g. `sqlite run store (file:///…)`.
   * @param open Opens and migrates the database; a rejection fails the call that opened it.
   * @param end Closes the open database (at `close()`, once).
   */
  constructor(
    readonly storeName: string,
    private readonly open: () => Promise<Db>,
    private readonly end: (db: Db) => void | Promise<void>,
  ) {}

  /**
   * Runs `work` on the open database. Throws what `work` throws when it is a
   * {@link RunStoreError} (a stale version, a missing run, …); anything else, and every call
   * after `close()`, as {@link RunStoreUnavailableError} with the failure as its `cause`.
   */
  async use<T>(operation: string, runId: string | undefined, work: (db: Db) => T | Promise<T>): Promise<T> {
    if (this.closed) throw this.unavailable(operation, runId, new RunStoreClosedError());
    try {
      this.pending ??= this.open();
      const db = await this.pending.catch((error: unknown) => {
        // Let the next call try again: the database may come back.
        this.pending = undefined;
        throw error;
      });
      return await work(db);
    } catch (error) {
      if (error instanceof RunStoreError) throw error;
      throw this.unavailable(operation, runId, this.closed ? new RunStoreClosedError() : error);
    }
  }

  /** Ends the database if it was opened; idempotent. Later calls fail as closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending = this.pending;
    this.pending = undefined;
    const db = await pending?.catch(() => undefined);
    if (db !== undefined) await this.end(db);
  }

  private unavailable(
    operation: string,
    runId: string | undefined,
    cause: unknown,
  ): RunStoreUnavailableError {
    return new RunStoreUnavailableError({
      store: this.storeName,
      operation,
      ...(runId === undefined ? {} : { runId }),
      cause,
    });
  }
}
