/**
 * `node --import tsx bench/store-floor.bench.ts [--rounds N] [--no-postgres] [--json file]`: what
 * a durable step costs on top of the default runtime (issue 36 item 2; docs/benchmarks.md
 * §Durable step floor). The reference loop (bench/support/reference-loop.ts) on:
 *
 * | figure | how |
 * |---|---|
 * | SQLite ÷ default per step, 10 and 500 steps | CPU µs per step of this process (GC included), the two variants interleaved in rounds; median of each ÷ |
 * | WAL pages per step | frames the SQLite file's WAL grows by over 6 runs of 10 steps, from an emptied WAL (a second connection's `wal_checkpoint(TRUNCATE)`; < 1,000 frames, so no checkpoint restarts it) |
 * | WAL pages per commit, by b-tree | the same frames, each page named by the `dbstat` table (its table or index; `sqlite_schema` is page 1, written when the file grows), over the commits (frames with a database size) |
 * | bytes handed to write() per step | `wchar` of /proc/self/io over the same runs: WAL frames and the checkpoints' copies back into the database |
 * | `synchronous: 'full'` per step, p50 / p99 | wall ms between two `planner_turn` events of a run (a step: its writes, each fsynced, and the turn), 10-step runs |
 * | PostgreSQL WAL bytes per step | `pg_current_wal_lsn()` before and after 6 runs of 10 steps on `postgresStore` (the database of `scripts/postgres.sh url`, skipped when unreachable) |
 *
 * Steps are tool steps: a 10-step run also has its start, final turn and completion.
 */
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { DEFAULT_POSTGRES_TEST_URL } from '../test/support/postgres-test-database.ts';
import { actorLoop, loopRuntime } from './support/toolwarden-loops.ts';

/** What {@link benchStoreFloor} measured. */
export interface StoreFloor {
  /** CPU µs per step, medians; and SQLite ÷ default, by run length. */
  cpu: Record<number, { defaultUs: number; sqliteUs: number; ratio: number }>;
  walPagesPerStep: number;
  /** Pages a commit writes, by b-tree (table or index name), over the same runs. */
  walPagesPerCommit: Record<string, number>;
  writeBytesPerStep: number;
  /** `synchronous: 'full'`: ms per step. */
  fullSync: { p50Ms: number; p99Ms: number; steps: number };
  /** `synchronous: 'normal'` (the default), the same measure beside it. */
  normalSync: { p50Ms: number; p99Ms: number; steps: number };
  postgresWalBytesPerStep?: number;
}

const median = (values: number[]) => quantile(values, 0.5);
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
}
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Bytes this process has handed to write() and its kin so far (Linux; 0 elsewhere). */
function writtenBytes(): number {
  try {
    return Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function cpuPerStep(loop: () => Promise<void>, steps: number, runs: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = process.cpuUsage();
    await loop();
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / steps);
  }
  return samples;
}

async function cpuRatios(dir: string, rounds: number): Promise<StoreFloor['cpu']> {
  const out: StoreFloor['cpu'] = {};
  for (const steps of [10, 500]) {
    const runs = steps === 10 ? 40 : 2;
    const memory = actorLoop({}, steps);
    const sqlite = actorLoop({ store: sqliteStore({ path: join(dir, `cpu-${steps}.db`) }) }, steps);
    // Warm-up: both compiled and their stores opened.
    await cpuPerStep(memory, steps, Math.max(2, 2000 / steps));
    await cpuPerStep(sqlite, steps, Math.max(2, 2000 / steps));
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < rounds; r++) {
      a.push(...(await cpuPerStep(memory, steps, runs)));
      b.push(...(await cpuPerStep(sqlite, steps, runs)));
    }
    const defaultUs = median(a);
    const sqliteUs = median(b);
    out[steps] = {
      defaultUs: round(defaultUs),
      sqliteUs: round(sqliteUs),
      ratio: round(sqliteUs / defaultUs, 2),
    };
  }
  return out;
}

/** Frames in the WAL of `path` (its size less the 32-byte header, over a frame's size). */
function walFrames(path: string, pageSize: number): number {
  try {
    return Math.max(0, (statSync(`${path}-wal`).size - 32) / (pageSize + 24));
  } catch {
    return 0;
  }
}

/** The WAL's frames of `path` by the b-tree their page belongs to (named through `side`), per commit. */
function pagesPerCommit(
  side: { prepare(sql: string): { all(): unknown[] } },
  path: string,
  pageSize: number,
): Record<string, number> {
  const owners = new Map(
    (side.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]).map(
      (row) => [row.pageno, row.name],
    ),
  );
  const wal = readFileSync(`${path}-wal`);
  const counts: Record<string, number> = {};
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const owner = owners.get(wal.readUInt32BE(at)) ?? 'freed';
    counts[owner] = (counts[owner] ?? 0) + 1;
    if (wal.readUInt32BE(at + 4) > 0) commits++;
  }
  return Object.fromEntries(
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([owner, frames]) => [owner, round(frames / Math.max(1, commits), 2)]),
  );
}

