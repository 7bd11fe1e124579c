import { Pool } from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import type { PgPool, PostgresStoreOptions } from '../stores/postgres-store.ts';

/**
 * `toolwarden/postgres` declares the pg Pool it takes (`PgPool`) instead of importing pg's types, so
 * an app without `pg`/`@types/pg` type-checks with `skipLibCheck: false` (issue 28 item 7); a real
 * pg Pool and pg's PoolConfig must still fit.
 */
describe('PgPool', () => {
  it('accepts a pg Pool and pg pool settings', () => {
    expectTypeOf<Pool>().toExtend<PgPool>();
    const settings: import('pg').PoolConfig = { max: 5, keepAlive: true };
    expectTypeOf({ connectionString: 'postgres://x', poolConfig: settings }).toExtend<PostgresStoreOptions>();
    expectTypeOf({ pool: new Pool() }).toExtend<PostgresStoreOptions>();
  });
});
