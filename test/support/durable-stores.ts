/**
 * The three RunStores as fixtures for the runtime-level durable suites (issue 7), and a store
 * wrapper that fails on demand.
 *
 * PostgreSQL follows the gating convention of `postgres-test-database.ts` (beside this file): skipped
 * with a warning when unreachable, required (the suite fails) with `CI=true`.
 *
 * @module
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryStore } from '../../stores/memory-store.ts';
import { RUN_STORE_METHODS } from '../../stores/plain-store.ts';
import { postgresStore } from '../../stores/postgres-store.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { RunStoreUnavailableError } from '../../stores/run-store-errors.ts';
import {
  dropSchema,
  type PostgresTestDatabase,
  probePostgresTestDatabase,
  uniqueSchemaName,
} from './postgres-test-database.ts';

/** One database for one test: `open()` gives a store on it as a new process would open it. */
export interface StoreFixture {
  open(): RunStore;
  dispose(): Promise<void>;
}

export interface StoreKind {
  name: 'memory' | 'sqlite' | 'postgres';
  /** Why the suite is skipped, when it is. */
  skip?: string;
  /** Throws when the store is required but unreachable (CI=true). */
  require(): void;
  fixture(): Promise<StoreFixture>;
}

/**
 * The PostgreSQL test database for `suite`, and why the suite skips it (`skip`, warned about):
 * peers off (`npm run test:unit`), or unreachable without `CI=true`.
 */
export async function postgresTestGate(
  suite: string,
): Promise<{ database: PostgresTestDatabase; skip: string | undefined }> {
  // `npm run test:unit` uses no peer (vitest.unit.config.ts).
  const peersOff = process.env.TOOLWARDEN_TEST_PEERS === 'off';
  const database: PostgresTestDatabase = peersOff
    ? { url: '', reachable: false, required: false, skipMessage: '', failMessage: '' }
    : await probePostgresTestDatabase(suite);
  const skip = peersOff
    ? 'peers off (npm run test:unit)'
    : !database.reachable && !database.required
      ? 'PostgreSQL not reachable'
      : undefined;
  if (skip !== undefined)
    console.warn(peersOff ? `Skipping "${suite}" on PostgreSQL: ${skip}` : database.skipMessage);
  return { database, skip };
}

/** The memory, SQLite (temporary file) and PostgreSQL (own schema) stores, PostgreSQL gated. */
export async function durableStoreKinds(suite: string): Promise<StoreKind[]> {
  const { database, skip: postgresSkip } = await postgresTestGate(suite);
  return [
    {
      name: 'memory',
      require() {},
      async fixture() {
        // One object is the whole database: every "process" shares it.
        const store = memoryStore();
        return { open: () => store, dispose: () => store.close() };
      },
    },
    {
      name: 'sqlite',
      require() {},
      async fixture() {
        const dir = await mkdtemp(join(tmpdir(), 'toolwarden-durable-'));
        const opened: RunStore[] = [];
        const { sqliteStore } = await import('../../stores/sqlite-store.ts');
        return {
          open() {
            const store = sqliteStore({ path: join(dir, 'runs.db') });
            opened.push(store);
            return store;
          },
          async dispose() {
            await Promise.all(opened.map((store) => store.close()));
            await rm(dir, { recursive: true, force: true });
          },
        };
      },
    },
    {
      name: 'postgres',
      ...(postgresSkip === undefined ? {} : { skip: postgresSkip }),
      require() {
        if (!database.reachable) throw new Error(database.failMessage);
      },
      async fixture() {
        const schema = uniqueSchemaName('tw_durable');
        const opened: RunStore[] = [];
        return {
          open() {
            const store = postgresStore({ connectionString: database.url, schema });
            opened.push(store);
            return store;
          },
          async dispose() {
            await Promise.all(opened.map((store) => store.close()));
            await dropSchema(database.url, schema);
          },
        };
      },
    },
  ];
}

/** A store whose calls fail with RunStoreUnavailableError while `down` (a dead database). */
export interface FlakyStore extends RunStore {
  down: boolean;
  /** Calls that failed while down, by method. */
  failures: Record<string, number>;
}

/** Wraps `store`; `only` limits the failing methods (default: every one). */
export function flakyStore(store: RunStore, only?: (keyof RunStore)[]): FlakyStore {
  const flaky = { down: false, failures: {} as Record<string, number> } as FlakyStore;
  for (const method of RUN_STORE_METHODS) {
    const original = store[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (original === undefined) continue;
    (flaky as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      if (flaky.down && method !== 'close' && (only === undefined || only.includes(method))) {
        flaky.failures[method] = (flaky.failures[method] ?? 0) + 1;
        throw new RunStoreUnavailableError({
          store: 'flaky test store',
          operation: method,
          cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
        });
      }
      return original.apply(store, args);
    };
  }
  return flaky;
}
