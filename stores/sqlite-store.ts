/**
 * The SQLite RunStore: the embedded, durable default (docs/durability.md), through the `libsql`
 * package (a better-sqlite3-style synchronous API on libSQL, prebuilt binaries, no install script).
 *
 * - One database file holds the runs of any number of processes on one machine. Tables are
 *   prefixed `toolwarden_` so the file can be an application's own database.
 * - The schema is created on first use and versioned in `toolwarden_schema_migrations`; pending
 *   migrations are applied in one `BEGIN IMMEDIATE` transaction (see `migrate` for how processes
 *   starting at once settle it).
 * - WAL journal mode (readers do not block the writer).
 * - Every statement is prepared once and kept for the store's life (a statement cache on the
 *   connection): a step's write is `BEGIN IMMEDIATE`, one multi-row insert of its events, one
 *   multi-row insert of the snapshot rows it added, one `UPDATE` of the run row, `COMMIT`, all
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
 * - What a step's commit writes (schema 4, issue 36 item 2): the run row, the write-order index
 *   (`touch_seq`), the events table and its primary key's index, the rows table and its index;
 *   no other index of the runs table holds a column a step rewrites, and a save sets `status`
 *   only when it changes. `list` orders by write order (`touch_seq DESC`).
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
import type {
  NewRun,
  NewRunEvent,
  ReadEventsOptions,
  RunEventRecord,
  RunListFilter,
  RunStatus,
  RunStore,
  RunUpdate,
  StoredRun,
} from './run-store.ts';
import {
  RunExistsError,
  RunNotFoundError,
  RunStoreClosedError,
  RunStoreError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from './run-store-errors.ts';
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
import { groupRows, hasMarkers, joinSnapshot, type MemberRows, RowTracker } from './snapshot-rows.ts';
import { SqliteConnection } from './sqlite-connection.ts';

type Row = Record<string, unknown>;

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

interface Migration {
  version: number;
  description: string;
  statements: string[];
}

/** Applied in order; never edit a released entry, append a new one. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs and run events',
    statements: [
      `CREATE TABLE toolwarden_runs (
        run_id TEXT PRIMARY KEY,
        session_id TEXT,
        agent_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'awaiting', 'completed', 'failed', 'canceled')),
        version INTEGER NOT NULL,
        snapshot TEXT NOT NULL,
        labels TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        touch_seq INTEGER NOT NULL,
        event_seq INTEGER NOT NULL DEFAULT 0
      )`,
      'CREATE INDEX toolwarden_runs_by_updated ON toolwarden_runs (updated_at DESC, touch_seq DESC)',
      'CREATE INDEX toolwarden_runs_by_status ON toolwarden_runs (status, updated_at DESC, touch_seq DESC)',
      'CREATE INDEX toolwarden_runs_by_session ON toolwarden_runs (session_id, updated_at DESC, touch_seq DESC)',
      'CREATE UNIQUE INDEX toolwarden_runs_by_touch ON toolwarden_runs (touch_seq)',
      `CREATE TABLE toolwarden_run_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
      )`,
    ],
  },
  {
    version: 2,
    description: 'run owners and leases',
    statements: [
      'ALTER TABLE toolwarden_runs ADD COLUMN owner TEXT',
      `CREATE TABLE toolwarden_run_owners (
        owner TEXT PRIMARY KEY,
        lease_until INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 3,
    description: 'append-only snapshot members as rows (snapshot-rows.ts)',
    statements: [
      `CREATE TABLE toolwarden_run_rows (
        run_id TEXT NOT NULL,
        member TEXT NOT NULL,
        idx INTEGER NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, member, idx)
      )`,
    ],
  },
  {
    // Issue 36 item 2: a step's commit wrote ~11 WAL pages for ~2 KB of new rows. Every index of
    // the runs table held updated_at and touch_seq, which every save rewrites, so each save moved
    // an entry in all four. Now only touch_seq's own index moves (list orders by it: write
    // order), and status and session are indexed alone (a step changes neither; a save sets
    // status only when it changes, since SQLite rewrites the index of every column an UPDATE sets).
    // (WITHOUT ROWID events and rows were tried and wrote more: a step's ~600-byte events split
    // the run's leaf in the middle of the b-tree, where a rowid table appends at its right edge.)
    version: 4,
    description: 'runs indexes without the columns every save rewrites',
    statements: [
      'DROP INDEX toolwarden_runs_by_updated',
      'DROP INDEX toolwarden_runs_by_status',
      'DROP INDEX toolwarden_runs_by_session',
      'CREATE INDEX toolwarden_runs_by_status ON toolwarden_runs (status)',
      'CREATE INDEX toolwarden_runs_by_session ON toolwarden_runs (session_id)',
    ],
  },
];

/** The schema version this code reads and writes. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

const RUN_COLUMNS =
  'run_id, session_id, agent_id, status, version, snapshot, labels, created_at, updated_at, owner';
const RUN_COLUMNS_WITHOUT_SNAPSHOT =
  'run_id, session_id, agent_id, status, version, labels, created_at, updated_at, owner';
const FINISHED = `('completed', 'failed', 'canceled')`;
/** The next write-order number; the unique index on touch_seq makes max() a lookup. */
const NEXT_TOUCH = '(SELECT coalesce(max(touch_seq), 0) + 1 FROM toolwarden_runs)';
/** The run is at the version a save names (the condition every statement of a save repeats). */
const AT_VERSION = 'EXISTS (SELECT 1 FROM toolwarden_runs WHERE run_id = ? AND version = ?)';

