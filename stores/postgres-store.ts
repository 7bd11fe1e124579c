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
import { fromJsonb, toJsonbText } from './jsonb-value.ts';
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

/**
 * A `pg` Pool as the store's options name it (`new Pool()` from `pg` is one). Declared here, not
 * imported from `pg`, so toolwarden's types need neither `pg` nor `@types/pg`: an app without
 * them type-checks with `skipLibCheck: false` (issue 28 item 7).
 */
export interface PgPool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads (text, config, callback) differ in every parameter.
  query(...args: any[]): Promise<unknown>;
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Where it connects (read for error messages). */
  readonly options: {
    connectionString?: string | undefined;
    host?: string | undefined;
    port?: number | undefined;
    user?: string | undefined;
    database?: string | undefined;
  };
}

interface PostgresStoreCommonOptions {
  /** The schema holding the store's tables; created when absent. Default `toolwarden`. */
  schema?: string;
  /** Clock for `createdAt`/`updatedAt` and leases, epoch ms. Default `Date.now`. Processes sharing a
   * database must agree on it to well within their lease time. */
  now?: () => number;
}

/** Either a connection string (the store owns its pool) or a pool the caller owns. */
export type PostgresStoreOptions = PostgresStoreCommonOptions &
  (
    | {
        /** e.g. `postgres://user:password@host:5432/db`. */
        connectionString: string;
        /**
         * Extra pool settings: `pg`'s `PoolConfig` (typed `object` so toolwarden's types need no
         * `pg` types). Default `connectionTimeoutMillis` 10000, `max` 10.
         */
        poolConfig?: object;
        pool?: never;
      }
    | {
        /**
         * A `pg` Pool; `close()` leaves it open. Handle its `'error'` event yourself: an idle
         * client dropped by the server (restart, failover) emits it, and unhandled it crashes
         * the process.
         */
        pool: PgPool;
        connectionString?: never;
        poolConfig?: never;
      }
  );

interface Migration {
  version: number;
  description: string;
  /** Statements with `{schema}` standing for the quoted schema name. */
  statements: string[];
}

/** Applied in order; never edit a released entry, append a new one. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs and run events',
    statements: [
      'CREATE SEQUENCE {schema}.run_touch_seq',
      `CREATE TABLE {schema}.runs (
        run_id text PRIMARY KEY,
        session_id text,
        agent_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('running', 'awaiting', 'completed', 'failed', 'canceled')),
        version integer NOT NULL CHECK (version >= 1),
        snapshot jsonb NOT NULL,
        labels jsonb,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        touch_seq bigint NOT NULL DEFAULT nextval('{schema}.run_touch_seq'),
        event_seq integer NOT NULL DEFAULT 0
      )`,
      'CREATE INDEX runs_by_updated ON {schema}.runs (updated_at DESC, touch_seq DESC)',
      'CREATE INDEX runs_by_status ON {schema}.runs (status, updated_at DESC, touch_seq DESC)',
      `CREATE INDEX runs_by_session ON {schema}.runs (session_id, updated_at DESC, touch_seq DESC)
        WHERE session_id IS NOT NULL`,
      `CREATE TABLE {schema}.run_events (
        run_id text NOT NULL REFERENCES {schema}.runs (run_id) ON DELETE CASCADE,
        seq integer NOT NULL,
        event jsonb NOT NULL,
        at double precision NOT NULL,
        PRIMARY KEY (run_id, seq)
      )`,
    ],
  },
  {
    version: 2,
    description: 'run owners and leases',
    statements: [
      'ALTER TABLE {schema}.runs ADD COLUMN owner text',
      `CREATE TABLE {schema}.run_owners (
        owner text PRIMARY KEY,
        lease_until double precision NOT NULL
      )`,
    ],
  },
  {
    version: 3,
    description: 'append-only snapshot members as rows (snapshot-rows.ts)',
    statements: [
      `CREATE TABLE {schema}.run_rows (
        run_id text NOT NULL REFERENCES {schema}.runs (run_id) ON DELETE CASCADE,
        member text NOT NULL,
        idx integer NOT NULL,
        value jsonb NOT NULL,
        PRIMARY KEY (run_id, member, idx)
      )`,
    ],
  },
];

/** The schema version this code reads and writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** First key of the two-key advisory lock taken while migrating ("twar"); the second is the schema. */
const MIGRATION_LOCK_CLASS = 0x74776172;

