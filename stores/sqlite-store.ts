/**
 * The SQLite RunStore: the embedded, durable default (docs/durability.md), through the `libsql`
 * package (a better-sqlite3-style synchronous API on libSQL, prebuilt binaries, no install script).
 *
 * - One database file holds the runs of any number of processes on one machine. Tables are
 *   prefixed `toolwarden_` so the file can be an application's own database.
 * - The schema is created on first use and versioned in `toolwarden_schema_migrations`; pending
 *   migrations are applied in one `BEGIN IMMEDIATE` transaction (see `sqlite-schema.ts` for how processes
 *   starting at once settle it).
 * - WAL journal mode (readers do not block the writer).
 * - Every statement is prepared once and kept for the store's life (a statement cache on the
 *   connection): a step's write is `BEGIN IMMEDIATE`, one multi-row insert of its events and the
 *   snapshot rows it added into the run's log, one `UPDATE` of the run row, `COMMIT`, all
 *   within one synchronous call, so no transaction is ever held across an `await`.
 * - Another process's write lock never blocks the event loop (issue 24 item 8): the connection's
 *   busy timeout is 0, so SQLite answers SQLITE_BUSY at once instead of waiting inside the call,
 *   and the store tries the whole transaction again after a pause of 1–20 ms (the event loop runs
 *   meanwhile), until `busyTimeoutMs` has passed.
 * - Optimistic concurrency in SQL: `UPDATE ... WHERE run_id = ? AND version = ?`, then the rows
 *   affected decide (1: saved; 0: stale or missing). Snapshots, labels and events are JSON text.
 * - Event `seq` numbers come from a per-run counter advanced in the same transaction as the
 *   inserts, so concurrent appenders never collide. Events given to `create`/`save` are inserted
 *   in the same transaction, under the same condition as the run row (see `save`).
 * - Leases (migration 2): `toolwarden_run_owners` holds each owner's `lease_until`; a run's
 *   `owner` column names who holds it. `claim` is one conditional `UPDATE ... RETURNING`.
 * - `synchronous = NORMAL` by default (WAL): a committed write survives the process being
 *   killed; only an OS crash or power loss can take back the last commits. `synchronous: 'full'`
 *   fsyncs every commit (~3-4 ms each on a typical disk, against ~0.15 ms; a step's p50/p99 in
 *   docs/benchmarks.md §Durable step floor).
 * - What a step's commit writes (schemas 4 and 5, issue 36 item 2): three b-trees, the run row,
 *   the write-order index (`touch_seq`) and the run log (`sqlite-log.ts`: events and snapshot
 *   rows in one table keyed by run and write order); no other index of the runs table holds a
 *   column a step rewrites, and a save sets `status` only when it changes. `list` orders by
 *   write order (`touch_seq DESC`).
 *
 * `libsql` is loaded on first use, so importing toolwarden does not load its native binary for
 * apps that never use this store.
 *
 * @module
 */

import { statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { refusedClaim } from './claim-refusal.ts';
import { plainStore } from './plain-store.ts';
import type {
  NewRun,
  NewRunEvent,
  ReadEventsOptions,
  RunEventRecord,
  RunListFilter,
  RunStore,
  RunUpdate,
  StoredRun,
} from './run-store.ts';
import { RunExistsError, RunNotFoundError, StaleRunVersionError } from './run-store-errors.ts';
import {
  checkEvents,
  checkListFilter,
  checkNewRun,
  checkOwner,
  checkReadEventsOptions,
  checkRunId,
  checkRunUpdate,
  checkTtl,
  createdRun,
  FINISHED_STATUSES,
} from './run-store-input.ts';
import { groupRows, hasMarkers, joinSnapshot, RowTracker, withSnapshotCopy } from './snapshot-rows.ts';
import { SqliteConnection } from './sqlite-connection.ts';
import { LOG_SQL, type LogEntry, logEntries, logInserts, logTrim, memberOfKind } from './sqlite-log.ts';
import { migrate } from './sqlite-schema.ts';
import {
  eventRows,
  type Row,
  RUN_COLUMNS,
  RUN_COLUMNS_WITHOUT_SNAPSHOT,
  SQL,
  toStoredRun,
} from './sqlite-statements.ts';
import { StoreConnection } from './store-connection.ts';

export { SQLITE_SCHEMA_VERSION } from './sqlite-schema.ts';

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * A file path (relative to the working directory; missing parent directories are created), a
   * `file:` URL, or `:memory:` (a private database that lives as long as the store).
   */
  path: string;
  /** How long a write waits for another process's write lock before failing, ms. Default 5000. */
  busyTimeoutMs?: number;
  /** Clock for `createdAt`/`updatedAt` and leases, epoch ms. Default `Date.now`. */
  now?: () => number;
  /**
   * SQLite's `synchronous` setting. `normal` (default, with WAL): commits survive a process
   * crash, not necessarily an OS crash. `full`: every commit is fsynced before it returns.
   */
  synchronous?: 'normal' | 'full';
}

/** Opens (lazily, on first call) a {@link RunStore} on a SQLite database. */
export function sqliteStore(options: SqliteStoreOptions): RunStore {
  return plainStore(new SqliteRunStore(options));
}

/** The SQLite store: each operation a method, on one lazily opened {@link SqliteConnection}. */
class SqliteRunStore implements RunStore {
  private readonly url: string;
  private readonly now: () => number;
  private readonly connection: StoreConnection<SqliteConnection>;
  private readonly rowTracker = new RowTracker();
  /** Each run as this store last read or wrote it, without its snapshot: what a save returns. */
  private readonly known = new Map<string, StoredRun>();
  // The file this store opened, by device and inode: deleting or replacing it under a live
  // runtime used to lose every later write silently (issue 12, defect 9).
  private readonly file: string | undefined;
  private identity: { dev: number; ino: number } | undefined;

  constructor(private readonly options: SqliteStoreOptions) {
    this.url = toDatabaseUrl(options.path);
    this.now = options.now ?? Date.now;
    this.file = this.url === options.path ? undefined : resolve(options.path);
    this.connection = new StoreConnection(
      `sqlite run store (${this.url})`,
      () => this.open(),
      (db) => db.close(),
    );
  }

  async create(run: NewRun): Promise<StoredRun> {
    checkNewRun(run);
    const split = this.rowTracker.split(run.runId, run.snapshot, undefined);
    const snapshot = JSON.stringify(split.head);
    const labels = run.labels === undefined ? null : JSON.stringify(run.labels);
    const events = run.events ?? [];
    const entries = logEntries(events, split.rows);
    return this.withDatabase('create', run.runId, (db) =>
      db.write(() => {
        const at = this.now();
        // The run row first (its log_key numbers the entries); a run that exists throws, and the
        // transaction rolls back whole.
        const inserted = db.run(
          SQL.insertRun,
          run.runId,
          run.sessionId ?? null,
          run.agentId,
          run.status,
          snapshot,
          labels,
          at,
          at,
          events.length,
          run.owner ?? null,
          entries.length,
        );
        if (inserted === 0) throw new RunExistsError(run.runId);
        if (entries.length > 0) {
          const numbered = entries.map(([, kind, seq, value, at]) => [kind, seq, value, at]);
          db.run(LOG_SQL.insertOfNewRun, JSON.stringify(numbered), run.runId);
        }
        this.rowTracker.written(run.runId, run.snapshot, 1, FINISHED_STATUSES.includes(run.status));
        // The snapshot copied when first read, as a save's (a large batch's first write is a create).
        return withSnapshotCopy(this.remember(createdRun(run, at, undefined)), run.snapshot);
      }),
    );
  }

  async load(runId: string): Promise<StoredRun | undefined> {
    checkRunId(runId);
    return this.withDatabase('load', runId, (db) =>
      db.read(() => {
        const row = db.get(SQL.loadRun, runId);
        return row === undefined ? undefined : this.withRows(db, [row])[0];
      }),
    );
  }

