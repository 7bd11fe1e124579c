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
 *   connection): a step's write is `BEGIN IMMEDIATE`, a read of the run's current head, the new
 *   head inserted and the old one deleted, one multi-row insert of its events, the snapshot rows
 *   it added and its mark into the run's log, `COMMIT`, all within one synchronous call, so no
 *   transaction is ever held across an `await`.
 * - Another process's write lock never blocks the event loop (issue 24 item 8): the connection's
 *   busy timeout is 0, so SQLite answers SQLITE_BUSY at once instead of waiting inside the call,
 *   and the store tries the whole transaction again after a pause of 1–20 ms (the event loop runs
 *   meanwhile), until `busyTimeoutMs` has passed.
 * - Optimistic concurrency: a save reads the run's version inside its `BEGIN IMMEDIATE`
 *   transaction (which holds the file's write lock, so nothing moves until it commits) and writes
 *   only when it is `expectedVersion`. Snapshots, labels and events are JSON text.
 * - Event `seq` numbers count on from the run's last write's mark (`sqlite-log.ts`), read in the
 *   same transaction as the inserts, so concurrent appenders never collide. Events given to
 *   `create`/`save` are inserted in the same transaction as the snapshot (see `save`).
 * - Leases (migration 2): `toolwarden_run_owners` holds each owner's `lease_until`; a run's
 *   `owner` column names who holds it. `claim` is one conditional `UPDATE ... RETURNING`.
 * - `synchronous = NORMAL` by default (WAL): a committed write survives the process being
 *   killed; only an OS crash or power loss can take back the last commits. `synchronous: 'full'`
 *   fsyncs every commit (~3-4 ms each on a typical disk, against ~0.15 ms; a step's p50/p99 in
 *   docs/benchmarks.md §Durable step floor).
 * - What a step's commit writes (schema 8, issue 36 item 2): two b-trees, the run log
 *   (`sqlite-log.ts`: events, snapshot rows and the write's mark in one table keyed by run and
 *   write order) and the run's head (`sqlite-heads.ts`: snapshot head and version, keyed by write
 *   order); the run row only when the status, labels or owner change, each column set only when
 *   it changes (SQLite rewrites the index of every column an UPDATE sets). `list` orders by
 *   write order, the heads' key (latest first).
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
  RunStatus,
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
import type { MemberRows } from './snapshot-rows.ts';
import { groupRows, hasMarkers, joinSnapshot, RowTracker, withSnapshotCopy } from './snapshot-rows.ts';
import { SqliteConnection } from './sqlite-connection.ts';
import { CURRENT_RUN, HEAD_SQL } from './sqlite-heads.ts';
import {
  LOG_SQL,
  type LogEntry,
  type LogTail,
  liveRowsOf,
  logEntries,
  logInserts,
  logTrim,
  memberOfKind,
} from './sqlite-log.ts';
import { migrate } from './sqlite-schema.ts';
import { listSql, type Row, SQL, toStoredRun } from './sqlite-statements.ts';
import { StoreConnection } from './store-connection.ts';

export { SQLITE_SCHEMA_VERSION } from './sqlite-schema.ts';

