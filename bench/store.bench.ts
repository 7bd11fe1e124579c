/**
 * What persisting a run costs per step (docs/durability.md): the median time of one `save` of a ~6 KB
 * snapshot (the size of a run a few turns in) and of one `load`, for the memory store and the
 * SQLite store on a temporary file (WAL, default durability: every save is a committed
 * transaction).
 *
 *     node --import tsx bench/store.bench.ts
 *
 * `benchStores()` is also what `npm run bench` calls; it prints a table and returns the numbers.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { memoryStore } from '../stores/memory-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';

export interface StoreBenchOptions {
  /** Measured saves (after warm-up). Default 500. */
  saves?: number;
  /** Measured loads (after warm-up). Default 500. */
  loads?: number;
  /** Print the table to stdout. Default true. */
  print?: boolean;
}

export interface StoreBenchResult {
  store: 'memory' | 'sqlite';
  /** Bytes of the snapshot's JSON text. */
  snapshotBytes: number;
  saves: number;
  /** Microseconds per `save` call. */
  saveMedianUs: number;
  saveP95Us: number;
  loads: number;
  /** Microseconds per `load` call. */
  loadMedianUs: number;
  loadP95Us: number;
}

const WARM_UP = 50;

/** Runs the benchmark for the memory and SQLite stores. */
export async function benchStores(options: StoreBenchOptions = {}): Promise<StoreBenchResult[]> {
  const saves = options.saves ?? 500;
  const loads = options.loads ?? 500;
  const results: StoreBenchResult[] = [];

  results.push(await benchStore('memory', memoryStore(), saves, loads));

  const dir = await mkdtemp(join(tmpdir(), 'toolwarden-bench-'));
  try {
    results.push(await benchStore('sqlite', sqliteStore({ path: join(dir, 'runs.db') }), saves, loads));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  if (options.print ?? true) printTable(results);
  return results;
}

async function benchStore(
  name: StoreBenchResult['store'],
  store: RunStore,
  saves: number,
  loads: number,
): Promise<StoreBenchResult> {
  try {
    await store.create({
      runId: 'bench-run',
      agentId: 'support',
      status: 'running',
      snapshot: runSnapshot(0),
    });
    let version = 1;
    const saveTimes: number[] = [];
    for (let i = 1; i <= WARM_UP + saves; i++) {
      const snapshot = runSnapshot(i);
      const started = performance.now();
      await store.save('bench-run', { expectedVersion: version, status: 'running', snapshot });
      const elapsed = performance.now() - started;
      version++;
      if (i > WARM_UP) saveTimes.push(elapsed);
    }
    const loadTimes: number[] = [];
    for (let i = 1; i <= WARM_UP + loads; i++) {
      const started = performance.now();
      await store.load('bench-run');
      const elapsed = performance.now() - started;
      if (i > WARM_UP) loadTimes.push(elapsed);
    }
    return {
      store: name,
      snapshotBytes: JSON.stringify(runSnapshot(1)).length,
      saves,
      saveMedianUs: quantileUs(saveTimes, 0.5),
      saveP95Us: quantileUs(saveTimes, 0.95),
      loads,
      loadMedianUs: quantileUs(loadTimes, 0.5),
      loadP95Us: quantileUs(loadTimes, 0.95),
    };
  } finally {
    await store.close();
  }
}

/** A persisted run snapshot of about 6 KB, shaped like XState's, a few turns into a run. */
function runSnapshot(turn: number): unknown {
  const messages = [
    { role: 'system', content: 'You are the support agent. Use the CRM tools to manage customer profiles.' },
    { role: 'user', content: 'Add ada@example.com as a pro customer and tell me her account id.' },
  ];
  for (let i = 0; i < 8; i++) {
    messages.push({
      role: 'assistant',
      content: JSON.stringify({
        toolCalls: [
          {
            name: 'crm.upsert_profile',
            toolCallId: `call-${i}`,
            input: { email: 'ada@example.com', plan: 'pro' },
          },
        ],
      }),
    });
    messages.push({
      role: 'tool',
      content: JSON.stringify({
        name: 'crm.upsert_profile',
        toolCallId: `call-${i}`,
        executed: true,
        result: { id: `cus_${i}`, notes: 'profile updated; plan changed from free to pro. '.repeat(7) },
        telemetry: { durationMs: 12.5 + i },
      }),
    });
  }
  return {
    status: 'active',
    value: 'planning',
    historyValue: {},
    children: {},
    context: {
      runId: 'bench-run',
      agentId: 'support',
      turn,
      messages,
      caps: { maxToolCalls: 20, remainingToolCalls: 20 - (turn % 20), maxConsecutiveFailedToolCalls: 3 },
      tools: { 'crm.upsert_profile': { enabled: true, calls: turn, failures: 0 } },
      deadlineAt: 1_768_469_400_000 + turn,
      labels: { tenant: 'acme', channel: 'web' },
    },
  };
}

function quantileUs(samplesMs: number[], q: number): number {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.floor(q * sorted.length));
  return Math.round((sorted[index] ?? Number.NaN) * 1000 * 10) / 10;
}

function printTable(results: StoreBenchResult[]): void {
  const header = [
    'store',
    'snapshot',
    'saves',
    'save median µs',
    'save p95 µs',
    'load median µs',
    'load p95 µs',
  ];
  const rows = results.map((r) => [
    r.store,
    `${(r.snapshotBytes / 1024).toFixed(1)} KB`,
    String(r.saves),
    r.saveMedianUs.toFixed(1),
    r.saveP95Us.toFixed(1),
    r.loadMedianUs.toFixed(1),
    r.loadP95Us.toFixed(1),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) => cells.map((cell, column) => cell.padStart(widths[column]!)).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchStores();
}
