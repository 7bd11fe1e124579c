import { copyFileSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import type { RunEventRecord, RunStore, StoredRun } from '../stores/run-store.ts';
import { RunLeasedError, StaleRunVersionError } from '../stores/run-store-errors.ts';
import { SQLITE_SCHEMA_VERSION, sqliteStore } from '../stores/sqlite-store.ts';
import {
  createLedger,
  FIXTURE_AGENT,
  FIXTURE_RUNS,
  FIXTURE_TIME_BUDGET_MS,
  fixturePlanner,
  fixtureTools,
} from './fixtures/releases/scenario.ts';

/**
 * Schema 8 (issue 36 item 2: run heads apart from run rows, stores/sqlite-heads.ts) converts the
 * files schema 6 wrote (test/fixtures/sqlite-schema-6/, made by the schema-6 code at commit
 * 18286a8): `store.db` through the RunStore API (generate-store.ts, with what that store read
 * back in `store.json`), `runs.db` with the release scenario's four runs (three waiting for an
 * answer, one mid-step; test/fixtures/releases/0.1.0/generate.ts's SQLite part run at that commit).
 */

const FIXTURES = new URL('./fixtures/sqlite-schema-6/', import.meta.url);
/** The schema-6 store's clock when it wrote `store.db` (generate-store.ts), ms. */
const WRITTEN_AT = 1_800_000_000_000;

interface StoreRead {
  list: string[];
  runs: Record<string, { run: StoredRun; events: RunEventRecord[] }>;
  awaiting: string[];
  session: string[];
}

let dir: string;
const stores: RunStore[] = [];
const runtimes: Runtime[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tw-schema8-'));
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the fixture `name`, opened by this code (which migrates it on first use). */
function openCopy(name: string, now?: () => number): { store: RunStore; path: string } {
  const path = join(dir, name);
  copyFileSync(new URL(name, FIXTURES), path);
  const store = sqliteStore({ path, ...(now === undefined ? {} : { now }) });
  stores.push(store);
  return { store, path };
}

async function schemaVersions(path: string): Promise<number[]> {
  const db = createClient({ url: `file:${path}` });
  try {
    const rows = await db.execute('SELECT version FROM toolwarden_schema_migrations ORDER BY version');
    return rows.rows.map((row) => Number(row.version));
  } finally {
    db.close();
  }
}

describe('SQLite schema 8 migration', () => {
  it('reads every run of a schema-6 file as the schema-6 store did: snapshot, version, owner, events, write order, filters', async () => {
    const read = JSON.parse(readFileSync(new URL('store.json', FIXTURES), 'utf8')) as StoreRead;
    const { store, path } = openCopy('store.db', () => WRITTEN_AT + 60_000);
    expect((await store.list()).map((run) => run.runId)).toEqual(read.list);
    for (const [runId, { run, events }] of Object.entries(read.runs)) {
      expect(await store.load(runId), runId).toEqual(run);
      expect(await store.readEvents(runId), runId).toEqual(events);
    }
    expect((await store.list({ status: 'awaiting' })).map((run) => run.runId)).toEqual(read.awaiting);
    expect((await store.list({ sessionId: 'session-1' })).map((run) => run.runId)).toEqual(read.session);
    expect((await store.list({ limit: 2 })).map((run) => run.runId)).toEqual(read.list.slice(0, 2));
    expect(await store.load('gone')).toBeUndefined();
    expect((await schemaVersions(path)).at(-1)).toBe(SQLITE_SCHEMA_VERSION);
  });

  it('goes on writing the migrated runs: versions checked, events numbered on, leases kept, write order moved', async () => {
    const read = JSON.parse(readFileSync(new URL('store.json', FIXTURES), 'utf8')) as StoreRead;
    // Within the leases the schema-6 store's owners took (60 s from WRITTEN_AT).
    const { store } = openCopy('store.db', () => WRITTEN_AT + 30_000);
    const mid = read.runs['mid-step']!;
    const stale = store.save('mid-step', {
      expectedVersion: mid.run.version - 1,
      status: 'running',
      snapshot: mid.run.snapshot,
    });
    await expect(stale).rejects.toThrow(StaleRunVersionError);
    await expect(stale).rejects.toMatchObject({ actualVersion: mid.run.version });
    await expect(store.claim!('mid-step', 'someone-else')).rejects.toThrow(RunLeasedError);

    const snapshot = mid.run.snapshot as { context: { messages: unknown[] } };
    const next = {
      ...snapshot,
      context: {
        ...snapshot.context,
        messages: [...snapshot.context.messages, { role: 'tool', content: 'new' }],
      },
    };
    const saved = await store.save('mid-step', {
      expectedVersion: mid.run.version,
      status: 'awaiting',
      snapshot: next,
      events: [{ event: { type: 'after_migration' }, at: 1 }],
    });
    expect(saved).toMatchObject({
      version: mid.run.version + 1,
      owner: 'old-owner',
      labels: { tenant: 'acme' },
    });
    await store.appendEvents('mid-step', [{ event: { type: 'appended' }, at: 2 }]);
    const events = await store.readEvents('mid-step');
    const last = mid.events.at(-1)!.seq;
    expect(events.slice(-2).map((e) => [e.seq, (e.event as { type: string }).type])).toEqual([
      [last + 1, 'after_migration'],
      [last + 2, 'appended'],
    ]);
    expect((await store.load('mid-step'))?.snapshot).toEqual(next);
    // Saved last: listed first, and among the waiting runs now.
    expect((await store.list()).map((run) => run.runId)).toEqual([
      'mid-step',
      ...read.list.filter((id) => id !== 'mid-step'),
    ]);
    expect((await store.list({ status: 'awaiting' })).map((run) => run.runId)).toEqual([
      'mid-step',
      ...read.awaiting,
    ]);

    // The claim of schema 6's second owner holds; its own claim again advances the version.
    const plain = read.runs.plain!.run;
    const claimed = await store.claim!('plain', 'new-owner');
    expect(claimed).toMatchObject({
      version: plain.version + 1,
      owner: 'new-owner',
      snapshot: plain.snapshot,
    });
    expect(await store.delete('done')).toBe(true);
    expect(await store.load('done')).toBeUndefined();
    expect(await store.readEvents('done')).toEqual([]);
  });

  it("completes the release scenario's runs a schema-6 file left waiting and mid-step, each tool effect once", async () => {
    const { store, path } = openCopy('runs.db');
    const ledger = createLedger();
    const runtime = createRuntime({
      agent: FIXTURE_AGENT,
      telemetry: false,
      store,
      tools: fixtureTools(ledger),
      planner: fixturePlanner(),
      caps: { timeBudgetMs: FIXTURE_TIME_BUDGET_MS },
      durable: { owner: 'schema-8' },
    });
    runtimes.push(runtime);
    const listed = new Map((await runtime.list()).map((run) => [run.runId, run]));
    expect((await schemaVersions(path)).at(-1)).toBe(SQLITE_SCHEMA_VERSION);
    expect(listed.get(FIXTURE_RUNS.midstep.runId)).toMatchObject({ status: 'running', awaiting: null });
    const confirmation = listed.get(FIXTURE_RUNS.confirmation.runId)?.awaiting as { id: string };
    const external = listed.get(FIXTURE_RUNS.external.runId)?.awaiting as {
      calls: { toolCallId: string }[];
    };
    expect(listed.get(FIXTURE_RUNS.clarification.runId)?.awaiting).toMatchObject({ kind: 'clarification' });

    const recovered = await runtime.recover();
    expect(recovered.recovered.map((run) => run.runId)).toEqual([FIXTURE_RUNS.midstep.runId]);
    // The charge was in flight when schema 6's process stopped, and its tool is not idempotent:
    // the run waits in doubt (docs/durability.md §Effects); it did not happen, so it runs now.
    const midstep = recovered.recovered[0]!;
    await vi.waitFor(() => expect(midstep.awaiting).toMatchObject({ kind: 'in_doubt' }), { timeout: 5_000 });
    const [inDoubt] = (midstep.awaiting as { calls: { toolCallId: string }[] }).calls;
    await runtime.resolveInDoubt(midstep.runId, { [inDoubt!.toolCallId]: { status: 'not_done' } });
    const handles = [
      await runtime.provideClarification(FIXTURE_RUNS.clarification.runId, {
        id: 'which-plan',
        answer: 'pro',
      }),
      await runtime.confirm(FIXTURE_RUNS.confirmation.runId, {
        id: confirmation.id,
        approved: true,
        by: 'ops',
      }),
      await runtime.provideToolResults(FIXTURE_RUNS.external.runId, [
        { toolCallId: external.calls[0]!.toolCallId, result: { sent: true } },
      ]),
      midstep,
    ];
    const outcomes = await Promise.all(handles.map((handle) => handle.result()));
    expect(outcomes.map((outcome) => [outcome.status, outcome.finalResponse?.text])).toEqual(
      [
        FIXTURE_RUNS.clarification,
        FIXTURE_RUNS.confirmation,
        FIXTURE_RUNS.external,
        FIXTURE_RUNS.midstep,
      ].map((run) => ['completed', `Done: ${run.prompt}`]),
    );
    expect(ledger.calls.sort()).toEqual([
      'fixture-clarification:t2:c1',
      'fixture-confirmation:t1:c1',
      'fixture-midstep:t1:c1',
    ]);
    expect([...ledger.charges]).toEqual([
      ['fixture-midstep:t1:c1', { email: 'lin@example.com', cents: 4200 }],
    ]);
    for (const { runId } of Object.values(FIXTURE_RUNS)) {
      expect((await store.load(runId))?.status, runId).toBe('completed');
    }
  });
});