/** The SQL of every statement the store runs (each prepared once per connection). */
const SQL = {
  insertEventsIfAbsent: `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT ?, e.key + 1, e.value ->> 0, e.value ->> 1 FROM json_each(?) e
    WHERE NOT EXISTS (SELECT 1 FROM toolwarden_runs WHERE run_id = ?)`,
  insertRowsIfAbsent: `INSERT INTO toolwarden_run_rows (run_id, member, idx, value)
    SELECT ?, e.value ->> 0, e.value ->> 1, e.value ->> 2 FROM json_each(?) e
    WHERE NOT EXISTS (SELECT 1 FROM toolwarden_runs WHERE run_id = ?)`,
  insertRun: `INSERT INTO toolwarden_runs (run_id, session_id, agent_id, status, version, snapshot, labels,
      created_at, updated_at, touch_seq, event_seq, owner)
    VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ${NEXT_TOUCH}, ?, ?)
    ON CONFLICT (run_id) DO NOTHING`,
  loadRun: `SELECT ${RUN_COLUMNS} FROM toolwarden_runs WHERE run_id = ?`,
  runRows: `SELECT run_id, member, value FROM toolwarden_run_rows
    WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, member, idx`,
  insertEventsAtVersion: `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT r.run_id, r.event_seq + e.key + 1, e.value ->> 0, e.value ->> 1
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ? AND r.version = ?`,
  trimRowsAtVersion: `DELETE FROM toolwarden_run_rows WHERE run_id = ? AND member = ? AND idx >= ? AND ${AT_VERSION}`,
  upsertRowsAtVersion: `INSERT INTO toolwarden_run_rows (run_id, member, idx, value)
    SELECT ?, e.value ->> 0, e.value ->> 1, e.value ->> 2 FROM json_each(?) e WHERE ${AT_VERSION}
    ON CONFLICT (run_id, member, idx) DO UPDATE SET value = excluded.value`,
  updateRun: `UPDATE toolwarden_runs
    SET status = ?, snapshot = ?, labels = coalesce(?, labels), version = version + 1,
        updated_at = ?, touch_seq = ${NEXT_TOUCH}, event_seq = event_seq + ?
    WHERE run_id = ? AND version = ?`,
  /**
   * `updateRun` for a save that keeps the status (most steps): without `status` in its SET list,
   * whose index SQLite would otherwise rewrite; the same parameters but the status.
   */
  updateRunSameStatus: `UPDATE toolwarden_runs
    SET snapshot = ?, labels = coalesce(?, labels), version = version + 1,
        updated_at = ?, touch_seq = ${NEXT_TOUCH}, event_seq = event_seq + ?
    WHERE run_id = ? AND version = ?`,
  runVersion: 'SELECT version FROM toolwarden_runs WHERE run_id = ?',
  reserveEvents: 'UPDATE toolwarden_runs SET event_seq = event_seq + ? WHERE run_id = ?',
  insertReservedEvents: `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT r.run_id, r.event_seq - ? + e.key, e.value ->> 0, e.value ->> 1
    FROM toolwarden_runs r, json_each(?) e WHERE r.run_id = ?`,
  readEvents: 'SELECT seq, event, at FROM toolwarden_run_events WHERE run_id = ? AND seq > ? ORDER BY seq',
  readEventsLimit:
    'SELECT seq, event, at FROM toolwarden_run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  deleteEvents: 'DELETE FROM toolwarden_run_events WHERE run_id = ?',
  deleteRun: 'DELETE FROM toolwarden_runs WHERE run_id = ?',
  deleteRows: 'DELETE FROM toolwarden_run_rows WHERE run_id = ?',
  heartbeat: `INSERT INTO toolwarden_run_owners (owner, lease_until) VALUES (?, ?)
    ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until`,
  claim: `UPDATE toolwarden_runs
    SET owner = ?, version = version + 1, updated_at = ?, touch_seq = ${NEXT_TOUCH}
    WHERE run_id = ? AND status NOT IN ${FINISHED}
      AND (owner IS NULL OR owner = ? OR NOT EXISTS (
        SELECT 1 FROM toolwarden_run_owners o
        WHERE o.owner = toolwarden_runs.owner AND o.lease_until > ?))
    RETURNING ${RUN_COLUMNS}`,
  claimRefused: `SELECT ${RUN_COLUMNS},
      (SELECT lease_until FROM toolwarden_run_owners o WHERE o.owner = r.owner) AS lease_until
    FROM toolwarden_runs r WHERE run_id = ?`,
  release: 'UPDATE toolwarden_runs SET owner = NULL WHERE run_id = ? AND owner = ?',
} as const;