  async save(runId: string, update: RunUpdate): Promise<StoredRun> {
    checkRunId(runId);
    checkRunUpdate(update);
    const split = this.rowTracker.split(runId, update.snapshot, update.expectedVersion);
    const write: SaveWrite = {
      snapshot: JSON.stringify(split.head),
      labels: update.labels === undefined ? null : JSON.stringify(update.labels),
      eventCount: update.events?.length ?? 0,
      trim: logTrim(split.rows, runId, update.expectedVersion),
      entries: logEntries(update.events ?? [], split.rows),
    };
    return this.withDatabase('save', runId, (db) => db.write(() => this.writeSave(db, runId, update, write)));
  }

  /**
   * A save's transaction: a rewritten member's old rows go; then the step's events and the rows
   * it added (snapshot-rows.ts) in one insert into the run's log (sqlite-log.ts), numbered after
   * the run's counters; each only if the run is at `expectedVersion`; then the run row. One
   * transaction: the events land exactly when the save does.
   */
  private writeSave(db: SqliteConnection, runId: string, update: RunUpdate, write: SaveWrite): StoredRun {
    const version = update.expectedVersion;
    if (write.trim !== undefined) db.run(write.trim.sql, ...write.trim.args);
    if (write.entries.length > 0) {
      for (const insert of logInserts(write.entries, runId, version)) db.run(insert.sql, ...insert.args);
    }
    const saved = this.updateRun(db, runId, update, write);
    if (saved !== undefined) {
      this.remember(saved);
      return this.rowTracker.saved(runId, update, saved);
    }
    const actual = db.get(SQL.runVersion, runId);
    if (actual === undefined) throw new RunNotFoundError(runId);
    throw new StaleRunVersionError(runId, version, Number(actual.version));
  }

  /**
   * Advances the run row from `expectedVersion`; the saved run without its snapshot, or
   * `undefined` when the run is missing or at another version. The run's other columns are known
   * when this store last read or wrote the version being replaced; else they are read back
   * (RETURNING).
   */
  private updateRun(
    db: SqliteConnection,
    runId: string,
    update: RunUpdate,
    write: SaveWrite,
  ): StoredRun | undefined {
    const version = update.expectedVersion;
    const before = this.known.get(runId);
    const at = this.now();
    const args = [
      update.status,
      write.snapshot,
      write.labels,
      at,
      write.eventCount,
      write.entries.length,
      runId,
      version,
    ] as const;
    if (before?.version !== version) {
      const row = db.get(`${SQL.updateRun} RETURNING ${RUN_COLUMNS_WITHOUT_SNAPSHOT}`, ...args);
      return row === undefined ? undefined : toStoredRun(row, undefined);
    }
    const updated =
      before.status === update.status
        ? db.run(SQL.updateRunSameStatus, ...args.slice(1))
        : db.run(SQL.updateRun, ...args);
    if (updated !== 1) return undefined;
    return {
      ...before,
      status: update.status,
      version: version + 1,
      updatedAt: at,
      ...(update.labels === undefined ? {} : { labels: structuredClone(update.labels) }),
    };
  }

  async list(filter?: RunListFilter): Promise<StoredRun[]> {
    const { statuses, sessionId, limit } = checkListFilter(filter);
    if (statuses?.length === 0) return this.withDatabase('list', undefined, () => []);
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (statuses !== undefined) {
      where.push('status IN (SELECT value FROM json_each(?))');
      args.push(JSON.stringify(statuses));
    }
    if (sessionId !== undefined) {
      where.push('session_id = ?');
      args.push(sessionId);
    }
    if (limit !== undefined) args.push(limit);
    const sql = `SELECT ${RUN_COLUMNS} FROM toolwarden_runs
        ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
        ORDER BY touch_seq DESC
        ${limit === undefined ? '' : 'LIMIT ?'}`;
    return this.withDatabase('list', undefined, (db) =>
      db.read(() => this.withRows(db, db.all(sql, ...args))),
    );
  }

