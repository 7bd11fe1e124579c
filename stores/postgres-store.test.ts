import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runStoreContract } from '../test/store-contract/run-store-contract.ts';
import {
  dropSchema,
  probePostgresTestDatabase,
  uniqueSchemaName,
} from '../test/support/postgres-test-database.ts';
import { POSTGRES_SCHEMA_VERSION, postgresStore } from './postgres-store.ts';
import type { RunStore } from './run-store.ts';
import { RunStoreUnavailableError } from './run-store-errors.ts';

const SUITE = 'postgresStore (PostgreSQL)';
const database = await probePostgresTestDatabase(SUITE);
const skip = !database.reachable && !database.required ? 'PostgreSQL not reachable' : undefined;
if (skip !== undefined) console.warn(database.skipMessage);

/** With CI=true an unreachable database fails every test with this, instead of skipping. */
function requireDatabase(): void {
  if (!database.reachable) {
    throw new Error(database.failMessage);
  }
}

/** A fresh schema, and every store opened on it, cleaned up by `dispose`. */
function schemaFixture() {
  const schema = uniqueSchemaName();
  const opened: RunStore[] = [];
  return {
    schema,
    open(
      options: { now?: () => number; connectionString?: string; poolConfig?: pg.PoolConfig } = {},
    ): RunStore {
      const store = postgresStore({ connectionString: database.url, schema, ...options });
      opened.push(store);
      return store;
    },
    async dispose(): Promise<void> {
      await Promise.all(opened.map((store) => store.close()));
      await dropSchema(database.url, schema);
    },
  };
}