/**
 * A save's inserts with their rows bound as parameters of a `VALUES` list, one statement per row
 * count up to {@link MAX_BOUND_ROWS} (more go through the `json_each` forms above): ~10 µs less per
 * step than nesting the rows in a JSON array that SQLite parses again (4 events and 2 transcript
 * rows a step, docs/benchmarks.md §"SQLite per step").
 */
const MAX_BOUND_ROWS = 8;
const valuesOf = (count: number) => `(VALUES ${Array.from({ length: count }, () => '(?, ?, ?)').join(', ')})`;
/** By row count (index 0 is never run). */
const BOUND = {
  /** `[seq offset, eventText, at]` rows, numbered after the run's counter at `expectedVersion`. */
  insertEventsAtVersion: Array.from(
    { length: MAX_BOUND_ROWS + 1 },
    (_, count) => `INSERT INTO toolwarden_run_events (run_id, seq, event, at)
    SELECT r.run_id, r.event_seq + v.column1, v.column2, v.column3
    FROM toolwarden_runs r, ${valuesOf(count)} v WHERE r.run_id = ? AND r.version = ?`,
  ),
  /** `[member, idx, valueText]` rows. */
  upsertRowsAtVersion: Array.from(
    { length: MAX_BOUND_ROWS + 1 },
    (_, count) => `INSERT INTO toolwarden_run_rows (run_id, member, idx, value)
    SELECT ?, v.column1, v.column2, v.column3 FROM ${valuesOf(count)} v WHERE ${AT_VERSION}
    ON CONFLICT (run_id, member, idx) DO UPDATE SET value = excluded.value`,
  ),
};

