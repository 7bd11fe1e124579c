/**
 * The test-gating convention for suites that need a real PostgreSQL (docs/architecture.md §Layers "integration
 * suites that start real peers"):
 *
 * - The database is `TOOLWARDEN_PG_URL`, default {@link DEFAULT_POSTGRES_TEST_URL} (what
 *   `bash scripts/postgres.sh start` serves).
 * - When it is unreachable a suite is skipped with a warning saying how to start it, except
 *   with `CI=true`, where the suite must run and fail: CI has to prove the PostgreSQL path.
 * - Each test run works in its own schema ({@link uniqueSchemaName}) and drops it afterwards,
 *   so parallel runs and leftovers never collide.
 *
 * Used by `stores/postgres-store.test.ts` and the durable suites; meant for any suite or bench that
 * needs the PostgreSQL store. Test support: not part of the package.
 *
 * @module
 */

export const DEFAULT_POSTGRES_TEST_URL = 'postgres://postgres@127.0.0.1:54329/toolwarden_test';

export interface PostgresTestDatabase {
  url: string;
  reachable: boolean;
  /** Why it is unreachable (the driver's error), when it is. */
  error?: string;
  /** `CI=true`: an unreachable database must fail the suite rather than skip it. */
  required: boolean;
  /** The warning to print when skipping. */
  skipMessage: string;
  /** The error to fail with when the database is required but unreachable. */
  failMessage: string;
}

/** Connects once (2 s timeout) to see whether the test database is there. */
export async function probePostgresTestDatabase(
  suite: string,
  env: Record<string, string | undefined> = process.env,
): Promise<PostgresTestDatabase> {
  const url = env.TOOLWARDEN_PG_URL || DEFAULT_POSTGRES_TEST_URL;
  const required = env.CI === 'true';
  let error: string | undefined;
  try {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => {});
    }
  } catch (cause) {
    error = describe(cause);
  }
  return {
    url,
    reachable: error === undefined,
    ...(error === undefined ? {} : { error }),
    required,
    skipMessage:
      `Skipping "${suite}": PostgreSQL is not reachable at ${url} (${error}). ` +
      'Start it with `bash scripts/postgres.sh start`, or set TOOLWARDEN_PG_URL. With CI=true this suite fails instead.',
    failMessage:
      `"${suite}" needs PostgreSQL (CI=true) but it is not reachable at ${url} (${error}). ` +
      'Start it with `bash scripts/postgres.sh start`, or set TOOLWARDEN_PG_URL.',
  };
}

/** A fresh schema name for one test run: `<prefix>_<pid>_<random>`, a valid unquoted identifier. */
export function uniqueSchemaName(prefix = 'tw_test'): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Drops a schema and everything in it (test cleanup). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) throw new TypeError(`not a plain identifier: ${schema}`);
  const { Client } = await import('pg');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.map(describe).join('; ');
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}
