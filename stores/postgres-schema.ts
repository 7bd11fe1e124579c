/**
 * The PostgreSQL run store's schema (`postgres-store.ts`): the migrations, in order, and how a
 * store brings its schema up to {@link POSTGRES_SCHEMA_VERSION} while other processes start at
 * the same moment.
 *
 * @module
 */

import type { Pool } from 'pg';
import { latestVersion, type Migration, newerSchemaError } from './migrations.ts';
import type { PgPool } from './postgres-options.ts';
import { inTransaction } from './postgres-transaction.ts';

/**
 * Applied in order; never edit a released entry, append a new one. `{schema}` in a statement
 * stands for the quoted schema name.
 */
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
  {
    // Issue 35 item 2: costBudget's shared budgets (postgres-cost-ledger.ts), micro-units.
    version: 4,
    description: 'cost ledger: shared money budgets',
    statements: [
      `CREATE TABLE {schema}.cost_accounts (
        key text PRIMARY KEY,
        spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0),
        reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0)
      )`,
      `CREATE TABLE {schema}.cost_holds (
        key text NOT NULL REFERENCES {schema}.cost_accounts (key) ON DELETE CASCADE,
        id text NOT NULL,
        amount bigint NOT NULL CHECK (amount >= 0),
        expires_at double precision NOT NULL,
        PRIMARY KEY (key, id)
      )`,
    ],
  },
  {
    // Issue 36 item 5: a run's batch (its calls, its results, the results handed on) kept in
    // run_rows (members pending, results, lastResults, newResults; snapshot-rows.ts). The table is
    // as it was; the version is what makes an older release, which would load those runs
    // without their batch, refuse the schema.
    version: 5,
    description: "a run's batch kept in run_rows, not in its snapshot row",
    statements: [],
  },
];

/** The schema version this code reads and writes. */
export const POSTGRES_SCHEMA_VERSION = latestVersion(MIGRATIONS);

/** First key of the two-key advisory lock taken while migrating ("twar"); the second is the schema. */
const MIGRATION_LOCK_CLASS = 0x74776172;

/**
 * Creates the schema or brings it up to {@link POSTGRES_SCHEMA_VERSION}: one transaction, under
 * an advisory lock on (MIGRATION_LOCK_CLASS, hashtext(schema)) so concurrent starters serialize.
 */
export async function migrate(pool: PgPool, schemaName: string, schema: string): Promise<void> {
  // `PgPool` in the signature, pg's `Pool` only inside: the declarations of the public entry
  // (POSTGRES_SCHEMA_VERSION comes from here) must not need `@types/pg` (issue 28 item 7).
  await inTransaction(pool as unknown as Pool, async (client) => {
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
      throw newerSchemaError(`schema "${schemaName}"`, current, POSTGRES_SCHEMA_VERSION);
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
  });
}