/** Opens (lazily, on first call) a {@link RunStore} on a SQLite database. */
export function sqliteStore(options: SqliteStoreOptions): RunStore {
  const url = toDatabaseUrl(options.path);
  const now = options.now ?? Date.now;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const storeName = `sqlite run store (${url})`;
  let client: Promise<SqliteConnection> | undefined;
  let closed = false;
  const rowTracker = new RowTracker();
  /** Each run as this store last read or wrote it, without its snapshot: what a save returns. */
  const known = new Map<string, StoredRun>();
  function remember(run: StoredRun): StoredRun {
    const { snapshot: _, ...columns } = run;
    known.delete(run.runId);
    if (!FINISHED_STATUSES.includes(run.status)) {
      known.set(run.runId, { ...columns, snapshot: undefined });
      if (known.size > 10_000) known.delete(known.keys().next().value!);
    }
    return run;
  }

  /** Runs from their rows, each snapshot joined with its member rows (snapshot-rows.ts). */
  function withRows(db: SqliteConnection, rows: readonly Row[]): StoredRun[] {
    const heads = rows.map((row) => JSON.parse(String(row.snapshot)) as unknown);
    const ids = rows.filter((_, index) => hasMarkers(heads[index])).map((row) => String(row.run_id));
    const stored: { runId: string; member: string; value: unknown }[] = [];
    if (ids.length > 0) {
      for (const row of db.all(SQL.runRows, JSON.stringify(ids))) {
        stored.push({
          runId: String(row.run_id),
          member: String(row.member),
          value: JSON.parse(String(row.value)),
        });
      }
    }
    const byRun = groupRows(stored);
    return rows.map((row, index) =>
      remember(toStoredRun(row, joinSnapshot(heads[index], byRun.get(String(row.run_id))))),
    );
  }

  function unavailable(
    operation: string,
    runId: string | undefined,
    cause: unknown,
  ): RunStoreUnavailableError {
    return new RunStoreUnavailableError({
      store: storeName,
      operation,
      ...(runId === undefined ? {} : { runId }),
      cause,
    });
  }

  // The file this store opened, by device and inode: deleting or replacing it under a live
  // runtime used to lose every later write silently (issue 12, defect 9).
  const file = url === options.path ? undefined : resolve(options.path);
  let identity: { dev: number; ino: number } | undefined;

  /** Throws when the database file is no longer the one this store opened. */
  function checkFile(): void {
    if (file === undefined || identity === undefined) return;
    let now: { dev: number; ino: number } | undefined;
    try {
      now = statSync(file);
    } catch {
      now = undefined;
    }
    if (now?.dev !== identity.dev || now?.ino !== identity.ino) {
      throw new Error(
        `the database file ${file} was ${now === undefined ? 'deleted' : 'replaced'} while this process had it open; nothing more is stored until the runtime is restarted on a database`,
      );
    }
  }

  async function open(): Promise<SqliteConnection> {
    if (file !== undefined) await mkdir(dirname(file), { recursive: true });
    const db = await SqliteConnection.open(databasePath(url), busyTimeoutMs);
    try {
      if (url !== ':memory:') {
        await db.retrying(() => db.exec('PRAGMA journal_mode = WAL'));
        db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      }
      await migrate(db);
      if (file !== undefined) {
        const { dev, ino } = statSync(file);
        identity = { dev, ino };
      }
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Runs `work` on the open database; driver failures become RunStoreUnavailableError. */
  async function withDatabase<T>(
    operation: string,
    runId: string | undefined,
    work: (db: SqliteConnection) => T | Promise<T>,
  ): Promise<T> {
    if (closed) throw unavailable(operation, runId, new RunStoreClosedError());
    try {
      client ??= open();
      const db = await client.catch((error: unknown) => {
        // Let the next call try again: the database may come back.
        client = undefined;
        throw error;
      });
      checkFile();
      return await work(db);
    } catch (error) {
      if (error instanceof RunStoreError) throw error;
      throw unavailable(operation, runId, closed ? new RunStoreClosedError() : error);
    }
  }

  return {
    async create(run: NewRun): Promise<StoredRun> {
      checkNewRun(run);
      const split = rowTracker.split(run.runId, run.snapshot, undefined);
      const snapshot = JSON.stringify(split.head);
      const labels = run.labels === undefined ? null : JSON.stringify(run.labels);
      const events = run.events ?? [];
      const memberRows = rowEntries(split.rows);
      return withDatabase('create', run.runId, (db) =>
        db.write(() => {
          const at = now();
          // Events and rows first, only if the run is absent: the condition the run insert
          // checks, so either all land or none does.
          if (events.length > 0) db.run(SQL.insertEventsIfAbsent, run.runId, eventRows(events), run.runId);
          if (memberRows !== undefined) db.run(SQL.insertRowsIfAbsent, run.runId, memberRows, run.runId);
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
          );
          if (inserted === 0) throw new RunExistsError(run.runId);
          rowTracker.written(run.runId, run.snapshot, 1, FINISHED_STATUSES.includes(run.status));
          return remember(createdRun(run, at, structuredClone(run.snapshot)));
        }),
      );
    },

    async load(runId: string): Promise<StoredRun | undefined> {
      checkRunId(runId);
      return withDatabase('load', runId, (db) =>
        db.read(() => {
          const row = db.get(SQL.loadRun, runId);
          return row === undefined ? undefined : withRows(db, [row])[0];
        }),
      );
    },

    async save(runId: string, update: RunUpdate): Promise<StoredRun> {
      checkRunId(runId);
      checkRunUpdate(update);
      const split = rowTracker.split(runId, update.snapshot, update.expectedVersion);
      const snapshot = JSON.stringify(split.head);
      const labels = update.labels === undefined ? null : JSON.stringify(update.labels);
      const events = update.events ?? [];
      const version = update.expectedVersion;
      const eventInsert = events.length === 0 ? undefined : boundEvents(events, runId, version);
      const rowUpsert = boundMemberRows(split.rows, runId, version);
      return withDatabase('save', runId, (db) =>
        db.write(() => {
          // The events are inserted first, numbered after the run's counter, only if the run is
          // at `expectedVersion`; then the rows the step added (snapshot-rows.ts), under the same
          // condition; then the run row. One transaction: the events land exactly when the save does.
          if (eventInsert !== undefined) db.run(eventInsert.sql, ...eventInsert.args);
          for (const member of split.rows) {
            if (member.trim) {
              db.run(
                SQL.trimRowsAtVersion,
                runId,
                member.member,
                member.from + member.values.length,
                runId,
                version,
              );
            }
          }
          if (rowUpsert !== undefined) db.run(rowUpsert.sql, ...rowUpsert.args);
          // The run's other columns are known when this store last read or wrote the version
          // being replaced; else they are read back (RETURNING).
          const before = known.get(runId);
          const at = now();
          const args = [update.status, snapshot, labels, at, events.length, runId, version] as const;
          let saved: StoredRun | undefined;
          if (before?.version === version) {
            const updated =
              before.status === update.status
                ? db.run(SQL.updateRunSameStatus, ...args.slice(1))
                : db.run(SQL.updateRun, ...args);
            if (updated === 1) {
              saved = {
                ...before,
                status: update.status,
                version: version + 1,
                updatedAt: at,
                ...(update.labels === undefined ? {} : { labels: structuredClone(update.labels) }),
              };
            }
          } else {
            const row = db.get(`${SQL.updateRun} RETURNING ${RUN_COLUMNS_WITHOUT_SNAPSHOT}`, ...args);
            if (row !== undefined) saved = toStoredRun(row, undefined);
          }
          if (saved !== undefined) {
            remember(saved);
            return rowTracker.saved(runId, update, saved);
          }
          const actual = db.get(SQL.runVersion, runId);
          if (actual === undefined) throw new RunNotFoundError(runId);
          throw new StaleRunVersionError(runId, version, Number(actual.version));
        }),
      );
    },

    async list(filter?: RunListFilter): Promise<StoredRun[]> {
      const { statuses, sessionId, limit } = checkListFilter(filter);
      if (statuses?.length === 0) return withDatabase('list', undefined, () => []);
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
      return withDatabase('list', undefined, (db) => db.read(() => withRows(db, db.all(sql, ...args))));
    },

    async appendEvents(runId: string, events: NewRunEvent[]): Promise<void> {
      checkRunId(runId);
      checkEvents(events);
      const rows = eventRows(events);
      return withDatabase('appendEvents', runId, (db) => {
        if (events.length === 0) return;
        // One transaction: reserve seq numbers (last + 1 ... last + n) on the run row, then insert
        // the events at those numbers. A missing run reserves nothing and inserts nothing.
        return db.write(() => {
          if (db.run(SQL.reserveEvents, events.length, runId) === 0) throw new RunNotFoundError(runId);
          db.run(SQL.insertReservedEvents, events.length - 1, rows, runId);
        });
      });
    },

    async readEvents(runId: string, options?: ReadEventsOptions): Promise<RunEventRecord[]> {
      checkRunId(runId);
      const { afterSeq, limit } = checkReadEventsOptions(options);
      return withDatabase('readEvents', runId, (db) =>
        db.read(() =>
          (limit === undefined
            ? db.all(SQL.readEvents, runId, afterSeq)
            : db.all(SQL.readEventsLimit, runId, afterSeq, limit)
          ).map((row) => ({
            runId,
            seq: Number(row.seq),
            event: JSON.parse(String(row.event)),
            at: Number(row.at),
          })),
        ),
      );
    },

    async delete(runId: string): Promise<boolean> {
      checkRunId(runId);
      return withDatabase('delete', runId, async (db) => {
        const deleted = await db.write(() => {
          db.run(SQL.deleteEvents, runId);
          const runs = db.run(SQL.deleteRun, runId);
          db.run(SQL.deleteRows, runId);
          return runs;
        });
        rowTracker.forget(runId);
        known.delete(runId);
        return deleted > 0;
      });
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const pending = client;
      client = undefined;
      const db = await pending?.catch(() => undefined);
      db?.close();
    },

    async heartbeat(owner: string, ttlMs: number): Promise<void> {
      checkOwner(owner);
      checkTtl(ttlMs);
      return withDatabase('heartbeat', undefined, (db) =>
        db.write(() => {
          db.run(SQL.heartbeat, owner, now() + ttlMs);
        }),
      );
    },

    async claim(runId: string, owner: string): Promise<StoredRun> {
      checkRunId(runId);
      checkOwner(owner);
      return withDatabase('claim', runId, (db) =>
        db.write(() => {
          // A refusal read a moment after the UPDATE may find the lease just expired (the clock
          // moved between the two): then the claim is tried again.
          for (let attempt = 0; ; attempt++) {
            const at = now();
            const row = db.get(SQL.claim, owner, at, runId, owner, at);
            if (row !== undefined) return withRows(db, [row])[0]!;
            const found = db.get(SQL.claimRefused, runId);
            const run = found === undefined ? undefined : withRows(db, [found])[0];
            const settled = refusedClaim(runId, run, Number(found?.lease_until), attempt, now());
            if (settled !== undefined) return settled;
          }
        }),
      );
    },

    async release(runId: string, owner: string): Promise<boolean> {
      checkRunId(runId);
      checkOwner(owner);
      return withDatabase('release', runId, async (db) => {
        const released = await db.write(() => db.run(SQL.release, runId, owner));
        // Released (evicted, or the runtime closed): its next save here follows a claim, which
        // advances the version past what was tracked, so the rows kept for appending (the
        // run's transcript) would only hold memory (issue 29 item 3).
        known.delete(runId);
        rowTracker.forget(runId);
        return released > 0;
      });
    },
  };
}

/**
 * Creates the schema, or brings it up to {@link SQLITE_SCHEMA_VERSION}.
 *
 * Optimistic: read the version; if migrations are pending, apply them and record them in one
 * `BEGIN IMMEDIATE` transaction. If another process migrated in between, that transaction fails
 * (the table exists, or the version row does) and rolls back whole; reading the version again
 * then shows it done.
 */
async function migrate(db: SqliteConnection): Promise<void> {
  await db.write(() =>
    db.exec(`CREATE TABLE IF NOT EXISTS toolwarden_schema_migrations (
      version INTEGER PRIMARY KEY,
      description TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`),
  );
  const current = await db.read(() => schemaVersion(db));
  if (current === SQLITE_SCHEMA_VERSION) return;
  if (current > SQLITE_SCHEMA_VERSION) {
    throw new Error(
      `the database has run store schema version ${current}, newer than this toolwarden's ` +
        `${SQLITE_SCHEMA_VERSION}; upgrade toolwarden`,
    );
  }
  const pending = MIGRATIONS.filter((migration) => migration.version > current);
  try {
    await db.write(() => {
      for (const migration of pending) {
        for (const statement of migration.statements) db.exec(statement);
        db.once(
          'INSERT INTO toolwarden_schema_migrations (version, description, applied_at) VALUES (?, ?, ?)',
          migration.version,
          migration.description,
          Date.now(),
        );
      }
    });
  } catch (error) {
    if ((await db.read(() => schemaVersion(db))) >= SQLITE_SCHEMA_VERSION) return; // another process won the race
    throw error;
  }
}

function schemaVersion(db: SqliteConnection): number {
  const row = db.get('SELECT coalesce(max(version), 0) AS version FROM toolwarden_schema_migrations');
  return Number(row?.version ?? 0);
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

/**
 * Events as one JSON array of `[eventText, at]` pairs, for a single `json_each` insert (one
 * statement, whatever the count: ~25 µs less per event than a statement each).
 */
function eventRows(events: NewRunEvent[]): string {
  return JSON.stringify(events.map(({ event, at }) => [JSON.stringify(event), at]));
}

/**
 * The member rows a write adds, every member in one JSON array of `[member, idx, valueText]`
 * for a single `json_each` insert; `undefined` when there are none.
 */
function rowEntries(members: readonly MemberRows[]): string | undefined {
  const entries: [string, number, string][] = [];
  for (const { member, from, values } of members) {
    for (let i = 0; i < values.length; i++) entries.push([member, from + i, JSON.stringify(values[i])]);
  }
  return entries.length === 0 ? undefined : JSON.stringify(entries);
}

/** A save's event insert: bound `VALUES` rows when few ({@link BOUND}), else one JSON array. */
function boundEvents(events: NewRunEvent[], runId: string, version: number): BoundStatement {
  if (events.length > MAX_BOUND_ROWS) {
    return { sql: SQL.insertEventsAtVersion, args: [eventRows(events), runId, version] };
  }
  const args: unknown[] = [];
  for (let i = 0; i < events.length; i++) {
    const { event, at } = events[i]!;
    args.push(i + 1, JSON.stringify(event), at);
  }
  args.push(runId, version);
  return { sql: BOUND.insertEventsAtVersion[events.length]!, args };
}

/** A save's member-row upsert (as {@link boundEvents}); `undefined` when it adds none. */
function boundMemberRows(
  members: readonly MemberRows[],
  runId: string,
  version: number,
): BoundStatement | undefined {
  let count = 0;
  for (const { values } of members) count += values.length;
  if (count === 0) return undefined;
  if (count > MAX_BOUND_ROWS) {
    return { sql: SQL.upsertRowsAtVersion, args: [runId, rowEntries(members), runId, version] };
  }
  const args: unknown[] = [runId];
  for (const { member, from, values } of members) {
    for (let i = 0; i < values.length; i++) args.push(member, from + i, JSON.stringify(values[i]));
  }
  args.push(runId, version);
  return { sql: BOUND.upsertRowsAtVersion[count]!, args };
}

interface BoundStatement {
  sql: string;
  args: unknown[];
}

function toStoredRun(row: Row, snapshot: unknown): StoredRun {
  const sessionId = row.session_id;
  const labels = row.labels;
  return {
    runId: String(row.run_id),
    ...(sessionId === null || sessionId === undefined ? {} : { sessionId: String(sessionId) }),
    agentId: String(row.agent_id),
    status: String(row.status) as RunStatus,
    version: Number(row.version),
    snapshot,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ...(labels === null || labels === undefined ? {} : { labels: JSON.parse(String(labels)) }),
    ...(row.owner === null || row.owner === undefined ? {} : { owner: String(row.owner) }),
  };
}
