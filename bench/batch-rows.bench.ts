/**
 * `node --import tsx bench/batch-rows.bench.ts [--calls 10000]`: what a SQLite store writes for
 * one planner answer of N admitted tool calls (issue 36 item 5, docs/benchmarks.md §Large
 * batches, third pass). After each save the database is read (a second, read-only connection):
 * the snapshot head's size (`toolwarden_run_heads` since schema 8, the runs table's `snapshot`
 * before) and the log's values' total, so a save's bytes are its snapshot head plus the values it
 * added to the log (events and snapshot member rows; SQLite's own page overhead not counted).
 * Reported: the head's size while the batch runs, the bytes a save of the batch writes (median,
 * max), the batch's first save, and the run's total.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'libsql';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { batchRuntime } from './batch-stall.bench.ts';

/** Bytes, per the module docstring. */
export interface BatchRowBytes {
  calls: number;
  saves: number;
  headBytes: { min: number; max: number };
  saveBytes: { median: number; max: number };
  firstSaveBytes: number;
  totalBytes: number;
}

export async function benchBatchRows(calls: number): Promise<BatchRowBytes> {
  const dir = await mkdtemp(join(tmpdir(), 'tw-batch-rows-'));
  const path = join(dir, 'runs.db');
  const inner = sqliteStore({ path });
  let reader: InstanceType<typeof Database> | undefined;
  const saves: { head: number; log: number; executing: boolean }[] = [];
  const store: RunStore = {
    ...inner,
    async save(runId, update) {
      const saved = await inner.save(runId, update);
      reader ??= new Database(path, { readonly: true });
      const head = reader
        .prepare('SELECT coalesce(sum(length(snapshot)), 0) AS n FROM toolwarden_run_heads')
        .get() as {
        n: number;
      };
      const log = reader
        .prepare('SELECT coalesce(sum(length(value)), 0) AS n FROM toolwarden_run_log')
        .get() as {
        n: number;
      };
      saves.push({
        head: head.n,
        log: log.n,
        executing: (update.snapshot as { value?: unknown }).value === 'executing',
      });
      return saved;
    },
  };
  const runtime = batchRuntime(calls, true, store);
  await runtime.start({ messages: [{ role: 'user', content: 'go' }] }).result();
  await runtime.close();
  reader?.close();
  await rm(dir, { recursive: true, force: true });
  let before = 0;
  const written = saves.map(({ head, log }) => {
    const bytes = head + log - before;
    before = log;
    return bytes;
  });
  const batch = saves.flatMap((save, i) => (save.executing ? [{ head: save.head, bytes: written[i]! }] : []));
  const later = batch
    .slice(1)
    .map(({ bytes }) => bytes)
    .sort((a, b) => a - b);
  return {
    calls,
    saves: saves.length,
    headBytes: {
      min: Math.min(...batch.map(({ head }) => head)),
      max: Math.max(...batch.map(({ head }) => head)),
    },
    saveBytes: { median: later[later.length >> 1] ?? 0, max: later[later.length - 1] ?? 0 },
    firstSaveBytes: batch[0]?.bytes ?? 0,
    totalBytes: written.reduce((sum, bytes) => sum + bytes, 0),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '10000' } } });
  const r = await benchBatchRows(Number(values.calls));
  console.log(
    `one planner answer of ${r.calls} admitted calls, SQLite, ${r.saves} saves: snapshot row during the batch ${r.headBytes.min}–${r.headBytes.max} bytes; a save of the batch writes median ${r.saveBytes.median}, max ${r.saveBytes.max} bytes; its first save ${r.firstSaveBytes}; the run ${r.totalBytes} bytes in all`,
  );
}