const RUN_COLUMNS = `run_id, session_id, agent_id, status, version, labels::text AS labels,
  created_at, updated_at, owner`;
const FINISHED = `('completed', 'failed', 'canceled')`;

interface RunRow {
  run_id: string;
  session_id: string | null;
  agent_id: string;
  status: string;
  version: number;
  snapshot?: string;
  labels: string | null;
  created_at: number | string;
  updated_at: number | string;
  owner: string | null;
}

/** Opens (lazily, on first call) a {@link RunStore} on a PostgreSQL database. */
export function postgresStore(options: PostgresStoreOptions): RunStore {
  const schemaName = options.schema ?? 'toolwarden';
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schemaName)) {
    throw new TypeError(
      `postgresStore: schema must be a plain identifier (letters, digits, _), got "${schemaName}"`,
    );
  }
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    throw new TypeError('postgresStore: give exactly one of connectionString or pool');
  }
  const schema = `"${schemaName}"`;
  const now = options.now ?? Date.now;
  const ownsPool = options.pool === undefined;
  const storeName = `postgres run store (${describeTarget(options)}, schema "${schemaName}")`;
  let pool: Promise<Pool> | undefined;
  let closed = false;
  const rowTracker = new RowTracker();

  /**
   * A run's member rows (snapshot-rows.ts) as a JSON array of `[member, value]` pairs, for the
   * select list of a statement that reads the run row `r`: head and rows come from one statement,
   * so from one snapshot of the database. Read in two, a save landing between them paired a head
   * with rows of another version ("messages should have 17 rows, the store has 18").
   */
  const MEMBER_ROWS = `(SELECT json_agg(json_build_array(m.member, m.value::text) ORDER BY m.member, m.idx)::text
     FROM ${schema}.run_rows m WHERE m.run_id = r.run_id) AS member_rows`;

  /** A run from its row, read with {@link MEMBER_ROWS}: the snapshot joined with its member rows. */
  function withRows(row: RunRow & { member_rows?: string | null }): StoredRun {
    const head = parseJsonb(row.snapshot!);
    if (!hasMarkers(head) || !row.member_rows) return toStoredRun(row, joinSnapshot(head, undefined));
    const pairs = JSON.parse(row.member_rows) as [string, string][];
    const members = groupRows(
      pairs.map(([member, value]) => ({ runId: row.run_id, member, value: parseJsonb(value) })),
    );
    return toStoredRun(row, joinSnapshot(head, members.get(row.run_id)));
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

  async function open(): Promise<Pool> {
    // The caller's pool is a pg Pool; PgPool only keeps pg's types out of the package's declarations.
    let db = options.pool as Pool | undefined;
    if (db === undefined) {
      const { Pool } = await import('pg');
      db = new Pool({
        connectionTimeoutMillis: 10_000,
        max: 10,
        ...(options.poolConfig as PoolConfig | undefined),
        connectionString: options.connectionString,
      });
      // An idle client whose server went away is dropped from the pool and reported here; the
      // next query opens a fresh connection, so there is nothing to do but not crash.
      db.on('error', () => {});
    }
    try {
      await migrate(db, schemaName, schema);
      return db;
    } catch (error) {
      if (ownsPool) await db.end().catch(() => {});
      throw error;
    }
  }

  /** Runs `work` on the migrated database; driver failures become RunStoreUnavailableError. */
  async function withDatabase<T>(
    operation: string,
    runId: string | undefined,
    work: (db: Pool) => Promise<T>,
  ): Promise<T> {
    if (closed) throw unavailable(operation, runId, new RunStoreClosedError());
    try {
      pool ??= open();
      const db = await pool.catch((error: unknown) => {
        // Let the next call try again: the database may come back.
        pool = undefined;
        throw error;
      });
      try {
        return await work(db);
      } catch (error) {
        // A pooled connection the server ended a moment ago (a restart, a failover,
        // pg_terminate_backend) fails its next query before the pool noticed; a read is simply
        // tried again on a fresh connection. A write is not: it may have been applied.
        if (!READS.has(operation) || !isDroppedConnection(error)) throw error;
        return await work(db);
      }
    } catch (error) {
      if (error instanceof RunStoreError) throw error;
      throw unavailable(operation, runId, closed ? new RunStoreClosedError() : error);
    }
  }

  return {
    async create(run: NewRun): Promise<StoredRun> {
      checkNewRun(run);
      const split = rowTracker.split(run.runId, run.snapshot, undefined);
      const snapshot = toJsonbText(split.head);
      const rows = rowParams(split.rows);
      const labels = run.labels === undefined ? null : toJsonbText(run.labels);
      const events = run.events ?? [];
      return withDatabase('create', run.runId, async (db) => {
        const at = now();
        const result = await db.query(
          `WITH created AS (
             INSERT INTO ${schema}.runs (run_id, session_id, agent_id, status, version, snapshot, labels,
               created_at, updated_at, event_seq, owner)
             VALUES ($1, $2, $3, $4, 1, $5::jsonb, $6::jsonb, $7, $7, $8, $9)
             ON CONFLICT (run_id) DO NOTHING
             RETURNING run_id
           ), logged AS (
             INSERT INTO ${schema}.run_events (run_id, seq, event, at)
             SELECT created.run_id, e.ord::integer, e.event, e.at
             FROM created, unnest($10::jsonb[], $11::double precision[]) WITH ORDINALITY AS e(event, at, ord)
           ), rows AS (
             INSERT INTO ${schema}.run_rows (run_id, member, idx, value)
             SELECT created.run_id, r.member, r.idx, r.value
             FROM created, unnest($12::text[], $13::integer[], $14::jsonb[]) AS r(member, idx, value)
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
            events.map(({ event }) => toJsonbText(event)),
            events.map(({ at: eventAt }) => eventAt),
            rows.members,
            rows.indexes,
            rows.values,
          ],
        );
        if (result.rowCount === 0) throw new RunExistsError(run.runId);
        rowTracker.written(run.runId, run.snapshot, 1, FINISHED_STATUSES.includes(run.status));
        return createdRun(run, at, structuredClone(run.snapshot));
      });
    },

    async load(runId: string): Promise<StoredRun | undefined> {
      checkRunId(runId);
      return withDatabase('load', runId, async (db) => {
        const result = await db.query<RunRow>(
          `SELECT ${RUN_COLUMNS}, snapshot::text AS snapshot, ${MEMBER_ROWS} FROM ${schema}.runs r WHERE run_id = $1`,
          [runId],
        );
        const row = result.rows[0];
        return row === undefined ? undefined : withRows(row);
      });
    },

    async save(runId: string, update: RunUpdate): Promise<StoredRun> {
      checkRunId(runId);
      checkRunUpdate(update);
      const split = rowTracker.split(runId, update.snapshot, update.expectedVersion);
      const snapshot = toJsonbText(split.head);
      const rows = rowParams(split.rows);
      const trims = split.rows.filter((member) => member.trim);
      const labels = update.labels === undefined ? null : toJsonbText(update.labels);
      const events = update.events ?? [];
      return withDatabase('save', runId, async (db) => {
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
             SELECT saved.run_id, saved.event_seq - $7 + e.ord::integer, e.event, e.at
             FROM saved, unnest($8::jsonb[], $9::double precision[]) WITH ORDINALITY AS e(event, at, ord)
           ), trimmed AS (
             -- Rows past each member's new length (a rewritten member); never the ones inserted below.
             DELETE FROM ${schema}.run_rows t
             USING saved, unnest($13::text[], $14::integer[]) AS m(member, total)
             WHERE t.run_id = saved.run_id AND t.member = m.member AND t.idx >= m.total
           ), appended AS (
             INSERT INTO ${schema}.run_rows (run_id, member, idx, value)
             SELECT saved.run_id, r.member, r.idx, r.value
             FROM saved, unnest($10::text[], $11::integer[], $12::jsonb[]) AS r(member, idx, value)
             ON CONFLICT (run_id, member, idx) DO UPDATE SET value = excluded.value
           )
           SELECT ${RUN_COLUMNS} FROM saved`,
          [
            runId,
            update.expectedVersion,
            update.status,
            snapshot,
            labels,
            now(),
            events.length,
            events.map(({ event }) => toJsonbText(event)),
            events.map(({ at }) => at),
            rows.members,
            rows.indexes,
            rows.values,
            trims.map((member) => member.member),
            trims.map((member) => member.from + member.values.length),
          ],
        );
        const row = result.rows[0];
        if (row !== undefined) return rowTracker.saved(runId, update, toStoredRun(row, undefined));
        const current = await db.query<{ version: number }>(
          `SELECT version FROM ${schema}.runs WHERE run_id = $1`,
          [runId],
        );
        const actual = current.rows[0];
        if (actual === undefined) throw new RunNotFoundError(runId);
        throw new StaleRunVersionError(runId, update.expectedVersion, Number(actual.version));
      });
    },

    async list(filter?: RunListFilter): Promise<StoredRun[]> {
      const { statuses, sessionId, limit } = checkListFilter(filter);
      if (statuses?.length === 0) return withDatabase('list', undefined, async () => []);
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
      return withDatabase('list', undefined, async (db) => {
        const result = await db.query<RunRow>(
          `SELECT ${RUN_COLUMNS}, snapshot::text AS snapshot, ${MEMBER_ROWS} FROM ${schema}.runs r
           ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
           ORDER BY updated_at DESC, touch_seq DESC
           ${limit === undefined ? '' : `LIMIT $${values.length}`}`,
          values,
        );
        return result.rows.map(withRows);
      });
    },

    async appendEvents(runId: string, events: NewRunEvent[]): Promise<void> {
      checkRunId(runId);
      checkEvents(events);
      const texts = events.map(({ event }) => toJsonbText(event));
      const times = events.map(({ at }) => at);
      return withDatabase('appendEvents', runId, async (db) => {
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
    },

    async readEvents(runId: string, options?: ReadEventsOptions): Promise<RunEventRecord[]> {
      checkRunId(runId);
      const { afterSeq, limit } = checkReadEventsOptions(options);
      return withDatabase('readEvents', runId, async (db) => {
        const result = await db.query<{ seq: number; event: string; at: number | string }>(
          `SELECT seq, event::text AS event, at FROM ${schema}.run_events
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
    },

    async delete(runId: string): Promise<boolean> {
      checkRunId(runId);
      return withDatabase('delete', runId, async (db) => {
        // run_events rows go with it (ON DELETE CASCADE), in the same statement.
        const result = await db.query(`DELETE FROM ${schema}.runs WHERE run_id = $1`, [runId]);
        rowTracker.forget(runId);
        return (result.rowCount ?? 0) > 0;
      });
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const pending = pool;
      pool = undefined;
      const db = await pending?.catch(() => undefined);
      if (db !== undefined && ownsPool) await db.end();
    },

    async heartbeat(owner: string, ttlMs: number): Promise<void> {
      checkOwner(owner);
      checkTtl(ttlMs);
      return withDatabase('heartbeat', undefined, async (db) => {
        await db.query(
          `INSERT INTO ${schema}.run_owners (owner, lease_until) VALUES ($1, $2)
           ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until`,
          [owner, now() + ttlMs],
        );
      });
    },

    async claim(runId: string, owner: string): Promise<StoredRun> {
      checkRunId(runId);
      checkOwner(owner);
      return withDatabase('claim', runId, async (db) => {
        // A refusal read a moment after the UPDATE may find the lease just expired or the run
        // just finished: then the claim is tried again.
        for (let attempt = 0; ; attempt++) {
          const at = now();
          const claimed = await db.query<RunRow>(
            `UPDATE ${schema}.runs r
             SET owner = $2, version = version + 1, updated_at = $3,
                 touch_seq = nextval('${schema}.run_touch_seq')
             WHERE run_id = $1 AND status NOT IN ${FINISHED}
               AND (owner IS NULL OR owner = $2 OR NOT EXISTS (
                 SELECT 1 FROM ${schema}.run_owners o WHERE o.owner = r.owner AND o.lease_until > $3))
             RETURNING ${RUN_COLUMNS}, snapshot::text AS snapshot, ${MEMBER_ROWS}`,
            [runId, owner, at],
          );
          const row = claimed.rows[0];
          if (row !== undefined) return withRows(row);
          const current = await db.query<RunRow & { lease_until: number | string | null }>(
            `SELECT ${RUN_COLUMNS}, snapshot::text AS snapshot, ${MEMBER_ROWS},
               (SELECT lease_until FROM ${schema}.run_owners o WHERE o.owner = r.owner) AS lease_until
             FROM ${schema}.runs r WHERE run_id = $1`,
            [runId],
          );
          const found = current.rows[0];
          const run = found === undefined ? undefined : withRows(found);
          const settled = refusedClaim(runId, run, Number(found?.lease_until), attempt, now());
          if (settled !== undefined) return settled;
        }
      });
    },

    async release(runId: string, owner: string): Promise<boolean> {
      checkRunId(runId);
      checkOwner(owner);
      return withDatabase('release', runId, async (db) => {
        const result = await db.query(
          `UPDATE ${schema}.runs SET owner = NULL WHERE run_id = $1 AND owner = $2`,
          [runId, owner],
        );
        // Its next save here follows a claim (a new version): the tracked rows only hold memory.
        rowTracker.forget(runId);
        return (result.rowCount ?? 0) > 0;
      });
    },
  };
}

/**
 * Creates the schema or brings it up to {@link POSTGRES_SCHEMA_VERSION}: one transaction, under
 * an advisory lock on (MIGRATION_LOCK_CLASS, hashtext(schema)) so concurrent starters serialize.
 */
async function migrate(pool: Pool, schemaName: string, schema: string): Promise<void> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK_CLASS, schemaName]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
      version integer PRIMARY KEY,
      description text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const result = await client.query<{ version: number }>(
      `SELECT coalesce(max(version), 0)::integer AS version FROM ${schema}.schema_migrations`,
    );
    const current = Number(result.rows[0]?.version ?? 0);
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new Error(
        `schema "${schemaName}" has run store schema version ${current}, newer than this toolwarden's ` +
          `${POSTGRES_SCHEMA_VERSION}; upgrade toolwarden`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) {
        await client.query(statement.replaceAll('{schema}', schema));
      }
      await client.query(`INSERT INTO ${schema}.schema_migrations (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
    }
    await client.query('COMMIT');
  } catch (error) {
    broken = error;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    // A client whose transaction failed is discarded rather than returned half-broken.
    client.release(broken instanceof Error ? broken : undefined);
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

/** Member rows as three parallel arrays for `unnest`: member, index, jsonb text. */
function rowParams(rows: readonly MemberRows[]): { members: string[]; indexes: number[]; values: string[] } {
  const params = { members: [] as string[], indexes: [] as number[], values: [] as string[] };
  for (const { member, from, values } of rows) {
    values.forEach((value, offset) => {
      params.members.push(member);
      params.indexes.push(from + offset);
      params.values.push(toJsonbText(value));
    });
  }
  return params;
}

function parseJsonb(text: string): unknown {
  return fromJsonb(JSON.parse(text));
}

function toStoredRun(row: RunRow, snapshot: unknown): StoredRun {
  return {
    runId: row.run_id,
    ...(row.session_id === null ? {} : { sessionId: row.session_id }),
    agentId: row.agent_id,
    status: row.status as RunStatus,
    version: Number(row.version),
    snapshot,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ...(row.labels === null ? {} : { labels: parseJsonb(row.labels) as Record<string, string> }),
    ...(row.owner === null || row.owner === undefined ? {} : { owner: row.owner }),
  };
}

/** Where the store connects, for error messages, with any password replaced by `***`. */
function describeTarget(options: PostgresStoreOptions): string {
  const connectionString = options.connectionString ?? options.pool?.options.connectionString;
  if (connectionString !== undefined) return redactPassword(connectionString);
  const config = options.pool?.options;
  if (config?.host !== undefined) {
    return `postgres://${config.user ?? ''}${config.user === undefined ? '' : '@'}${config.host}:${config.port ?? 5432}/${config.database ?? ''}`;
  }
  return "the caller's pool";
}

function redactPassword(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.toString();
  } catch {
    // key=value form: host=... password=...
    return connectionString.replace(/password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)/gi, 'password=***');
  }
}
