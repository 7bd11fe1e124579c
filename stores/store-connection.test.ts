import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunNotFoundError, RunStoreClosedError, RunStoreUnavailableError } from './run-store-errors.ts';
import { sqliteStore } from './sqlite-store.ts';
import { StoreConnection } from './store-connection.ts';

describe('StoreConnection', () => {
  it('opens once on first use and hands every call the same database', async () => {
    let opened = 0;
    const connection = new StoreConnection(
      'test store',
      async () => ({ id: ++opened }),
      () => {},
    );
    const seen = await Promise.all([1, 2, 3].map(() => connection.use('load', 'r', (db) => db.id)));
    expect(seen).toEqual([1, 1, 1]);
    expect(opened).toBe(1);
  });

  it('fails a call whose open failed as unavailable, and opens again on the next call', async () => {
    let attempts = 0;
    const connection = new StoreConnection(
      'test store',
      async () => {
        if (++attempts === 1)
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        return 'db';
      },
      () => {},
    );
    const error = await connection.use('save', 'run-1', () => 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunStoreUnavailableError);
    expect(error).toMatchObject({ operation: 'save', runId: 'run-1', cause: { code: 'ECONNREFUSED' } });
    expect(await connection.use('save', 'run-1', (db) => db)).toBe('db');
    expect(attempts).toBe(2);
  });

  it("passes the store's own errors through and wraps a driver's", async () => {
    const connection = new StoreConnection(
      'test store',
      async () => 'db',
      () => {},
    );
    await expect(
      connection.use('save', 'ghost', () => {
        throw new RunNotFoundError('ghost');
      }),
    ).rejects.toBeInstanceOf(RunNotFoundError);
    const error = await connection
      .use('list', undefined, () => {
        throw new TypeError('driver bug');
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunStoreUnavailableError);
    expect(error).toMatchObject({ operation: 'list', runId: undefined, cause: { message: 'driver bug' } });
    expect((error as Error).message).toMatch(/test store/);
  });

  it('ends the database once at close, and fails every later call as closed', async () => {
    const ended: string[] = [];
    const connection = new StoreConnection(
      'test store',
      async () => 'db',
      (db) => void ended.push(db),
    );
    await connection.use('load', 'r', () => undefined);
    await connection.close();
    await connection.close();
    expect(ended).toEqual(['db']);
    const error = await connection.use('load', 'r', () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunStoreUnavailableError);
    expect((error as Error).cause).toBeInstanceOf(RunStoreClosedError);
  });

  it('lets a SQLite store whose file could not be opened work once it can be (the database came back)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwarden-connection-'));
    const path = join(dir, 'runs.db');
    // A directory where the database file should be: SQLite cannot open it.
    await mkdir(path);
    const store = sqliteStore({ path });
    try {
      const run = { runId: 'run-1', agentId: 'a', status: 'running' as const, snapshot: { step: 1 } };
      await expect(store.create(run)).rejects.toBeInstanceOf(RunStoreUnavailableError);
      await rm(path, { recursive: true });
      expect((await store.create(run)).version).toBe(1);
      expect((await store.load('run-1'))?.snapshot).toEqual({ step: 1 });
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
