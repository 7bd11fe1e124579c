import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on a client of `pool`: committed when it resolves, rolled back
 * when it throws. A client whose transaction failed is discarded rather than returned to the pool
 * half-broken. Used by the schema's migration and the cost ledger's reservations.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = error;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release(broken instanceof Error ? broken : undefined);
  }
}
