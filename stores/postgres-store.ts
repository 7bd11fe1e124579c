/**
 * The PostgreSQL RunStore: for runs shared by several processes or machines (docs/durability.md), through
 * `pg` (an optional peer dependency, loaded on first use).
 *
 * - Everything lives in one schema (default `toolwarden`): `runs`, `run_events`,
 *   `schema_migrations`. The store creates and migrates it: the migrations are an ordered list,
 *   applied in one transaction that first takes a transaction-scoped advisory lock on the
 *   schema name, so processes starting at once wait for each other instead of racing.
 * - Snapshots, labels and events are `jsonb` (see `jsonb-value.ts` for the two characters jsonb
 *   refuses and how they are kept anyway).
 * - Optimistic concurrency in one statement: `UPDATE ... WHERE run_id = $1 AND version = $2`.
 *   Under READ COMMITTED a concurrent writer waits for the row lock and then re-checks the
 *   version, so of two saves from version n exactly one matches.
 * - `appendEvents` is one statement: it advances the run's event counter (locking the run row)
 *   and inserts the events at the reserved numbers. `create`/`save` with `events` are one
 *   statement too (data-modifying CTEs), so the events land exactly when the run row does.
 * - Leases (migration 2): `run_owners` holds each owner's `lease_until`; a run's `owner` column
 *   names who holds it. `claim` is one conditional `UPDATE ... RETURNING`; two claims at once
 *   serialize on the row lock and the second re-checks the condition against the first's owner.
 * - `list` filters on status and session with indexes that also give the order
 *   (`updated_at DESC, touch_seq DESC`; `touch_seq` is a sequence value taken on each write).
 * - Times (`created_at`, `updated_at`, `at`) are epoch milliseconds as `double precision`.
 *
 * @module
 */

import type { Pool, PoolConfig } from 'pg';
import { refusedClaim } from './claim-refusal.ts';
import { toJsonbText } from './jsonb-value.ts';
import { plainStore } from './plain-store.ts';
import { describeTarget, type PostgresStoreOptions } from './postgres-options.ts';
import {
  eventsParam,
  FINISHED,
  memberRowsColumn,
  parseJsonb,
  RUN_COLUMNS,
  type RunRow,
  rowParams,
  runFromRow,
  toStoredRun,
} from './postgres-rows.ts';
import { migrate } from './postgres-schema.ts';
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
import { RowTracker, withSnapshotCopy } from './snapshot-rows.ts';
import { StoreConnection } from './store-connection.ts';

export type { PgPool, PostgresStoreOptions } from './postgres-options.ts';
export { POSTGRES_SCHEMA_VERSION } from './postgres-schema.ts';

/** Opens (lazily, on first call) a {@link RunStore} on a PostgreSQL database. */
export function postgresStore(options: PostgresStoreOptions): RunStore {
  return plainStore(new PostgresRunStore(options));
}

/** The PostgreSQL store: each operation a method, on one lazily opened and migrated `pg` Pool. */
class PostgresRunStore implements RunStore {
  private readonly schemaName: string;
  /** The schema name quoted, as the statements use it. */
  private readonly schema: string;
  private readonly now: () => number;
  private readonly connection: StoreConnection<Pool>;
  private readonly rowTracker = new RowTracker();
  /** {@link memberRowsColumn} for this schema. */
  private readonly memberRows: string;