  async appendEvents(runId: string, events: NewRunEvent[]): Promise<void> {
    checkRunId(runId);
    checkEvents(events);
    const rows = eventRows(events);
    return this.withDatabase('appendEvents', runId, (db) => {
      if (events.length === 0) return;
      // One transaction: reserve seq numbers (last + 1 ... last + n) on the run row, then insert
      // the events at those numbers. A missing run reserves nothing and inserts nothing.
      return db.write(() => {
        if (db.run(LOG_SQL.reserve, events.length, events.length, runId) === 0)
          throw new RunNotFoundError(runId);
        db.run(LOG_SQL.insertReserved, events.length, events.length - 1, rows, runId);
      });
    });
  }

  async readEvents(runId: string, options?: ReadEventsOptions): Promise<RunEventRecord[]> {
    checkRunId(runId);
    const { afterSeq, limit } = checkReadEventsOptions(options);
    return this.withDatabase('readEvents', runId, (db) =>
      db.read(() =>
        (limit === undefined
          ? db.all(LOG_SQL.readEvents, runId, afterSeq)
          : db.all(LOG_SQL.readEventsLimit, runId, afterSeq, limit)
        ).map((row) => ({
          runId,
          seq: Number(row.seq),
          event: JSON.parse(String(row.event)),
          at: Number(row.at),
        })),
      ),
    );
  }