runStoreContract(
  'postgresStore',
  async ({ now }) => {
    requireDatabase();
    const fixture = schemaFixture();
    return {
      store: fixture.open({ now }),
      openSecond: async () => fixture.open({ now }),
      // Port 1: nothing listens there, the connection is refused at once.
      openDead: async () =>
        fixture.open({ now, connectionString: 'postgres://postgres:s3cret@127.0.0.1:1/toolwarden_test' }),
      deadMessage: [/postgres run store \(postgres:\/\/postgres(:\*\*\*)?@127\.0\.0\.1/, /ECONNREFUSED/],
      dispose: () => fixture.dispose(),
    };
  },
  skip === undefined ? { propertyRuns: 25 } : { skipAll: skip },
);

describe.skipIf(skip !== undefined)('postgresStore', () => {
  const admin = database.reachable ? new pg.Pool({ connectionString: database.url, max: 2 }) : undefined;
  afterAll(async () => {
    await admin?.end();
  });
  const run = { runId: 'run-1', agentId: 'support', status: 'running' as const, snapshot: { step: 1 } };

  it('migrates once when several processes start on a new schema at the same moment', async () => {
    requireDatabase();
    const fixture = schemaFixture();
    try {
      const starters = Array.from({ length: 5 }, () => fixture.open());
      await Promise.all(starters.map((store, i) => store.create({ ...run, runId: `run-${i}` })));
      const migrations = await admin!.query(
        `SELECT version FROM "${fixture.schema}".schema_migrations ORDER BY version`,
      );
      expect(migrations.rows.map((row) => row.version)).toEqual(allVersions(POSTGRES_SCHEMA_VERSION));
      expect(await starters[0]!.list()).toHaveLength(5);
    } finally {
      await fixture.dispose();
    }
  });

  it('stores snapshots, labels and events as jsonb, with indexes for listing by status and session', async () => {
    requireDatabase();
    const fixture = schemaFixture();
    try {
      const store = fixture.open();
      await store.create({ ...run, labels: { tenant: 'acme' } });
      const columns = await admin!.query(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = $1 AND data_type = 'jsonb' ORDER BY table_name, column_name`,
        [fixture.schema],
      );
      expect(columns.rows.map((row) => `${row.table_name}.${row.column_name}`)).toEqual([
        'run_events.event',
        'run_rows.value',
        'runs.labels',
        'runs.snapshot',
      ]);
      const indexes = await admin!.query(
        'SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY 1',
        [fixture.schema],
      );
      expect(indexes.rows.map((row) => row.indexname)).toEqual(
        expect.arrayContaining(['runs_by_session', 'runs_by_status', 'runs_by_updated']),
      );
      // The snapshot is real jsonb, queryable in SQL.
      const step = await admin!.query(`SELECT snapshot->>'step' AS step FROM "${fixture.schema}".runs`);
      expect(step.rows).toEqual([{ step: '1' }]);
    } finally {
      await fixture.dispose();
    }
  });

  it('writes what a step added, not the transcript: the snapshot row stays the same size as the run grows (issue 17)', async () => {
    requireDatabase();
    const fixture = schemaFixture();
    try {
      const store = fixture.open();
      const entry = (n: number) => ({ role: 'tool', content: `result ${n} `.repeat(20) });
      let messages = [entry(0)];
      const snapshot = () => ({ value: 'planning', context: { messages, hints: [] }, children: {} });
      await store.create({ ...run, snapshot: snapshot() });
      const sizes: number[] = [];
      for (let step = 1; step <= 200; step++) {
        messages = [...messages, entry(step)];
        await store.save('run-1', { expectedVersion: step, status: 'running', snapshot: snapshot() });
        if (step === 10 || step === 200) {
          const row = await admin!.query(
            `SELECT octet_length(snapshot::text) AS bytes FROM "${fixture.schema}".runs WHERE run_id = 'run-1'`,
          );
          sizes.push(Number(row.rows[0]?.bytes));
        }
      }
      const rows = await admin!.query(`SELECT count(*) AS n FROM "${fixture.schema}".run_rows`);
      expect(Number(rows.rows[0]?.n)).toBe(201);
      // Only the markers' counts differ (11 → 201 entries).
      expect(sizes[1]! - sizes[0]!).toBeLessThanOrEqual(2);
      expect(sizes[0]).toBeLessThan(300);
      expect((await fixture.open().load('run-1'))?.snapshot).toEqual(snapshot());
    } finally {
      await fixture.dispose();
    }
  });

  it('keeps working after the server drops its connections (no crash, next call reconnects)', async () => {
    requireDatabase();
    const fixture = schemaFixture();
    try {
      // A name of its own, so that only this store's connections are cut.
      const applicationName = `tw_terminate_${fixture.schema}`;
      const store = fixture.open({ poolConfig: { application_name: applicationName } });
      await store.create(run);
      const killed = await admin!.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      expect(killed.rowCount).toBeGreaterThan(0);
      // No wait: the pool may still hold the dead connection; a read is tried again on a fresh one.
      expect(await store.load('run-1')).toMatchObject({ version: 1 });
      expect(await store.list()).toHaveLength(1);
    } finally {
      await fixture.dispose();
    }
  });

  it("leaves a caller's pool open on close", async () => {
    requireDatabase();
    const schema = uniqueSchemaName();
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      const store = postgresStore({ pool, schema });
      await store.create(run);
      await store.close();
      expect((await pool.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
      await expect(store.load('run-1')).rejects.toBeInstanceOf(RunStoreUnavailableError);
    } finally {
      await pool.end();
      await dropSchema(database.url, schema);
    }
  });

  it('refuses a schema newer than this code, saying to upgrade', async () => {
    requireDatabase();
    const fixture = schemaFixture();
    try {
      await fixture.open().load('x');
      await admin!.query(
        `INSERT INTO "${fixture.schema}".schema_migrations (version, description) VALUES (999, 'future')`,
      );
      const error = await fixture
        .open()
        .load('x')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunStoreUnavailableError);
      expect((error as Error).message).toMatch(/schema version 999, newer than .* upgrade toolwarden/);
    } finally {
      await fixture.dispose();
    }
  });
});

describe('postgresStore without a database', () => {
  it('never puts the password in an error message', async () => {
    const store = postgresStore({
      connectionString: 'postgres://toolwarden:hunter2@127.0.0.1:1/toolwarden_test?sslmode=disable',
      schema: 'tw_never_created',
    });
    const error = await store.load('run-1').catch((e: unknown) => e);
    await store.close();
    expect(error).toBeInstanceOf(RunStoreUnavailableError);
    expect((error as Error).message).toContain('postgres://toolwarden:***@127.0.0.1:1/toolwarden_test');
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('rejects a schema name that is not a plain identifier', () => {
    expect(() => postgresStore({ connectionString: database.url, schema: 'x"; DROP TABLE y; --' })).toThrow(
      TypeError,
    );
  });
});

/** Every migration, 1 to `latest`, each recorded once. */
function allVersions(latest: number): number[] {
  return Array.from({ length: latest }, (_, i) => i + 1);
}
