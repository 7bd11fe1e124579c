/**
 * The SQLite run store's schema (`sqlite-store.ts`): the migrations, in order, and how a store
 * brings a database file up to {@link SQLITE_SCHEMA_VERSION}. Tables are prefixed `toolwarden_`
 * so the file can be an application's own database; the applied versions are recorded in
 * `toolwarden_schema_migrations`.
 *
 * @module
 */

import { latestVersion, type Migration, newerSchemaError } from './migrations.ts';
import type { SqliteConnection } from './sqlite-connection.ts';
import { HEADS_MIGRATION } from './sqlite-heads.ts';
import { LOG_MIGRATION } from './sqlite-log.ts';

/** Applied in order; never edit a released entry, append a new one. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs and run events',
    statements: [
      `CREATE TABLE toolwarden_runs (
        run_id TEXT PRIMARY KEY,
        session_id TEXT,
        agent_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'awaiting', 'completed', 'failed', 'canceled')),
        version INTEGER NOT NULL,
        snapshot TEXT NOT NULL,
        labels TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        touch_seq INTEGER NOT NULL,
        event_seq INTEGER NOT NULL DEFAULT 0
      )`,
      'CREATE INDEX toolwarden_runs_by_updated ON toolwarden_runs (updated_at DESC, touch_seq DESC)',
      'CREATE INDEX toolwarden_runs_by_status ON toolwarden_runs (status, updated_at DESC, touch_seq DESC)',
      'CREATE INDEX toolwarden_runs_by_session ON toolwarden_runs (session_id, updated_at DESC, touch_seq DESC)',
      'CREATE UNIQUE INDEX toolwarden_runs_by_touch ON toolwarden_runs (touch_seq)',
      `CREATE TABLE toolwarden_run_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
      )`,
    ],
  },
  {
    version: 2,
    description: 'run owners and leases',
    statements: [
      'ALTER TABLE toolwarden_runs ADD COLUMN owner TEXT',
      `CREATE TABLE toolwarden_run_owners (
        owner TEXT PRIMARY KEY,
        lease_until INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 3,
    description: 'append-only snapshot members as rows (snapshot-rows.ts)',
    statements: [
      `CREATE TABLE toolwarden_run_rows (
        run_id TEXT NOT NULL,
        member TEXT NOT NULL,
        idx INTEGER NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, member, idx)
      )`,
    ],
  },
  {
    // Issue 36 item 2: a step's commit wrote ~11 WAL pages for ~2 KB of new rows. Every index of
    // the runs table held updated_at and touch_seq, which every save rewrites, so each save moved
    // an entry in all four. Now only touch_seq's own index moves (list orders by it: write
    // order), and status and session are indexed alone (a step changes neither; a save sets
    // status only when it changes, since SQLite rewrites the index of every column an UPDATE sets).
    // (WITHOUT ROWID events and rows were tried and wrote more: a step's ~600-byte events split
    // the run's leaf in the middle of the b-tree, where a rowid table appends at its right edge.)
    version: 4,
    description: 'runs indexes without the columns every save rewrites',
    statements: [
      'DROP INDEX toolwarden_runs_by_updated',
      'DROP INDEX toolwarden_runs_by_status',
      'DROP INDEX toolwarden_runs_by_session',
      'CREATE INDEX toolwarden_runs_by_status ON toolwarden_runs (status)',
      'CREATE INDEX toolwarden_runs_by_session ON toolwarden_runs (session_id)',
    ],
  },
  {
    // Issue 36 item 2, second pass: a step's commit still wrote six b-trees (the run row, the
    // write-order index, the events table and its key's index, the rows table and its key's
    // index: 8.25 WAL pages a step). Events and snapshot rows now go to one table keyed by run
    // and write order, with no index of its own (sqlite-log.ts): 4.95 pages a step. (WITHOUT
    // ROWID tables keyed by (run_id, seq) wrote more: an index b-tree splits in the middle.)
    version: 5,
    description: "one log table for a run's events and snapshot rows, keyed by run and write order",
    statements: LOG_MIGRATION,
  },
  {
    // Issue 35 item 2: costBudget's shared budgets (sqlite-cost-ledger.ts), micro-units.
    version: 6,
    description: 'cost ledger: shared money budgets',
    statements: [
      `CREATE TABLE toolwarden_cost_accounts (
        key TEXT PRIMARY KEY,
        spent INTEGER NOT NULL DEFAULT 0 CHECK (spent >= 0),
        reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0)
      )`,
      `CREATE TABLE toolwarden_cost_holds (
        key TEXT NOT NULL REFERENCES toolwarden_cost_accounts (key) ON DELETE CASCADE,
        id TEXT NOT NULL,
        amount INTEGER NOT NULL CHECK (amount >= 0),
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (key, id)
      )`,
    ],
  },
  {
    // Issue 36 item 5: a run's batch (its calls, its results, the results handed on) kept as rows
    // of the log (kinds 3–6, snapshot-rows.ts ROW_MEMBERS; a results slot's latest entry wins).
    // The table is as it was; the version is what makes an older release, which would read those
    // rows wrong, refuse the file.
    version: 7,
    description: "a run's batch kept as rows of the log (kinds 3-6), not in its snapshot row",
    statements: [],
  },
  {
    // Issue 36 item 2, third pass: a step's commit still wrote three b-trees (the run row, which
    // held the snapshot head, version and counters; its write-order index; the log): 4.95 WAL
    // pages a step at schema 6, 7.1 at schema 7. The per-step state now goes to a heads table
    // keyed by write order and the log's closing mark (sqlite-heads.ts): two b-trees, the run row
    // written when its status, labels or owner change; 3.85 pages a step.
    version: 8,
    description:
      "run heads apart from run rows: a step writes the run's log and its head, keyed by write order",
    statements: HEADS_MIGRATION,
  },
];

/** The schema version this code reads and writes. */
export const SQLITE_SCHEMA_VERSION = latestVersion(MIGRATIONS);

/**
 * Creates the schema, or brings it up to {@link SQLITE_SCHEMA_VERSION}.
 *
 * Optimistic: read the version; if migrations are pending, apply them and record them in one
 * `BEGIN IMMEDIATE` transaction. If another process migrated in between, that transaction fails
 * (the table exists, or the version row does) and rolls back whole; reading the version again
 * then shows it done.
 */
export async function migrate(db: SqliteConnection): Promise<void> {
  await db.write(() =>
    db.exec(`CREATE TABLE IF NOT EXISTS toolwarden_schema_migrations (
      version INTEGER PRIMARY KEY,
      description TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`),
  );
  const current = await db.read(() => schemaVersion(db));
  if (current === SQLITE_SCHEMA_VERSION) return;
  if (current > SQLITE_SCHEMA_VERSION) {
    throw newerSchemaError('the database', current, SQLITE_SCHEMA_VERSION);
  }
  const pending = MIGRATIONS.filter((migration) => migration.version > current);
  try {
    await db.write(() => {
      for (const migration of pending) {
        for (const statement of migration.statements) db.exec(statement);
        db.once(
          'INSERT INTO toolwarden_schema_migrations (version, description, applied_at) VALUES (?, ?, ?)',
          migration.version,
          migration.description,
          Date.now(),
        );
      }
    });
  } catch (error) {
    if ((await db.read(() => schemaVersion(db))) >= SQLITE_SCHEMA_VERSION) return; // another process won the race
    throw error;
  }
}

function schemaVersion(db: SqliteConnection): number {
  const row = db.get('SELECT coalesce(max(version), 0) AS version FROM toolwarden_schema_migrations');
  return Number(row?.version ?? 0);
}
