import { execFile, spawn } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { createClient } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStoreContract } from '../test/store-contract/run-store-contract.ts';
import type { RunStore } from './run-store.ts';
import { RunStoreUnavailableError, StaleRunVersionError } from './run-store-errors.ts';
import { listSql } from './sqlite-statements.ts';
import { SQLITE_SCHEMA_VERSION, sqliteStore } from './sqlite-store.ts';

runStoreContract('sqliteStore', async ({ now }) => {
  const dir = await mkdtemp(join(tmpdir(), 'toolwarden-sqlite-'));
  const path = join(dir, 'runs.db');
  const opened: RunStore[] = [];
  const open = (options: { path: string }) => {
    const store = sqliteStore({ ...options, now });
    opened.push(store);
    return store;
  };
  return {
    store: open({ path }),
    openSecond: async () => open({ path }),
    // A directory where the database file should be: SQLite cannot open it.
    openDead: async () => open({ path: dir }),
    deadMessage: [/sqlite run store \(file:\/\/\//, /SQLITE_CANTOPEN|unable to open/i],
    dispose: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
});

/**
 * The b-trees whose pages the WAL of `path` holds (its frames' page numbers, named by `dbstat`
 * through `side`, a second connection on the file), sorted.
 */
function walBTrees(
  side: { prepare(sql: string): { all(): unknown[]; get(): unknown } },
  path: string,
): string[] {
  const pageOwners = new Map(
    (side.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]).map(
      (row) => [row.pageno, row.name],
    ),
  );
  const wal = readFileSync(`${path}-wal`);
  const pageSize = Number((side.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  const written = new Set<string>();
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    written.add(pageOwners.get(wal.readUInt32BE(at)) ?? 'unknown');
  }
  return [...written].sort();
}

describe('sqliteStore', () => {
  let dir: string;
  const stores: RunStore[] = [];
  const run = { runId: 'run-1', agentId: 'support', status: 'running' as const, snapshot: { step: 1 } };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-sqlite-'));
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await rm(dir, { recursive: true, force: true });
  });
  function open(path: string, options: { busyTimeoutMs?: number } = {}): RunStore {
    const store = sqliteStore({ path, ...options });
    stores.push(store);
    return store;
  }

  it('writes what a step added, not the transcript: the snapshot row stays the same size as the run grows (issue 17)', async () => {
    const path = join(dir, 'runs.db');
    const store = open(path);
    const entry = (n: number) => ({ role: 'tool', content: `result ${n} `.repeat(20) });
    let messages = [entry(0)];
    const snapshot = () => ({ value: 'planning', context: { messages, hints: [] }, children: {} });
    await store.create({ ...run, snapshot: snapshot() });
    const db = createClient({ url: `file:${path}` });
    const sizes: number[] = [];
    try {
      for (let step = 1; step <= 200; step++) {
        messages = [...messages, entry(step)];
        await store.save('run-1', { expectedVersion: step, status: 'running', snapshot: snapshot() });
        if (step === 10 || step === 200) {
          const row = await db.execute(
            "SELECT length(snapshot) AS bytes FROM toolwarden_run_heads WHERE run_id = 'run-1'",
          );
          sizes.push(Number(row.rows[0]?.bytes));
        }
      }
      const rows = await db.execute('SELECT count(*) AS n FROM toolwarden_run_log WHERE kind = 1');
      expect(Number(rows.rows[0]?.n)).toBe(201);
    } finally {
      db.close();
    }
    // Whole snapshots grew by ~40 KB between step 10 and step 200; the row now holds markers only.
    // Only the markers' counts differ (11 → 201 entries).
    expect(sizes[1]! - sizes[0]!).toBeLessThanOrEqual(2);
    expect(sizes[0]).toBeLessThan(300);
    expect((await open(path).load('run-1'))?.snapshot).toEqual(snapshot());
  });

  it("stores a save's events and transcript rows alike whether few (bound VALUES) or many (one JSON array)", async () => {
    const path = join(dir, 'runs.db');
    const store = open(path);
    let messages: { role: string; content: string }[] = [];
    const snapshot = () => ({ value: 'planning', context: { messages, hints: [] } });
    await store.create({ ...run, snapshot: snapshot() });
    const expected: { seq: number; event: unknown; at: number }[] = [];
    // A save's entries are its events and as many rows: 2 and 12 go through the statements with
    // bound rows, 14 and 40 through json_each.
    for (const [step, count] of [1, 6, 7, 20].entries()) {
      const events = Array.from({ length: count }, (_, i) => ({
        event: { type: 'state_changed', step, i, text: `"quoted" ${'é'.repeat(i)}` },
        at: 1_000 * step + i,
      }));
      messages = [...messages, ...events.map((_, i) => ({ role: 'tool', content: `${step}.${i}` }))];
      for (const { event, at } of events) expected.push({ seq: expected.length + 1, event, at });
      await store.save('run-1', {
        expectedVersion: step + 1,
        status: 'running',
        snapshot: snapshot(),
        events,
      });
      // A stale save writes none of its events or rows.
      await expect(
        store.save('run-1', { expectedVersion: step + 1, status: 'running', snapshot: snapshot(), events }),
      ).rejects.toThrow(/version/i);
    }
    const read = await store.readEvents('run-1');
    expect(read.map(({ seq, event, at }) => ({ seq, event, at }))).toEqual(expected);
    expect((await open(path).load('run-1'))?.snapshot).toEqual(snapshot());
    const db = createClient({ url: `file:${path}` });
    try {
      const types = await db.execute(
        `SELECT DISTINCT kind, typeof(kind) || typeof(seq) || typeof(value) || typeof(at) || typeof(touch) AS t
        FROM toolwarden_run_log ORDER BY kind`,
      );
      // Each write's mark (kind -1) names the head it wrote.
      expect(types.rows.map((row) => [Number(row.kind), row.t])).toEqual([
        [-1, 'integerintegertextnullinteger'],
        [0, 'integerintegertextintegernull'],
        [1, 'integerintegertextnullnull'],
      ]);
    } finally {
      db.close();
    }
  });

  it("deletes every row of a rewritten member however far back, from where the last write's mark says its live rows begin, a second store's saves among them (issue 36 item 2)", async () => {
    const path = join(dir, 'runs.db');
    const [store, other] = [open(path), open(path)];
    let messages: unknown[] = [{ role: 'user', content: 'go' }];
    type Batch = { pending: unknown[]; results: unknown[]; lastResults: unknown[]; newResults: unknown[] };
    let batch: Batch = { pending: [], results: [], lastResults: [], newResults: [] };
    const snapshot = () => ({ value: 'executing', context: { messages, hints: [], batch } });
    await store.create({ ...run, snapshot: snapshot() });
    let version = 1;
    const save = async (by: RunStore) => {
      version = (
        await by.save('run-1', { expectedVersion: version, status: 'running', snapshot: snapshot() })
      ).version;
    };
    for (let step = 0; step < 40; step++) {
      batch = { ...batch, pending: [{ id: `c${step}a` }, { id: `c${step}b` }], results: [null, null] };
      await save(store);
      batch = { ...batch, results: [{ id: `c${step}a`, result: step }, null] };
      await save(store);
      batch = { ...batch, results: [batch.results[0], { id: `c${step}b`, result: step }] };
      // Now and then a store that did not write the run before: it rewrites every member.
      await save(step % 7 === 3 ? other : store);
      messages = [...messages, { role: 'tool', content: `step ${step}` }];
      batch = { pending: [], results: [], lastResults: batch.results, newResults: [] };
      await save(store);
    }
    expect((await open(path).load('run-1'))?.snapshot).toEqual(snapshot());
    const db = createClient({ url: `file:${path}` });
    try {
      const kinds = await db.execute(
        'SELECT kind, count(*) AS n FROM toolwarden_run_log WHERE kind > 0 GROUP BY kind ORDER BY kind',
      );
      // The transcript (kind 1) and the results handed on (kind 5, one row): nothing of the
      // batches before, whose calls and results were rewritten 40 times.
      expect(kinds.rows.map((row) => [Number(row.kind), Number(row.n)])).toEqual([
        [1, 41],
        [5, 1],
      ]);
    } finally {
      db.close();
    }
  });

  it('a save from the version this store last wrote sees what another store wrote since: appended events, a save, a claim, a delete and a new run of the same id', async () => {
    const path = join(dir, 'runs.db');
    const [a, b] = [open(path), open(path)];
    const event = (type: string) => [{ event: { type }, at: 1 }];
    await a.create({ ...run, events: event('created') });
    await a.save('run-1', {
      expectedVersion: 1,
      status: 'running',
      snapshot: { step: 2 },
      events: event('a1'),
    });
    // Events appended by another store after a's last write: a's next save numbers on after them.
    await b.appendEvents('run-1', event('b-appended'));
    await a.save('run-1', {
      expectedVersion: 2,
      status: 'running',
      snapshot: { step: 3 },
      events: event('a2'),
    });
    expect((await b.readEvents('run-1')).map((e) => [e.seq, (e.event as { type: string }).type])).toEqual([
      [1, 'created'],
      [2, 'a1'],
      [3, 'b-appended'],
      [4, 'a2'],
    ]);
    // Saved and claimed by the other store: a's save from the version it wrote is stale.
    await b.save('run-1', { expectedVersion: 3, status: 'running', snapshot: { step: 4 } });
    await expect(a.save('run-1', { expectedVersion: 3, status: 'running', snapshot: {} })).rejects.toThrow(
      StaleRunVersionError,
    );
    await a.save('run-1', { expectedVersion: 4, status: 'running', snapshot: { step: 5 } });
    await b.heartbeat!('b', 60_000);
    await b.claim!('run-1', 'b');
    await expect(a.save('run-1', { expectedVersion: 5, status: 'running', snapshot: {} })).rejects.toThrow(
      StaleRunVersionError,
    );
    // Deleted and created again by the other store, at version 1 like the run a wrote first.
    await a.create({ ...run, runId: 'run-2' });
    expect(await b.delete('run-2')).toBe(true);
    await b.create({ ...run, runId: 'run-2', snapshot: { by: 'b' }, events: event('b-created') });
    await a.save('run-2', {
      expectedVersion: 1,
      status: 'awaiting',
      snapshot: { by: 'a' },
      events: event('a'),
    });
    expect(await open(path).load('run-2')).toMatchObject({
      version: 2,
      status: 'awaiting',
      snapshot: { by: 'a' },
    });
    expect((await b.readEvents('run-2')).map((e) => [e.seq, (e.event as { type: string }).type])).toEqual([
      [1, 'b-created'],
      [2, 'a'],
    ]);
    expect((await open(path).load('run-1'))?.snapshot).toEqual({ step: 5 });
  });

  it('lists by index: unfiltered from the heads in key order, by status or session from their index, never scanning the runs or the log (schema 8)', async () => {
    const path = join(dir, 'runs.db');
    const store = open(path);
    await store.create({ ...run, sessionId: 's-1' });
    await store.create({ ...run, runId: 'run-2' });
    const { default: Database } = await import('libsql');
    const side = new Database(path);
    const plan = (where: string[], limited: boolean) =>
      (side.prepare(`EXPLAIN QUERY PLAN ${listSql(where, limited)}`).all() as { detail: string }[]).map(
        (row) => row.detail,
      );
    const status = 'r.status IN (SELECT value FROM json_each(?))';
    try {
      const all = plan([], true);
      expect(all).toEqual(['SCAN h', 'SEARCH r USING PRIMARY KEY (run_id=?)']);
      const byStatus = plan([status], true);
      expect(byStatus).toContain('SEARCH r USING INDEX toolwarden_runs_by_status (status=?)');
      const bySession = plan(['r.session_id = ?'], false);
      expect(bySession).toContain('SEARCH r USING INDEX toolwarden_runs_by_session (session_id=?)');
      for (const details of [byStatus, bySession, plan([status, 'r.session_id = ?'], true)]) {
        // The runs' rows only through an index; the log and the heads by rowid.
        expect(details.filter((detail) => /^SCAN (toolwarden_|m\b|h\b)/.test(detail))).toEqual([]);
        expect(details).toContain('SEARCH h USING INTEGER PRIMARY KEY (rowid=?)');
      }
    } finally {
      side.close();
    }
    expect((await store.list({ status: 'running', limit: 1 })).map((r) => r.runId)).toEqual(['run-2']);
  });

  it('reports a run whose transcript rows were lost instead of loading a shorter transcript', async () => {
    const path = join(dir, 'runs.db');
    const store = open(path);
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    await store.create({ ...run, snapshot: { value: 'planning', context: { messages, hints: [] } } });
    const db = createClient({ url: `file:${path}` });
    await db.execute('DELETE FROM toolwarden_run_log WHERE kind = 1 AND seq = 1');
    db.close();
    await expect(open(path).load('run-1')).rejects.toThrow(/"messages" should have 2 rows, the store has 1/);
  });

  it('keeps runs across a restart: a new store on the same file loads what the old one saved', async () => {
    const path = join(dir, 'runs.db');
    const before = open(path);
    await before.create(run);
    await before.save('run-1', { expectedVersion: 1, status: 'awaiting', snapshot: { step: 2 } });
    await before.appendEvents('run-1', [{ event: { type: 'await_clarification' }, at: 5 }]);
    await before.close();

    const after = open(path);
    expect(await after.load('run-1')).toMatchObject({
      version: 2,
      status: 'awaiting',
      snapshot: { step: 2 },
    });
    expect(await after.list({ status: 'awaiting' })).toHaveLength(1);
    await after.appendEvents('run-1', [{ event: { type: 'run_completed' }, at: 6 }]);
    expect((await after.readEvents('run-1')).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('creates the schema once, records its version, and runs in WAL mode', async () => {
    const path = join(dir, 'runs.db');
    await open(path).load('x');
    await open(path).load('x'); // a second store finds the schema in place
    const db = createClient({ url: `file:${path}` });
    try {
      const migrations = await db.execute(
        'SELECT version, description FROM toolwarden_schema_migrations ORDER BY version',
      );
      expect(migrations.rows.map((row) => Number(row.version))).toEqual(allVersions(SQLITE_SCHEMA_VERSION));
      const mode = await db.execute('PRAGMA journal_mode');
      expect(String(mode.rows[0]?.[0])).toBe('wal');
      const tables = await db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
      expect(tables.rows.map((row) => String(row.name))).toEqual([
        'toolwarden_cost_accounts',
        'toolwarden_cost_holds',
        'toolwarden_run_heads',
        'toolwarden_run_log',
        'toolwarden_run_owners',
        'toolwarden_runs',
        'toolwarden_schema_migrations',
      ]);
    } finally {
      db.close();
    }
  });

  it("a save that keeps the run's status and labels writes its head and its log, never the run row or an index; a status change adds the run row and the status index (schemas 4 and 8, issue 36 item 2)", async () => {
    const path = join(dir, 'runs.db');
    const store = open(path);
    const labels = { team: 'a' };
    await store.create({ ...run, sessionId: 's-1', labels });
    await store.save('run-1', { expectedVersion: 1, status: 'running', snapshot: { step: 2 }, labels });
    const { default: Database } = await import('libsql');
    const side = new Database(path);
    // The b-trees one save writes (page 1, sqlite_schema, is written whenever the file grows).
    const written = async (version: number, status: 'running' | 'awaiting', team: string) => {
      side.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
      const snapshot = { step: version + 1 };
      await store.save('run-1', { expectedVersion: version, status, snapshot, labels: { team } });
      return walBTrees(side, path).filter((name) => name !== 'sqlite_schema');
    };
    try {
      expect(await written(2, 'running', 'a')).toEqual(['toolwarden_run_heads', 'toolwarden_run_log']);
      // The status changing writes the run row and moves the status index, and lists follow.
      expect(await written(3, 'awaiting', 'a')).toEqual([
        'toolwarden_run_heads',
        'toolwarden_run_log',
        'toolwarden_runs',
        'toolwarden_runs_by_status',
      ]);
      expect((await store.list({ status: 'awaiting' })).map((r) => r.runId)).toEqual(['run-1']);
      expect(await store.list({ status: 'running' })).toEqual([]);
      // New labels: the run row, no index.
      expect(await written(4, 'awaiting', 'b')).toEqual([
        'toolwarden_run_heads',
        'toolwarden_run_log',
        'toolwarden_runs',
      ]);
      expect(await open(path).load('run-1')).toMatchObject({ version: 5, labels: { team: 'b' } });
    } finally {
      side.close();
    }
  });

  it("a step's save, its events and transcript rows with it, writes two b-trees: the run's log and its head (schema 8, issue 36 item 2)", async () => {
    const path = join(dir, 'runs.db');
    const store = open(path);
    let messages: unknown[] = [{ role: 'user', content: 'Add.' }];
    const snapshot = () => ({ value: 'planning', context: { messages, hints: [] } });
    await store.create({ ...run, sessionId: 's-1', snapshot: snapshot() });
    const step = (n: number) => {
      messages = [
        ...messages,
        { role: 'assistant', toolCalls: [{ toolCallId: `c${n}`, toolName: 'add', input: { a: n, b: 1 } }] },
        { role: 'tool', toolCallId: `c${n}`, toolName: 'add', content: { sum: n + 1 } },
      ];
      const events = ['planner_turn', 'tool_call_scheduled', 'tool_result', 'state_changed'].map((type) => ({
        event: { type, runId: 'run-1', step: n },
        at: n,
      }));
      return store.save('run-1', { expectedVersion: n, status: 'running', snapshot: snapshot(), events });
    };
    await step(1);
    const { default: Database } = await import('libsql');
    const side = new Database(path);
    try {
      side.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
      await step(2);
      // Page 1 (sqlite_schema) is written when the file grows. Schema 6 wrote the run row and
      // its write-order index too (toolwarden_runs, toolwarden_runs_by_touch).
      expect(walBTrees(side, path).filter((name) => name !== 'sqlite_schema')).toEqual([
        'toolwarden_run_heads',
        'toolwarden_run_log',
      ]);
    } finally {
      side.close();
    }
    expect((await open(path).load('run-1'))?.snapshot).toEqual(snapshot());
    expect((await store.readEvents('run-1')).map((e) => [e.seq, (e.event as { step: number }).step])).toEqual(
      [
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [5, 2],
        [6, 2],
        [7, 2],
        [8, 2],
      ],
    );
  });

  it("migrates release 0.1.0's schema 3 file through the log of schema 5 to the heads of schema 8: every run's events, snapshot rows and write order kept", async () => {
    const path = join(dir, 'runs.db');
    copyFileSync(new URL('../test/fixtures/releases/0.1.0/runs.db', import.meta.url), path);
    const before = createClient({ url: `file:${path}` });
    const old = {
      events: new Map<string, unknown[]>(),
      rows: new Map<string, unknown[]>(),
      order: [] as string[],
    };
    try {
      for (const row of (
        await before.execute('SELECT run_id, seq, event, at FROM toolwarden_run_events ORDER BY run_id, seq')
      ).rows) {
        const list = old.events.get(String(row.run_id)) ?? [];
        list.push({ seq: Number(row.seq), event: JSON.parse(String(row.event)), at: Number(row.at) });
        old.events.set(String(row.run_id), list);
      }
      for (const row of (
        await before.execute(
          'SELECT run_id, member, value FROM toolwarden_run_rows ORDER BY run_id, member, idx',
        )
      ).rows) {
        const key = `${row.run_id}/${row.member}`;
        old.rows.set(key, [...(old.rows.get(key) ?? []), JSON.parse(String(row.value))]);
      }
      old.order = (
        await before.execute('SELECT run_id FROM toolwarden_runs ORDER BY touch_seq DESC')
      ).rows.map((row) => String(row.run_id));
    } finally {
      before.close();
    }
    expect(old.order.length).toBeGreaterThan(1);
    expect(old.rows.size).toBeGreaterThan(0);

    const store = open(path);
    const listed = await store.list();
    expect(listed.map((r) => r.runId)).toEqual(old.order);
    for (const stored of listed) {
      const events = (await store.readEvents(stored.runId)).map(({ seq, event, at }) => ({ seq, event, at }));
      expect(events).toEqual(old.events.get(stored.runId) ?? []);
      const context = (stored.snapshot as { context?: Record<string, unknown> }).context;
      for (const member of ['messages', 'hints']) {
        if (old.rows.has(`${stored.runId}/${member}`))
          expect(context?.[member]).toEqual(old.rows.get(`${stored.runId}/${member}`));
      }
    }
    // Appends after the migration number on from the copied entries.
    const first = listed[0]!;
    const seqs = (await store.readEvents(first.runId)).map((e) => e.seq);
    await store.appendEvents(first.runId, [{ event: { type: 'after_migration' }, at: 1 }]);
    expect((await store.readEvents(first.runId)).map((e) => e.seq)).toEqual([...seqs, seqs.length + 1]);

    const after = createClient({ url: `file:${path}` });
    try {
      const versions = await after.execute(
        'SELECT version FROM toolwarden_schema_migrations ORDER BY version',
      );
      expect(versions.rows.map((row) => Number(row.version))).toEqual(allVersions(SQLITE_SCHEMA_VERSION));
      const tables = await after.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'toolwarden_run%' ORDER BY name",
      );
      expect(tables.rows.map((row) => String(row.name))).toEqual([
        'toolwarden_run_heads',
        'toolwarden_run_log',
        'toolwarden_run_owners',
        'toolwarden_runs',
      ]);
      const indexes = await after.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'toolwarden_run%' AND sql IS NOT NULL ORDER BY name",
      );
      expect(indexes.rows.map((row) => [String(row.name), String(row.sql)])).toEqual([
        [
          'toolwarden_runs_by_session',
          'CREATE INDEX toolwarden_runs_by_session ON toolwarden_runs (session_id) WHERE session_id IS NOT NULL',
        ],
        ['toolwarden_runs_by_status', 'CREATE INDEX toolwarden_runs_by_status ON toolwarden_runs (status)'],
      ]);
    } finally {
      after.close();
    }
  });

  it('migrates safely when several stores in one process open a new file at once', async () => {
    const path = join(dir, 'runs.db');
    const starters = Array.from({ length: 4 }, () => open(path));
    await Promise.all(starters.map((store, i) => store.create({ ...run, runId: `run-${i}` })));
    expect(await starters[0]!.list()).toHaveLength(4);
  });

  it('migrates once when several processes open a new file at the same moment', async () => {
    const path = join(dir, 'runs.db');
    const startAt = Date.now() + 1500; // every child waits for this instant, then opens the store
    const child = `
      import { sqliteStore } from ${JSON.stringify(new URL('./sqlite-store.ts', import.meta.url).href)};
      await new Promise((resolve) => setTimeout(resolve, ${startAt} - Date.now()));
      const store = sqliteStore({ path: ${JSON.stringify(path)} });
      await store.create({ runId: 'run-' + process.pid, agentId: 'a', status: 'running', snapshot: {} });
      await store.close();`;
    const run = promisify(execFile);
    await Promise.all(
      Array.from({ length: 6 }, () =>
        run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
          cwd: process.cwd(),
        }),
      ),
    );
    const db = createClient({ url: `file:${path}` });
    try {
      const migrations = await db.execute(
        'SELECT version FROM toolwarden_schema_migrations ORDER BY version',
      );
      expect(migrations.rows.map((row) => Number(row.version))).toEqual(allVersions(SQLITE_SCHEMA_VERSION));
      expect((await db.execute('SELECT count(*) AS n FROM toolwarden_runs')).rows[0]?.n).toBe(6);
    } finally {
      db.close();
    }
  });

  it('fails a write blocked past the busy timeout as unavailable, and the same save succeeds once unblocked', async () => {
    const path = join(dir, 'runs.db');
    const store = open(path, { busyTimeoutMs: 50 });
    await store.create(run);
    const blocker = createClient({ url: `file:${path}` });
    const lock = await blocker.transaction('write'); // holds SQLite's write lock
    const update = { expectedVersion: 1, status: 'running' as const, snapshot: { step: 2 } };
    try {
      const error = await store.save('run-1', update).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunStoreUnavailableError);
      expect(error).toMatchObject({ operation: 'save', runId: 'run-1', code: 'SQLITE_BUSY' });
      expect((error as Error).message).toMatch(
        /^sqlite run store \(file:.*runs\.db\) is unavailable: save\("run-1"\) failed: .*locked/,
      );
    } finally {
      await lock.rollback();
      blocker.close();
    }
    expect(await store.load('run-1')).toMatchObject({ version: 1, snapshot: { step: 1 } });
    expect(await store.save('run-1', update)).toMatchObject({ version: 2, snapshot: { step: 2 } });
  });

  it('keeps the event loop running while another process holds the write lock, and saves once it is free (issue 24 item 8)', async () => {
    const path = join(dir, 'runs.db');
    const store = open(path); // default busyTimeoutMs: 5 s, longer than the lock is held
    await store.create(run);
    const holdMs = 2_000;
    // Another process takes SQLite's write lock and holds it for `holdMs`.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const Database = require('libsql');
         const db = new Database(${JSON.stringify(path)});
         db.exec('BEGIN IMMEDIATE');
         console.log('locked');
         setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
      holder.once('exit', () => reject(new Error('the lock holder exited early')));
    });
    // The longest gap between ticks of a 5 ms timer while the save waits for the lock.
    let longest = 0;
    let last = performance.now();
    const tick = () => {
      const at = performance.now();
      longest = Math.max(longest, at - last);
      last = at;
    };
    const probe = setInterval(tick, 5);
    const started = performance.now();
    try {
      const saved = await store.save('run-1', {
        expectedVersion: 1,
        status: 'running',
        snapshot: { step: 2 },
      });
      tick(); // a save that blocked the whole time let no tick run before it returned
      expect(saved).toMatchObject({ version: 2 });
    } finally {
      clearInterval(probe);
      await exited;
    }
    const waited = performance.now() - started;
    // The save really waited for the other process (it could not write before the commit)...
    expect(waited).toBeGreaterThan(holdMs / 2);
    // ...while the event loop kept turning: before, one synchronous wait of the whole hold
    // (≈ holdMs). The bound leaves room for a loaded machine; docs/benchmarks.md has the figure.
    expect(longest).toBeLessThan(holdMs / 4);
    expect(await store.load('run-1')).toMatchObject({ version: 2, snapshot: { step: 2 } });
  });

  it('refuses a database whose schema is newer than this code, saying to upgrade', async () => {
    const path = join(dir, 'runs.db');
    await open(path).load('x');
    const db = createClient({ url: `file:${path}` });
    await db.execute("INSERT INTO toolwarden_schema_migrations VALUES (999, 'from the future', 0)");
    db.close();
    const error = await open(path)
      .load('x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunStoreUnavailableError);
    expect((error as Error).message).toMatch(/schema version 999, newer than .* upgrade toolwarden/);
  });

  it('opens relative paths, new directories, paths with spaces, file: URLs and :memory:', async () => {
    const paths = [
      relative(process.cwd(), join(dir, 'rel.db')),
      join(dir, 'new', 'nested', 'runs.db'),
      join(dir, 'with space', 'ünï.db'),
      `file:${join(dir, 'url.db')}`,
      ':memory:',
    ];
    for (const path of paths) {
      const store = open(path);
      await store.create(run);
      expect((await store.load('run-1'))?.snapshot, path).toEqual({ step: 1 });
    }
  });
});

/** Every migration, 1 to `latest`, each recorded once. */
function allVersions(latest: number): number[] {
  return Array.from({ length: latest }, (_, i) => i + 1);
}
