/**
 * The committed release fixtures (test/fixtures/releases/<version>/) opened as stores, the way a
 * user's database is opened by the next release: a copy of the SQLite file, and the PostgreSQL
 * dump loaded into a schema of its own (gated like the durable suites: skipped with a reason when
 * PostgreSQL is unreachable, required with `CI=true`).
 *
 * @module
 */

import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresStore } from '../../stores/postgres-store.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { postgresTestGate } from './durable-stores.ts';
import { dropSchema, uniqueSchemaName } from './postgres-test-database.ts';

export const RELEASES_DIR = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/releases');

/** Every release with fixtures, oldest first (`0.1.0`, ...). */
export function fixtureReleases(): string[] {
  return readdirSync(RELEASES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(RELEASES_DIR, entry.name, 'runs.db')))
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** One fixture database, opened: the store and how to throw it away. */
export interface OpenedFixture {
  store: RunStore;
  dispose(): Promise<void>;
}

export interface FixtureStoreKind {
  name: 'sqlite' | 'postgres';
  skip?: string;
  require(): void;
  open(release: string): Promise<OpenedFixture>;
}

/** The schema the fixtures' PostgreSQL dumps were taken from (generate.ts). */
function dumpedSchema(release: string): string {
  return `tw_release_${release.replaceAll('.', '_')}`;
}

/** SQLite (a temporary copy of `runs.db`) and PostgreSQL (`runs.pg.sql` in a fresh schema). */
export async function fixtureStoreKinds(suite: string): Promise<FixtureStoreKind[]> {
  const { database, skip: postgresSkip } = await postgresTestGate(suite);
  return [
    {
      name: 'sqlite',
      require() {},
      async open(release) {
        const dir = mkdtempSync(join(tmpdir(), 'tw-release-'));
        const path = join(dir, 'runs.db');
        copyFileSync(join(RELEASES_DIR, release, 'runs.db'), path);
        const store = sqliteStore({ path });
        return {
          store,
          async dispose() {
            await store.close();
            rmSync(dir, { recursive: true, force: true });
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
      async open(release) {
        const schema = uniqueSchemaName('tw_release');
        const dump = readFileSync(join(RELEASES_DIR, release, 'runs.pg.sql'), 'utf8');
        // The dump names its schema everywhere (`CREATE SCHEMA x;`, `x.runs`): renamed as a word.
        const sql = dump.replace(new RegExp(`\\b${dumpedSchema(release)}\\b`, 'g'), schema);
        const { Client } = await import('pg');
        const client = new Client({ connectionString: database.url });
        await client.connect();
        try {
          await client.query(sql);
        } finally {
          await client.end();
        }
        const store = postgresStore({ connectionString: database.url, schema });
        return {
          store,
          async dispose() {
            await store.close();
            await dropSchema(database.url, schema);
          },
        };
      },
    },
  ];
}