/** Log entries past which a save lets the event loop turn between encoding and writing them. */
const LARGE_WRITE_ENTRIES = 1_000;

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
  /** Each run as this store last wrote it: a save from that version skips reading it back. */
  private readonly known = new Map<string, KnownRun>();
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
    const entries = logEntries(run.events ?? [], split.rows);
    return this.withDatabase('create', run.runId, (db) =>
      db.write(() => {
        const at = this.now();
        // The run row first (its log_key numbers the head and the entries); a run that exists
        // gives no row back, and the transaction rolls back whole.
        const inserted = db.get(
          HEAD_SQL.insertRun,
          run.runId,
          run.sessionId ?? null,
          run.agentId,
          run.status,
          labels,
          at,
          run.owner ?? null,
        );
        if (inserted === undefined) throw new RunExistsError(run.runId);
        const logKey = Number(inserted.log_key);
        const touch = insertHead(db, run.runId, 1, at, snapshot);
        const tail = { logKey, next: 0, eventSeq: 0, live: liveRowsOf('', 0) };
        const { inserts, after } = logInserts(entries, tail, touch, split.rows);
        writeLog(db, inserts);
        const row = {
          run_id: run.runId,
          session_id: run.sessionId ?? null,
          agent_id: run.agentId,
          status: run.status,
          labels,
          created_at: at,
          owner: run.owner ?? null,
          version: 1,
          updated_at: at,
        };
        this.remember(run.runId, { row, touch, tail: after });
        this.rowTracker.written(run.runId, run.snapshot, 1, FINISHED_STATUSES.includes(run.status));
        // The snapshot copied when first read, as a save's (a large batch's first write is a create).
        return withSnapshotCopy(createdRun(run, at, undefined), run.snapshot);
      }),
    );
  }

  async load(runId: string): Promise<StoredRun | undefined> {
    checkRunId(runId);
    return this.withDatabase('load', runId, (db) =>
      db.read(() => {
        const row = db.get(SQL.loadRun, runId);
        if (row === undefined) return void missingRun(db, runId);
        return this.withRows(db, [row])[0];
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
      members: split.rows,
      entries: logEntries(update.events ?? [], split.rows),
    };
    // A large write's encoding and its transaction in two macrotasks, not one stretch: a
    // 10,000-call batch's first save encodes its 10,000 events (~17 ms) before ~50-60 ms of
    // transaction (issue 36 item 5).
    if (write.entries.length > LARGE_WRITE_ENTRIES) await new Promise((resolve) => setImmediate(resolve));
    return this.withDatabase('save', runId, (db) => db.write(() => this.writeSave(db, runId, update, write)));
  }

  /**
   * A save's transaction: the run's current head read (its version checked against
   * `expectedVersion`), a rewritten member's old rows deleted, the new head inserted at the
   * heads' right edge and the old one deleted, then the step's events, the rows it added
   * (snapshot-rows.ts) and the write's mark in one insert into the run's log (sqlite-log.ts);
   * the run row only when the status or labels change. One transaction: the events land exactly
   * when the save does.
   */
  private writeSave(db: SqliteConnection, runId: string, update: RunUpdate, write: SaveWrite): StoredRun {
    const version = update.expectedVersion;
    const at = this.now();
    const known = this.known.get(runId);
    if (known !== undefined && Number(known.row.version) === version) {
      const { logKey, next, eventSeq } = known.tail;
      const rewritten = db.run(
        HEAD_SQL.rewriteKnownHead,
        version + 1,
        at,
        write.snapshot,
        known.touch,
        version,
        known.row.updated_at,
        logKey,
        next - 1,
        eventSeq,
        known.touch,
        logKey,
        next,
        logKey,
      );
      if (rewritten === 1) return this.saveRest(db, runId, update, write, { ...known, at });
    }
    const current = db.get(CURRENT_RUN, runId);
    if (current === undefined) throw missingRun(db, runId);
    const actual = Number(current.version);
    if (actual !== version) throw new StaleRunVersionError(runId, version, actual);
    const touch = writeHead(db, Number(current.touch), version + 1, at, write.snapshot);
    return this.saveRest(db, runId, update, write, { row: current, touch, tail: tailOf(current), at });
  }

  /**
   * The rest of a save once its head is written (`head.touch`): its log entries and mark, the
   * trims, the run row when its status or labels change; the saved run, remembered.
   */
  private saveRest(
    db: SqliteConnection,
    runId: string,
    update: RunUpdate,
    write: SaveWrite,
    head: KnownRun & { at: number },
  ): StoredRun {
    const { row, touch, tail } = head;
    const { inserts, after } = logInserts(write.entries, tail, touch, write.members);
    writeLog(db, inserts);
    // After the insert: the rows it deletes lie before the old mark, so not among the new ones,
    // and deleting from the log's last page after it grew seldom leaves that page under a
    // third full (SQLite then merges it with its neighbour: three pages more).
    const trim = logTrim(write.members, tail);
    if (trim !== undefined) db.run(trim.sql, ...trim.args);
    if (update.status !== row.status) db.run(HEAD_SQL.setStatus, update.status, runId);
    const labels = write.labels ?? row.labels;
    if (labels !== row.labels) db.run(HEAD_SQL.setLabels, labels, runId);
    const saved = {
      ...row,
      status: update.status,
      version: update.expectedVersion + 1,
      updated_at: head.at,
      labels,
    };
    this.remember(runId, { row: saved, touch, tail: after });
    return this.rowTracker.saved(runId, update, toStoredRun(saved, undefined));
  }

  async list(filter?: RunListFilter): Promise<StoredRun[]> {
    const { statuses, sessionId, limit } = checkListFilter(filter);
    if (statuses?.length === 0) return this.withDatabase('list', undefined, () => []);
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (statuses !== undefined) {
      where.push('r.status IN (SELECT value FROM json_each(?))');
      args.push(JSON.stringify(statuses));
    }
    if (sessionId !== undefined) {
      where.push('r.session_id = ?');
      args.push(sessionId);
    }
    if (limit !== undefined) args.push(limit);
    const sql = listSql(where, limit !== undefined);
    return this.withDatabase('list', undefined, (db) =>
      db.read(() =>
        this.withRows(
          db,
          db.all(sql, ...args).sort((x, y) => Number(y.touch) - Number(x.touch)),
        ),
      ),
    );
  }

  async appendEvents(runId: string, events: NewRunEvent[]): Promise<void> {
    checkRunId(runId);
    checkEvents(events);
    const entries = logEntries(events, []);
    return this.withDatabase('appendEvents', runId, (db) => {
      if (events.length === 0) return;
      // One transaction: the events numbered after the run's last mark (last + 1 ... last + n),
      // then a mark naming the same head (the run's version and write order stay).
      return db.write(() => {
        const current = db.get(CURRENT_RUN, runId);
        if (current === undefined) throw missingRun(db, runId);
        const touch = Number(current.touch);
        const { inserts, after } = logInserts(entries, tailOf(current), touch);
        writeLog(db, inserts);
        this.remember(runId, { row: current, touch, tail: after });
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
        const found = db.get(SQL.runKey, runId);
        if (found === undefined) return 0;
        db.run(HEAD_SQL.deleteHeadOf, runId);
        db.run(LOG_SQL.deleteOfRun, found.log_key, found.log_key);
        return db.run(HEAD_SQL.deleteRun, runId);
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
          if (db.get(SQL.claim, owner, runId, owner, at) !== undefined) return this.advance(db, runId, at);
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
      this.rowTracker.forget(runId);
      this.known.delete(runId);
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

  /** Keeps what this store wrote of a run (unfinished runs only, at most 10,000: oldest first out). */
  private remember(runId: string, run: KnownRun): void {
    this.known.delete(runId);
    if (FINISHED_STATUSES.includes(run.row.status as RunStatus)) return;
    this.known.set(runId, run);
    if (this.known.size > 10_000) this.known.delete(this.known.keys().next().value!);
  }

  /**
   * A claimed run's version advanced (a fence: saves computed from earlier versions become stale):
   * its head again at the heads' right edge, one version on, and a mark naming it; the run back.
   */
  private advance(db: SqliteConnection, runId: string, at: number): StoredRun {
    const current = db.get(CURRENT_RUN, runId);
    if (current === undefined) throw missingRun(db, runId);
    const touch = writeHead(db, Number(current.touch), Number(current.version) + 1, at, null);
    const { inserts, after } = logInserts([], tailOf(current), touch);
    writeLog(db, inserts);
    const claimed = db.get(SQL.loadRun, runId)!;
    this.remember(runId, { row: claimed, touch, tail: after });
    return this.withRows(db, [claimed])[0]!;
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
      toStoredRun(row, joinSnapshot(heads[index], byRun.get(String(row.run_id)))),
    );
  }
}

/**
 * The run's head (now at `touch`) at `version`, its snapshot head replaced (`null`: kept): in
 * place when it is the newest head, else moved to the right edge (sqlite-heads.ts). Its `touch`.
 */
function writeHead(
  db: SqliteConnection,
  touch: number,
  version: number,
  at: number,
  snapshot: string | null,
): number {
  if (db.run(HEAD_SQL.rewriteNewestHead, version, at, snapshot, touch) === 1) return touch;
  const moved = Number(db.get(HEAD_SQL.moveHead, version, at, snapshot, touch)!.touch);
  db.run(HEAD_SQL.deleteHead, touch);
  return moved;
}

/** Runs a write's log inserts, in order. */
function writeLog(db: SqliteConnection, inserts: readonly { sql: string; args: unknown[] }[]): void {
  for (const insert of inserts) db.run(insert.sql, ...insert.args);
}

/** A new head for the run at the heads' right edge; its `touch` (write order). */
function insertHead(
  db: SqliteConnection,
  runId: string,
  version: number,
  at: number,
  snapshot: string,
): number {
  return Number(db.get(HEAD_SQL.insertHead, runId, version, at, snapshot)!.touch);
}

/** Where a write to the run read as `current` ({@link CURRENT_RUN}) appends in its log range. */
function tailOf(current: Row): LogTail {
  return {
    logKey: Number(current.log_key),
    next: Number(current.mark) + 1,
    eventSeq: Number(current.event_seq),
    live: liveRowsOf(current.live, Number(current.mark)),
  };
}

/**
 * Why a run read with its head was not found: none by that id ({@link RunNotFoundError}, returned),
 * or a run row without its mark or head (thrown: a damaged database, never taken for no run).
 */
function missingRun(db: SqliteConnection, runId: string): RunNotFoundError {
  if (db.get(SQL.runKey, runId) !== undefined) {
    throw new Error(
      `Stored run is damaged: run "${runId}" has no head (its log's last entry or its head row is missing)`,
    );
  }
  return new RunNotFoundError(runId);
}

/**
 * A run as this store last wrote it: its columns as `toStoredRun` reads them (`version` and
 * `updated_at` included), its head's `touch` and where its log goes on.
 */
interface KnownRun {
  row: Row;
  touch: number;
  tail: LogTail;
}

/** What a save writes, computed before its transaction. */
interface SaveWrite {
  /** The snapshot's head (snapshot-rows.ts) as JSON text. */
  snapshot: string;
  /** The labels as JSON text, `null` to keep the stored ones. */
  labels: string | null;
  eventCount: number;
  /** The members' new rows, and where a rewritten member's stored rows are deleted from (`trimFrom`). */
  members: MemberRows[];
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
