import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanResult } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { memoryStore } from '../stores/memory-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import type { RecoverChildConfig, RecoverReport } from './support/recover-child.ts';
import { spawnWorker, waitForLine } from './support/worker-output.ts';

/**
 * Recovery after a crash (issue 28 item 2, docs/durability.md §Recovery): a process with 20 runs
 * mid-flight on a SQLite file is killed with SIGKILL; a new process created with
 * `durable: { recover }` (and no code of its own that lists or resumes runs) completes all 20.
 */

const CHILD = join(import.meta.dirname, 'support', 'recover-child.ts');
const RUNS = 20;

const worker = (config: RecoverChildConfig) => spawnWorker(CHILD, config);

/** Starts RUNS runs under `owner`, kills the process with SIGKILL once all are executing. */
async function crashWithRunsInFlight(db: string, owner: string): Promise<void> {
  const started = worker({ mode: 'start', db, owner, runs: RUNS, leaseMs: 1000 });
  await waitForLine(started.lines, /^READY$/, started.exited, 60_000);
  started.child.kill('SIGKILL');
  expect(await started.exited).toBe('SIGKILL');
}

async function unfinishedIn(db: string): Promise<number> {
  const store = sqliteStore({ path: db });
  try {
    return (await store.list({ status: ['running', 'awaiting'] })).length;
  } finally {
    await store.close();
  }
}

async function recoverIn(config: RecoverChildConfig): Promise<RecoverReport> {
  const recovering = worker(config);
  const line = await waitForLine(recovering.lines, /^\{/, recovering.exited, 90_000);
  await recovering.exited;
  return JSON.parse(line) as RecoverReport;
}

describe('kill -9 with 20 runs in flight, then a new process with durable.recover', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-recover-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a restart under the same owner (recover: true) completes all 20 once the crashed instance's lease lapsed", async () => {
    const db = join(dir, 'same-owner.db');
    await crashWithRunsInFlight(db, 'pod-a');
    expect(await unfinishedIn(db)).toBe(RUNS);

    const report = await recoverIn({ mode: 'recover', db, owner: 'pod-a' });

    expect(report.recovered).toHaveLength(RUNS);
    expect(report.recovered.every((run) => run.status === 'completed' && run.text === '4 steps done')).toBe(
      true,
    );
    expect(new Set(report.recovered.map((run) => run.runId)).size).toBe(RUNS);
    expect(await unfinishedIn(db)).toBe(0);
  }, 120_000);

  it("a new owner with takeover: 'lapsed' takes all 20 once the dead owner's lease ran out", async () => {
    const db = join(dir, 'takeover.db');
    await crashWithRunsInFlight(db, 'pod-a');
    expect(await unfinishedIn(db)).toBe(RUNS);

    const report = await recoverIn({ mode: 'recover', db, owner: 'pod-b', takeover: true });

    expect(report.recovered).toHaveLength(RUNS);
    expect(report.recovered.every((run) => run.status === 'completed')).toBe(true);
    expect(await unfinishedIn(db)).toBe(0);
  }, 120_000);
});

describe('runtime.recover() leaves runs of a live owner alone', () => {
  /** A planner that never answers: the run stays `planning`, held by its runtime. */
  const hanging = {
    planStart: () => new Promise<PlanResult>(() => {}),
    planResume: () => new Promise<PlanResult>(() => {}),
  };

  const runtimeOf = (store: RunStore, owner: string) =>
    createRuntime({ agent: { id: 'x' }, planner: hanging, store, telemetry: false, durable: { owner } });

  it('reports them as held (with the lease end under takeover) and recovers nothing', async () => {
    const store = memoryStore();
    const a = runtimeOf(store, 'a');
    const b = runtimeOf(store, 'b');
    const run = a.start({ runId: 'held-1', messages: [{ role: 'user', content: 'hi' }] });
    await run.persisted();

    const plain = await b.recover();
    expect(plain.recovered).toEqual([]);
    expect(plain.held).toEqual([{ runId: 'held-1', owner: 'a', instance: a.instance }]);

    const takeover = await b.recover({ takeover: 'lapsed' });
    expect(takeover.recovered).toEqual([]);
    expect(takeover.held).toHaveLength(1);
    expect(takeover.held[0]).toMatchObject({ runId: 'held-1', owner: 'a', instance: a.instance });
    expect(takeover.held[0]?.leaseUntil).toBeGreaterThan(Date.now());

    await b.close();
    await a.close();
  });

  it('recovers the runs a cleanly closed runtime released, on the same store', async () => {
    const store = memoryStore();
    const a = runtimeOf(store, 'a');
    a.start({ runId: 'released-1', messages: [{ role: 'user', content: 'hi' }] });
    await a.flush();
    await a.close();
    const b = runtimeOf(store, 'b');

    const { recovered, held } = await b.recover();

    expect(recovered.map((handle) => handle.runId)).toEqual(['released-1']);
    expect(held).toEqual([]);
    expect(b.get('released-1')).toBe(recovered[0]);
    await b.close();
  });
});