async function walAndWrites(
  dir: string,
): Promise<{ pages: number; byCommit: Record<string, number>; bytes: number }> {
  const path = join(dir, 'wal.db');
  const store = sqliteStore({ path });
  const loop = actorLoop({ store }, 10);
  await loop(); // creates the schema, compiles the code
  const { default: Database } = await import('libsql');
  const side = new Database(path);
  const pageSize = Number((side.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  side.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
  const runs = 6;
  const bytesBefore = writtenBytes();
  for (let i = 0; i < runs; i++) await loop();
  const bytes = writtenBytes() - bytesBefore;
  const pages = walFrames(path, pageSize);
  const byCommit = pagesPerCommit(side, path, pageSize);
  side.close();
  await store.close();
  return { pages: round(pages / (runs * 10), 2), byCommit, bytes: Math.round(bytes / (runs * 10)) };
}

/** Wall ms per step of 10-step runs (between two planner_turn events), on `store`. */
async function stepLatencies(store: RunStore, runs: number): Promise<number[]> {
  const { planner, runtime } = loopRuntime(10, { store });
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) {
    planner.reset();
    const run = runtime.start({ messages: [{ role: 'user', content: 'Add.' }] });
    let last: number | undefined;
    const sub = run.events$.subscribe((event) => {
      if (event.type !== 'planner_turn') return;
      const at = performance.now();
      if (last !== undefined && i > 0) latencies.push(at - last);
      last = at;
    });
    await run.result();
    sub.unsubscribe();
  }
  await runtime.close();
  return latencies;
}

async function postgresWal(url: string): Promise<number | undefined> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  const schema = `tw_floor_${process.pid}`;
  const { postgresStore } = await import('../stores/postgres-store.ts');
  const store = postgresStore({ connectionString: url, schema });
  try {
    const loop = actorLoop({ store }, 10);
    await loop();
    const lsn = async () => String((await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn);
    const runs = 6;
    const before = await lsn();
    for (let i = 0; i < runs; i++) await loop();
    const after = await lsn();
    const diff = await admin.query('SELECT pg_wal_lsn_diff($1, $2) AS bytes', [after, before]);
    return Math.round(Number(diff.rows[0].bytes) / (runs * 10));
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await admin.end();
  }
}

export async function benchStoreFloor(
  options: { rounds?: number; postgres?: boolean; print?: boolean } = {},
): Promise<StoreFloor> {
  const dir = await mkdtemp(join(tmpdir(), 'tw-floor-'));
  try {
    const cpu = await cpuRatios(dir, options.rounds ?? 5);
    const wal = await walAndWrites(dir);
    const full = await stepLatencies(sqliteStore({ path: join(dir, 'full.db'), synchronous: 'full' }), 21);
    const normal = await stepLatencies(sqliteStore({ path: join(dir, 'normal.db') }), 21);
    const url = process.env.TOOLWARDEN_PG_URL || DEFAULT_POSTGRES_TEST_URL;
    const postgresWalBytesPerStep = options.postgres === false ? undefined : await postgresWal(url);
    const result: StoreFloor = {
      cpu,
      walPagesPerStep: wal.pages,
      walPagesPerCommit: wal.byCommit,
      writeBytesPerStep: wal.bytes,
      fullSync: {
        p50Ms: round(quantile(full, 0.5), 2),
        p99Ms: round(quantile(full, 0.99), 2),
        steps: full.length,
      },
      normalSync: {
        p50Ms: round(quantile(normal, 0.5), 2),
        p99Ms: round(quantile(normal, 0.99), 2),
        steps: normal.length,
      },
      ...(postgresWalBytesPerStep === undefined ? {} : { postgresWalBytesPerStep }),
    };
    if (options.print ?? true) print(result);
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function print(r: StoreFloor): void {
  console.log('durable step floor (reference loop; issue 36 item 2)');
  for (const [steps, c] of Object.entries(r.cpu)) {
    console.log(
      `  ${steps.padStart(3)} steps: default ${c.defaultUs} µs/step, SQLite ${c.sqliteUs} µs/step: SQLite ÷ default ${c.ratio}× (target ≤ 2×)`,
    );
  }
  console.log(
    `  SQLite WAL pages per step ${r.walPagesPerStep} (target ≤ 4); bytes to write() per step ${r.writeBytesPerStep} (target ≤ 16,384)`,
  );
  console.log(
    `  SQLite WAL pages per commit, by b-tree: ${Object.entries(r.walPagesPerCommit)
      .map(([owner, pages]) => `${owner} ${pages}`)
      .join(', ')}`,
  );
  console.log(
    `  SQLite per step, synchronous 'full' (fsync a commit): p50 ${r.fullSync.p50Ms} ms, p99 ${r.fullSync.p99Ms} ms; 'normal': p50 ${r.normalSync.p50Ms} ms, p99 ${r.normalSync.p99Ms} ms (${r.fullSync.steps} steps each)`,
  );
  console.log(
    `  PostgreSQL WAL bytes per step: ${r.postgresWalBytesPerStep ?? 'not measured (no database at scripts/postgres.sh url)'}`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '5' },
      'no-postgres': { type: 'boolean', default: false },
      json: { type: 'string' },
    },
  });
  const result = await benchStoreFloor({ rounds: Number(values.rounds), postgres: !values['no-postgres'] });
  if (values.json) await writeFile(values.json, `${JSON.stringify(result, null, 2)}\n`);
}
