/**
 * SIGKILL trials (issue 12 "Show"; docs/durability.md): a worker process runs the crash test's
 * bookkeeping run (`test/support/durable-child.ts`: four idempotent ledger bookings over four
 * turns, a clarification, a tool cap, finalizing) and is killed with SIGKILL at a random moment
 * after its run was first stored (0–250 ms later, `--max-delay`);
 * a fresh process then resumes every unfinished run. Per trial it checks what a crash may not do:
 * lose a booking or a tool result (every call of the transcript answered once, the four bookings
 * summing to 100) or duplicate one (each idempotency key booked once); it counts how often a call
 * in flight ran again (allowed: the key makes it once).
 *
 *     node --import tsx bench/kill-trials.ts --trials 50 --store sqlite
 *     node --import tsx bench/kill-trials.ts --trials 50 --store postgres   # TOOLWARDEN_PG_URL or scripts/postgres.sh's
 *
 * Exits non-zero when any trial lost or duplicated anything.
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Message } from '../run/message.ts';
import { postgresStore } from '../stores/postgres-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import type { ChildConfig } from '../test/support/durable-child.ts';
import { DEFAULT_POSTGRES_TEST_URL } from '../test/support/postgres-test-database.ts';
import { readJsonLines, waitForLine } from '../test/support/worker-output.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '50' },
    store: { type: 'string', default: 'sqlite' },
    'max-delay': { type: 'string', default: '250' },
  },
});
const trials = Number(values.trials);
const usePg = values.store === 'postgres';
const pgUrl = process.env.TOOLWARDEN_PG_URL || DEFAULT_POSTGRES_TEST_URL;
const maxDelayMs = Number(values['max-delay']);
const CHILD = join(import.meta.dirname, '..', 'test', 'support', 'durable-child.ts');

function worker(config: ChildConfig): { child: ChildProcess; lines: string[]; exited: Promise<unknown> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  child
    .stdout!.setEncoding('utf8')
    .on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, lines, exited };
}

interface TrialResult {
  killed: boolean;
  storedState: string;
  lost: number;
  duplicated: number;
  reExecuted: number;
  completed: boolean;
}

async function trial(index: number): Promise<TrialResult> {
  const dir = await mkdtemp(join(tmpdir(), 'tw-kill-'));
  const runId = `trial-${index}`;
  const pg = usePg ? { url: pgUrl, schema: `kill_${process.pid}_${index}` } : undefined;
  const base = { db: join(dir, 'runs.db'), dir, leaseMs: 300, ...(pg ? { pg } : {}) };
  const openStore = (): RunStore =>
    pg ? postgresStore({ connectionString: pg.url, schema: pg.schema }) : sqliteStore({ path: base.db });
  try {
    const start = worker({ mode: 'start', runId, ...base });
    await waitForLine(start.lines, /^STORED$/, start.exited);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * maxDelayMs));
    const killed = !start.lines.some((line) => line.startsWith('FINISHED'));
    start.child.kill('SIGKILL');
    await start.exited;

    let store = openStore();
    const before = await store.load(runId);
    await store.close();
    const storedState = before ? JSON.stringify((before.snapshot as { value: unknown }).value) : 'nothing';

    const resumer = worker({ mode: 'resume-all', ...base });
    await waitForLine(resumer.lines, /^\{"outcomes"/, resumer.exited, 60_000);
    await resumer.exited;

    store = openStore();
    const stored = await store.load(runId);
    await store.close();
    const messages = stored ? (stored.snapshot as { context: { messages: Message[] } }).context.messages : [];
    const called = messages.flatMap((m) =>
      m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.toolCallId) : [],
    );
    const answered = messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
    const ledger = readJsonLines<{ toolCallId: string; amount: number }>(join(dir, 'ledger.jsonl'));
    const attempts = readJsonLines<{ toolCallId: string }>(join(dir, 'attempts.jsonl'));
    const keys = ledger.map((entry) => entry.toolCallId);
    const booked = ledger.reduce((sum, entry) => sum + entry.amount, 0);
    const unanswered = called.filter((id) => !answered.includes(id)).length;
    return {
      killed,
      storedState,
      completed: stored?.status === 'completed',
      // A booking missing from the ledger, or a call whose result the transcript lacks.
      lost: Math.max(0, 4 - new Set(keys).size) + unanswered + (stored?.status === 'completed' ? 0 : 1),
      duplicated:
        keys.length -
        new Set(keys).size +
        (booked > 100 ? 1 : 0) +
        (answered.length - new Set(answered).size),
      reExecuted: attempts.length - new Set(attempts.map((a) => a.toolCallId)).size,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    if (pg) {
      const { Client } = await import('pg');
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${pg.schema}" CASCADE`);
      await client.end();
    }
  }
}

const results: TrialResult[] = [];
for (let i = 1; i <= trials; i++) {
  results.push(await trial(i));
  process.stdout.write(`\r${values.store}: trial ${i}/${trials}`);
}
const sum = (key: 'lost' | 'duplicated' | 'reExecuted') => results.reduce((total, r) => total + r[key], 0);
const states = new Map<string, number>();
for (const r of results.filter((r) => r.killed))
  states.set(r.storedState, (states.get(r.storedState) ?? 0) + 1);
console.log(
  `\n${values.store}: ${trials} trials, ${results.filter((r) => r.killed).length} killed mid-run, ` +
    `${results.filter((r) => r.completed).length} completed after resume; lost ${sum('lost')}, ` +
    `duplicated ${sum('duplicated')}; calls in flight run again (once by their key): ${sum('reExecuted')}`,
);
console.log(`killed while the store held: ${[...states].map(([state, n]) => `${state} ×${n}`).join(', ')}`);
if (sum('lost') > 0 || sum('duplicated') > 0) process.exitCode = 1;