  async delete(runId: string): Promise<boolean> {
    checkRunId(runId);
    return this.withDatabase('delete', runId, async (db) => {
      const deleted = await db.write(() => {
        db.run(LOG_SQL.deleteOfRun, runId, runId);
        return db.run(SQL.deleteRun, runId);
      });
      this.rowTracker.forget(runId);
      this.known.delete(runId);
      return deleted > 0;
    });
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  async heartbeat(owner: string, ttlMs: number): Promise<void> {
    checkOwner(owner);
    checkTtl(ttlMs);
    return this.withDatabase('heartbeat', undefined, (db) =>
      db.write(() => {
        db.run(SQL.heartbeat, owner, this.now() + ttlMs);
      }),
    );
  }

  async claim(runId: string, owner: string): Promise<StoredRun> {
    checkRunId(runId);
    checkOwner(owner);
    return this.withDatabase('claim', runId, (db) =>
      db.write(() => {
        // A refusal read a moment after the UPDATE may find the lease just expired (the clock
        // moved between the two): then the claim is tried again.
        for (let attempt = 0; ; attempt++) {
          const at = this.now();
          const row = db.get(SQL.claim, owner, at, runId, owner, at);
          if (row !== undefined) return this.withRows(db, [row])[0]!;
          const found = db.get(SQL.claimRefused, runId);
          const run = found === undefined ? undefined : this.withRows(db, [found])[0];
          const settled = refusedClaim(runId, run, Number(found?.lease_until), attempt, this.now());
          if (settled !== undefined) return settled;
        }
      }),
    );
  }

  async release(runId: string, owner: string): Promise<boolean> {
    checkRunId(runId);
    checkOwner(owner);
    return this.withDatabase('release', runId, async (db) => {
      const released = await db.write(() => db.run(SQL.release, runId, owner));
      // Released (evicted, or the runtime closed): its next save here follows a claim, which
      // advances the version past what was tracked, so the rows kept for appending (the
      // run's transcript) would only hold memory (issue 29 item 3).
      this.known.delete(runId);
      this.rowTracker.forget(runId);
      return released > 0;
    });
  }

  /** Runs `work` on the open database file; driver failures become RunStoreUnavailableError. */
  private withDatabase<T>(
    operation: string,
    runId: string | undefined,
    work: (db: SqliteConnection) => T | Promise<T>,
  ): Promise<T> {
    return this.connection.use(operation, runId, (db) => {
      this.checkFile();
      return work(db);
    });
  }

  /** Opens the database: WAL and `synchronous` set, the schema migrated, the file's identity taken. */
  private async open(): Promise<SqliteConnection> {
    if (this.file !== undefined) await mkdir(dirname(this.file), { recursive: true });
    const db = await SqliteConnection.open(databasePath(this.url), this.options.busyTimeoutMs ?? 5000);
    try {
      if (this.url !== ':memory:') {
        await db.retrying(() => db.exec('PRAGMA journal_mode = WAL'));
        db.exec(`PRAGMA synchronous = ${this.options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      }
      await migrate(db);
      if (this.file !== undefined) {
        const { dev, ino } = statSync(this.file);
        this.identity = { dev, ino };
      }
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Throws when the database file is no longer the one this store opened. */
  private checkFile(): void {
    if (this.file === undefined || this.identity === undefined) return;
    let now: { dev: number; ino: number } | undefined;
    try {
      now = statSync(this.file);
    } catch {
      now = undefined;
    }
    if (now?.dev !== this.identity.dev || now?.ino !== this.identity.ino) {
      throw new Error(
        `the database file ${this.file} was ${now === undefined ? 'deleted' : 'replaced'} while this process had it open; nothing more is stored until the runtime is restarted on a database`,
      );
    }
  }

  /** Keeps what a save will return of `run` (its columns), while it is not finished. */
  private remember(run: StoredRun): StoredRun {
    const { snapshot: _, ...columns } = run;
    this.known.delete(run.runId);
    if (!FINISHED_STATUSES.includes(run.status)) {
      this.known.set(run.runId, { ...columns, snapshot: undefined });
      if (this.known.size > 10_000) this.known.delete(this.known.keys().next().value!);
    }
    return run;
  }

  /** Runs from their rows, each snapshot joined with its member rows (snapshot-rows.ts). */
  private withRows(db: SqliteConnection, rows: readonly Row[]): StoredRun[] {
    const heads = rows.map((row) => JSON.parse(String(row.snapshot)) as unknown);
    const ids = rows.filter((_, index) => hasMarkers(heads[index])).map((row) => String(row.run_id));
    const stored: { runId: string; member: string; index: number; value: unknown }[] = [];
    if (ids.length > 0) {
      for (const row of db.all(LOG_SQL.runRows, JSON.stringify(ids))) {
        stored.push({
          runId: String(row.run_id),
          member: memberOfKind(Number(row.kind)),
          index: Number(row.seq),
          value: JSON.parse(String(row.value)),
        });
      }
    }
    const byRun = groupRows(stored);
    return rows.map((row, index) =>
      this.remember(toStoredRun(row, joinSnapshot(heads[index], byRun.get(String(row.run_id))))),
    );
  }
}

/** What a save writes, computed before its transaction. */
interface SaveWrite {
  /** The snapshot's head (snapshot-rows.ts) as JSON text. */
  snapshot: string;
  /** The labels as JSON text, `null` to keep the stored ones. */
  labels: string | null;
  eventCount: number;
  /** The delete of members rewritten, not appended to (their stored rows from an index on), if any. */
  trim: { sql: string; args: unknown[] } | undefined;
  /** What the save adds to the run's log: its events, then the members' new rows. */
  entries: LogEntry[];
}

function toDatabaseUrl(path: string): string {
  if (typeof path !== 'string' || path === '')
    throw new TypeError('sqliteStore: path must be a non-empty string');
  if (path === ':memory:' || path.startsWith('file:')) return path;
  return pathToFileURL(resolve(path)).href;
}

/** The file path `libsql` opens for a store URL (`:memory:` as it is; a `file:` URL's path). */
function databasePath(url: string): string {
  if (url === ':memory:') return url;
  const bare = url.replace(/[?#].*$/, '');
  return bare.startsWith('file://') ? fileURLToPath(bare) : resolve(bare.slice('file:'.length));
}