  constructor(private readonly options: PostgresStoreOptions) {
    this.schemaName = options.schema ?? 'toolwarden';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(this.schemaName)) {
      throw new TypeError(
        `postgresStore: schema must be a plain identifier (letters, digits, _), got "${this.schemaName}"`,
      );
    }
    if ((options.connectionString === undefined) === (options.pool === undefined)) {
      throw new TypeError('postgresStore: give exactly one of connectionString or pool');
    }
    this.schema = `"${this.schemaName}"`;
    this.now = options.now ?? Date.now;
    this.memberRows = memberRowsColumn(this.schema);
    const ownsPool = options.pool === undefined;
    this.connection = new StoreConnection(
      `postgres run store (${describeTarget(options)}, schema "${this.schemaName}")`,
      () => this.open(),
      (db) => (ownsPool ? db.end() : undefined),
    );
  }

  async create(run: NewRun): Promise<StoredRun> {
    checkNewRun(run);
    const split = this.rowTracker.split(run.runId, run.snapshot, undefined);
    const snapshot = toJsonbText(split.head);
    const rows = rowParams(split.rows);
    const labels = run.labels === undefined ? null : toJsonbText(run.labels);
    const events = run.events ?? [];
    const schema = this.schema;
    return this.withDatabase('create', run.runId, async (db) => {
      const at = this.now();
      const result = await db.query(
        `WITH created AS (
           INSERT INTO ${schema}.runs (run_id, session_id, agent_id, status, version, snapshot, labels,
             created_at, updated_at, event_seq, owner)
           VALUES ($1, $2, $3, $4, 1, $5::jsonb, $6::jsonb, $7, $7, $8, $9)
           ON CONFLICT (run_id) DO NOTHING
           RETURNING run_id
         ), logged AS (
           INSERT INTO ${schema}.run_events (run_id, seq, event, at)
           SELECT created.run_id, e.ord::integer, e.item -> 0, (e.item ->> 1)::double precision
           FROM created, jsonb_array_elements($10::jsonb) WITH ORDINALITY AS e(item, ord)
         ), rows AS (
           INSERT INTO ${schema}.run_rows (run_id, member, idx, value)
           SELECT created.run_id, r.item ->> 0, (r.item ->> 1)::integer, r.item -> 2
           FROM created, jsonb_array_elements($11::jsonb) AS r(item)
         )
         SELECT run_id FROM created`,
        [
          run.runId,
          run.sessionId ?? null,
          run.agentId,
          run.status,
          snapshot,
          labels,
          at,
          events.length,
          run.owner ?? null,
          eventsParam(events),
          rows.rows,
        ],
      );
      if (result.rowCount === 0) throw new RunExistsError(run.runId);
      this.rowTracker.written(run.runId, run.snapshot, 1, FINISHED_STATUSES.includes(run.status));
      // The snapshot copied when first read, as a save's (a large batch's first write is a create).
      return withSnapshotCopy(createdRun(run, at, undefined), run.snapshot);
    });
  }

  async load(runId: string): Promise<StoredRun | undefined> {
    checkRunId(runId);
    return this.withDatabase('load', runId, async (db) => {
      const result = await db.query<RunRow>(
        `SELECT ${RUN_COLUMNS}, snapshot::text AS snapshot, ${this.memberRows} FROM ${this.schema}.runs r WHERE run_id = $1`,
        [runId],
      );
      const row = result.rows[0];
      return row === undefined ? undefined : runFromRow(row);
    });
  }

  async save(runId: string, update: RunUpdate): Promise<StoredRun> {
    checkRunId(runId);
    checkRunUpdate(update);
    const split = this.rowTracker.split(runId, update.snapshot, update.expectedVersion);
    const snapshot = toJsonbText(split.head);
    const rows = rowParams(split.rows);
    const labels = update.labels === undefined ? null : toJsonbText(update.labels);
    const events = update.events ?? [];
    const schema = this.schema;
    return this.withDatabase('save', runId, async (db) => {
      const result = await db.query<RunRow>(
        `WITH saved AS (
           UPDATE ${schema}.runs
           SET status = $3, snapshot = $4::jsonb, labels = coalesce($5::jsonb, labels),
               version = version + 1, updated_at = $6, touch_seq = nextval('${schema}.run_touch_seq'),
               event_seq = event_seq + $7
           WHERE run_id = $1 AND version = $2
           RETURNING ${RUN_COLUMNS}, event_seq
         ), logged AS (
           INSERT INTO ${schema}.run_events (run_id, seq, event, at)
           SELECT saved.run_id, saved.event_seq - $7 + e.ord::integer, e.item -> 0, (e.item ->> 1)::double precision
           FROM saved, jsonb_array_elements($8::jsonb) WITH ORDINALITY AS e(item, ord)
         ), trimmed AS (
           -- A rewritten member's rows past the ones upserted below (rowParams).
           DELETE FROM ${schema}.run_rows t
           USING saved, unnest($10::text[], $11::integer[]) AS m(member, trim_from)
           WHERE t.run_id = saved.run_id AND t.member = m.member AND t.idx >= m.trim_from
         ), appended AS (
           INSERT INTO ${schema}.run_rows (run_id, member, idx, value)
           SELECT saved.run_id, r.item ->> 0, (r.item ->> 1)::integer, r.item -> 2
           FROM saved, jsonb_array_elements($9::jsonb) AS r(item)
           ON CONFLICT (run_id, member, idx) DO UPDATE SET value = excluded.value
         )
         SELECT ${RUN_COLUMNS} FROM saved`,
        [
          runId,
          update.expectedVersion,
          update.status,
          snapshot,
          labels,
          this.now(),
          events.length,
          eventsParam(events),
          rows.rows,
          rows.trimmed,
          rows.trimFrom,
        ],
      );
      const row = result.rows[0];
      if (row !== undefined) return this.rowTracker.saved(runId, update, toStoredRun(row, undefined));
      return this.refusedSave(db, runId, update.expectedVersion);
    });
  }

  /** Why a save from `expectedVersion` matched no row: the run is missing, or at another version. */
  private async refusedSave(db: Pool, runId: string, expectedVersion: number): Promise<never> {
    const current = await db.query<{ version: number }>(
      `SELECT version FROM ${this.schema}.runs WHERE run_id = $1`,
      [runId],
    );
    const actual = current.rows[0];
    if (actual === undefined) throw new RunNotFoundError(runId);
    throw new StaleRunVersionError(runId, expectedVersion, Number(actual.version));
  }

  async list(filter?: RunListFilter): Promise<StoredRun[]> {
    const { statuses, sessionId, limit } = checkListFilter(filter);
    if (statuses?.length === 0) return this.withDatabase('list', undefined, async () => []);
    const where: string[] = [];
    const values: unknown[] = [];
    if (statuses !== undefined) {
      values.push(statuses);
      where.push(`status = ANY($${values.length}::text[])`);
    }
    if (sessionId !== undefined) {
      values.push(sessionId);
      where.push(`session_id = $${values.length}`);
    }
    if (limit !== undefined) values.push(limit);
    return this.withDatabase('list', undefined, async (db) => {
      const result = await db.query<RunRow>(
        `SELECT ${RUN_COLUMNS}, snapshot::text AS snapshot, ${this.memberRows} FROM ${this.schema}.runs r
         ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
         ORDER BY updated_at DESC, touch_seq DESC
         ${limit === undefined ? '' : `LIMIT $${values.length}`}`,
        values,
      );
      return result.rows.map(runFromRow);
    });
  }

  async appendEvents(runId: string, events: NewRunEvent[]): Promise<void> {
    checkRunId(runId);
    checkEvents(events);
    const texts = events.map(({ event }) => toJsonbText(event));
    const times = events.map(({ at }) => at);
    const schema = this.schema;
    return this.withDatabase('appendEvents', runId, async (db) => {
      if (events.length === 0) return;
      const result = await db.query(
        `WITH reserved AS (
           UPDATE ${schema}.runs SET event_seq = event_seq + $2 WHERE run_id = $1 RETURNING event_seq
         )
         INSERT INTO ${schema}.run_events (run_id, seq, event, at)
         SELECT $1, reserved.event_seq - $2 + e.ord::integer, e.event, e.at
         FROM reserved, unnest($3::jsonb[], $4::double precision[]) WITH ORDINALITY AS e(event, at, ord)`,
        [runId, events.length, texts, times],
      );
      if (result.rowCount === 0) throw new RunNotFoundError(runId);
    });
  }

  async readEvents(runId: string, options?: ReadEventsOptions): Promise<RunEventRecord[]> {
    checkRunId(runId);
    const { afterSeq, limit } = checkReadEventsOptions(options);
    return this.withDatabase('readEvents', runId, async (db) => {
      const result = await db.query<{ seq: number; event: string; at: number | string }>(
        `SELECT seq, event::text AS event, at FROM ${this.schema}.run_events
         WHERE run_id = $1 AND seq > $2 ORDER BY seq ${limit === undefined ? '' : 'LIMIT $3'}`,
        limit === undefined ? [runId, afterSeq] : [runId, afterSeq, limit],
      );
      return result.rows.map((row) => ({
        runId,
        seq: Number(row.seq),
        event: parseJsonb(row.event),
        at: Number(row.at),
      }));
    });
  }

  async delete(runId: string): Promise<boolean> {
    checkRunId(runId);
    return this.withDatabase('delete', runId, async (db) => {
      // run_events rows go with it (ON DELETE CASCADE), in the same statement.
      const result = await db.query(`DELETE FROM ${this.schema}.runs WHERE run_id = $1`, [runId]);
      this.rowTracker.forget(runId);
      return (result.rowCount ?? 0) > 0;
    });
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  async heartbeat(owner: string, ttlMs: number): Promise<void> {
    checkOwner(owner);
    checkTtl(ttlMs);
    return this.withDatabase('heartbeat', undefined, async (db) => {
      await db.query(
        `INSERT INTO ${this.schema}.run_owners (owner, lease_until) VALUES ($1, $2)
         ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until`,
        [owner, this.now() + ttlMs],
      );
    });
  }

  async claim(runId: string, owner: string): Promise<StoredRun> {
    checkRunId(runId);
    checkOwner(owner);
    return this.withDatabase('claim', runId, async (db) => {
      // A refusal read a moment after the UPDATE may find the lease just expired or the run
      // just finished: then the claim is tried again.
      for (let attempt = 0; ; attempt++) {
        const claimed = await this.claimRow(db, runId, owner, this.now());
        if (claimed !== undefined) return claimed;
        const schema = this.schema;
        const current = await db.query<RunRow & { lease_until: number | string | null }>(
          `SELECT ${RUN_COLUMNS}, snapshot::text AS snapshot, ${this.memberRows},
             (SELECT lease_until FROM ${schema}.run_owners o WHERE o.owner = r.owner) AS lease_until
           FROM ${schema}.runs r WHERE run_id = $1`,
          [runId],
        );
        const found = current.rows[0];
        const run = found === undefined ? undefined : runFromRow(found);
        const settled = refusedClaim(runId, run, Number(found?.lease_until), attempt, this.now());
        if (settled !== undefined) return settled;
      }
    });
  }

  /**
   * The claim itself, one conditional `UPDATE ... RETURNING`: the claimed run, or `undefined`
   * when the run is finished, missing, or held by a live lease of another owner at `at`.
   */
  private async claimRow(db: Pool, runId: string, owner: string, at: number): Promise<StoredRun | undefined> {
    const schema = this.schema;
    const claimed = await db.query<RunRow>(
      `UPDATE ${schema}.runs r
       SET owner = $2, version = version + 1, updated_at = $3,
           touch_seq = nextval('${schema}.run_touch_seq')
       WHERE run_id = $1 AND status NOT IN ${FINISHED}
         AND (owner IS NULL OR owner = $2 OR NOT EXISTS (
           SELECT 1 FROM ${schema}.run_owners o WHERE o.owner = r.owner AND o.lease_until > $3))
       RETURNING ${RUN_COLUMNS}, snapshot::text AS snapshot, ${this.memberRows}`,
      [runId, owner, at],
    );
    const row = claimed.rows[0];
    return row === undefined ? undefined : runFromRow(row);
  }

  async release(runId: string, owner: string): Promise<boolean> {
    checkRunId(runId);
    checkOwner(owner);
    return this.withDatabase('release', runId, async (db) => {
      const result = await db.query(
        `UPDATE ${this.schema}.runs SET owner = NULL WHERE run_id = $1 AND owner = $2`,
        [runId, owner],
      );
      // Its next save here follows a claim (a new version): the tracked rows only hold memory.
      this.rowTracker.forget(runId);
      return (result.rowCount ?? 0) > 0;
    });
  }

  /**
   * Runs `work` on the migrated database; driver failures become RunStoreUnavailableError. A
   * pooled connection the server ended a moment ago (a restart, a failover,
   * pg_terminate_backend) fails its next query before the pool noticed; a read is simply tried
   * again on a fresh connection. A write is not: it may have been applied.
   */
  private withDatabase<T>(
    operation: string,
    runId: string | undefined,
    work: (db: Pool) => Promise<T>,
  ): Promise<T> {
    return this.connection.use(operation, runId, async (db) => {
      try {
        return await work(db);
      } catch (error) {
        if (!READS.has(operation) || !isDroppedConnection(error)) throw error;
        return await work(db);
      }
    });
  }

  /** The caller's pool, or a new one, with the schema migrated. */
  private async open(): Promise<Pool> {
    // The caller's pool is a pg Pool; PgPool only keeps pg's types out of the package's declarations.
    let db = this.options.pool as Pool | undefined;
    if (db === undefined) {
      const { Pool } = await import('pg');
      db = new Pool({
        connectionTimeoutMillis: 10_000,
        max: 10,
        ...(this.options.poolConfig as PoolConfig | undefined),
        connectionString: this.options.connectionString,
      });
      // An idle client whose server went away is dropped from the pool and reported here; the
      // next query opens a fresh connection, so there is nothing to do but not crash.
      db.on('error', () => {});
    }
    try {
      await migrate(db, this.schemaName, this.schema);
      return db;
    } catch (error) {
      if (this.options.pool === undefined) await db.end().catch(() => {});
      throw error;
    }
  }
}

/** Operations that only read: safe to try again after a dropped connection. */
const READS = new Set(['load', 'list', 'readEvents']);

/** The server ended the connection (57P01 admin shutdown, 57P02/57P03, class 08) or the socket died. */
function isDroppedConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (
    typeof code === 'string' &&
    (/^08/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === 'ECONNRESET')
  )
    return true;
  return (
    error instanceof Error && /Connection terminated|connection terminated unexpectedly/i.test(error.message)
  );
}
