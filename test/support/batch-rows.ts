import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import pg from 'pg';
import { afterEach, describe, expect, vi } from 'vitest';
import { z } from 'zod';
import type { Message } from '../../run/message.ts';
import type { Planner, PlanResult } from '../../run/planner.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../runtime/create-runtime.ts';
import { postgresStore } from '../../stores/postgres-store.ts';
import type { RunStore } from '../../stores/run-store.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { postgresTestGate } from './durable-stores.ts';
import { dropSchema, uniqueSchemaName } from './postgres-test-database.ts';

/**
 * What test/batch-rows.test.ts and test/batch-rows-kill.test.ts share (issue 36 item 5): the SQL
 * stores as fixtures that can also say what their database holds, the batch's tool and planner,
 * and the run finished by a new runtime.
 *
 * @module
 */

/** The batch's size: every run of these tests is one planner answer of this many lookups. */
export const CALLS = 2_000;

/** Where a child process finds the database (test/support/batch-kill-child.ts). */
export interface ChildStore {
  store: 'sqlite' | 'postgres';
  /** SQLite: the file. */
  db?: string;
  /** PostgreSQL: the database and the schema. */
  url?: string;
  schema?: string;
}

/** What the test reads of a store's database after a save: the snapshot row and the batch's rows. */
export interface Probe {
  headBytes: number;
  /** Rows by member (`pending`, `results`, …). */
  rows: Record<string, number>;
}

export interface SqlKind {
  name: 'sqlite' | 'postgres';
  skip?: string;
  require(): void;
  fixture(): Promise<{
    open(): RunStore;
    probe(runId: string): Promise<Probe>;
    /** The database as a child process opens it. */
    child: ChildStore;
    dispose(): Promise<void>;
  }>;
}

/** The SQLite (temporary file) and PostgreSQL (own schema, gated: durable-stores.ts) fixtures. */
export async function batchRowKinds(suite: string): Promise<SqlKind[]> {
  const postgres = await postgresTestGate(suite);
  return [
    {
      name: 'sqlite',
      require() {},
      async fixture() {
        const dir = await mkdtemp(join(tmpdir(), 'toolwarden-batch-rows-'));
        const path = join(dir, 'runs.db');
        const opened: RunStore[] = [];
        const db = createClient({ url: `file:${path}` });
        const members = ['messages', 'hints', 'pending', 'results', 'lastResults', 'newResults'];
        return {
          child: { store: 'sqlite', db: path },
          open() {
            const store = sqliteStore({ path });
            opened.push(store);
            return store;
          },
          async probe(runId) {
            const head = await db.execute({
              sql: `SELECT length(h.snapshot) AS bytes, r.log_key FROM toolwarden_runs r
              JOIN toolwarden_run_heads h ON h.run_id = r.run_id WHERE r.run_id = ?`,
              args: [runId],
            });
            const key = Number(head.rows[0]?.log_key);
            const counts = await db.execute({
              sql: 'SELECT kind, count(*) AS n FROM toolwarden_run_log WHERE id BETWEEN ? AND ? AND kind > 0 GROUP BY kind',
              args: [key * 2 ** 32, key * 2 ** 32 + 2 ** 32 - 1],
            });
            const rows: Record<string, number> = {};
            for (const row of counts.rows) rows[members[Number(row.kind) - 1]!] = Number(row.n);
            return { headBytes: Number(head.rows[0]?.bytes), rows };
          },
          async dispose() {
            db.close();
            await Promise.all(opened.map((store) => store.close()));
            await rm(dir, { recursive: true, force: true });
          },
        };
      },
    },
    {
      name: 'postgres',
      ...(postgres.skip === undefined ? {} : { skip: postgres.skip }),
      require() {
        if (!postgres.database.reachable) throw new Error(postgres.database.failMessage);
      },
      async fixture() {
        const schema = uniqueSchemaName('tw_batch_rows');
        const opened: RunStore[] = [];
        const admin = new pg.Pool({ connectionString: postgres.database.url, max: 1 });
        return {
          child: { store: 'postgres', url: postgres.database.url, schema },
          open() {
            const store = postgresStore({ connectionString: postgres.database.url, schema });
            opened.push(store);
            return store;
          },
          async probe(runId) {
            const head = await admin.query(
              `SELECT length(snapshot::text) AS bytes FROM "${schema}".runs WHERE run_id = $1`,
              [runId],
            );
            const counts = await admin.query(
              `SELECT member, count(*)::integer AS n FROM "${schema}".run_rows WHERE run_id = $1 GROUP BY member`,
              [runId],
            );
            const rows: Record<string, number> = {};
            for (const row of counts.rows) rows[row.member] = row.n;
            return { headBytes: Number(head.rows[0]?.bytes), rows };
          },
          async dispose() {
            await admin.end();
            await Promise.all(opened.map((store) => store.close()));
            await dropSchema(postgres.database.url, schema);
          },
        };
      },
    },
  ];
}

/** The batch's tool: `crm.lookup { n }` answers `{ customer: 'customer-<n>' }` once `wait(n)` settles. */
export function lookupTool(wait: (n: number) => Promise<void> | undefined) {
  return defineTool({
    id: 'crm.lookup',
    description: 'Look a customer up',
    input: z.object({ n: z.number().int() }),
    output: z.object({ customer: z.string() }),
    // Runs again after a crash (docs/durability.md §Effects).
    readOnly: true,
    execute: async ({ n }) => {
      await wait(n);
      return { customer: `customer-${n}` };
    },
  });
}

/**
 * A lookup tool whose calls finish only when the test lets them: `finishRandom(count, seed)`
 * ends `count` calls, each picked at random among those running (the runtime runs up to
 * MAX_PARALLEL_TOOL_CALLS at once, so results land out of order); `all()` lets every call,
 * running or to come, finish at once.
 */
export function gatedLookup() {
  const running = new Map<number, () => void>();
  const finished: number[] = [];
  const ran: number[] = [];
  let open = false;
  const tool = lookupTool(async (n) => {
    if (!open) await new Promise<void>((resolve) => running.set(n, resolve));
    ran.push(n);
  });
  return {
    tool,
    finished,
    ran,
    /** Ends `count` running calls picked at random, waiting for calls to start; `between` runs after each. */
    async finishRandom(count: number, seed: number, between: (i: number) => Promise<void>) {
      const random = mulberry32(seed);
      for (let i = 0; i < count; i++) {
        await vi.waitFor(() => expect(running.size).toBeGreaterThan(0), { timeout: 10_000, interval: 1 });
        const ns = [...running.keys()];
        const n = ns[Math.floor(random() * ns.length)]!;
        running.get(n)!();
        running.delete(n);
        finished.push(n);
        await between(i);
      }
    },
    all() {
      open = true;
      for (const resolve of running.values()) resolve();
      running.clear();
    },
  };
}

/** Plans the batch of CALLS lookups, then answers once the results are in the transcript. */
export function batchPlanner(): Planner {
  const decide = async (input: { messages: readonly Message[] }): Promise<PlanResult> => {
    const last = input.messages[input.messages.length - 1] as Message;
    if (last.role === 'tool') return { finalResponse: { text: 'Looked every customer up.' } };
    return { toolCalls: Array.from({ length: CALLS }, (_, n) => ({ name: 'crm.lookup', input: { n } })) };
  };
  return { planStart: decide, planResume: decide };
}

/** A seeded random number generator (mulberry32), so a failure replays. */
export function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type BatchContext = {
  batch: {
    pending: { toolCallId: string; input: { n: number } }[];
    results: ({ toolCallId: string; result?: unknown } | null)[];
  };
  messages: Message[];
};
export const contextOf = (snapshot: unknown) => (snapshot as { context: BatchContext }).context;

/** A fixture of {@link SqlKind}: a fresh database. */
export type BatchFixture = Awaited<ReturnType<SqlKind['fixture']>>;

/** What a test of {@link describeOnSqlStores} gets. */
export interface BatchScope {
  kind: SqlKind;
  /** A fresh database (the store required: PostgreSQL under CI=true), disposed after the test. */
  fixture(): Promise<BatchFixture>;
  /** A runtime of the batch's planner, caps raised to CALLS, closed after the test. */
  runtime(options: Pick<RuntimeOptions, 'tools' | 'store'> & Partial<RuntimeOptions>): Runtime;
  /** Runs `dispose` after the test (after the runtimes are closed). */
  disposeAfter(dispose: () => Promise<void>): void;
}

/** `define`'s tests, once per store of `kinds` (each skipped with its reason when it is). */
export function describeOnSqlStores(kinds: SqlKind[], define: (scope: BatchScope) => void): void {
  for (const kind of kinds) {
    describe.skipIf(kind.skip !== undefined)(`a ${CALLS}-call batch on the ${kind.name} store`, () => {
      const runtimes: Runtime[] = [];
      const disposals: (() => Promise<void>)[] = [];
      afterEach(async () => {
        await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
        for (const dispose of disposals.splice(0)) await dispose();
      });
      define({
        kind,
        async fixture() {
          kind.require();
          const fixture = await kind.fixture();
          disposals.push(fixture.dispose);
          return fixture;
        },
        runtime(options) {
          const runtime = createRuntime({
            agent: { id: 'batch-rows' },
            planner: batchPlanner(),
            telemetry: false,
            caps: { maxToolCalls: CALLS, maxCallsPerBatch: CALLS },
            ...options,
          });
          runtimes.push(runtime);
          return runtime;
        },
        disposeAfter(dispose) {
          disposals.push(dispose);
        },
      });
    });
  }
}

/**
 * Recovers the stored run `runId` on a new runtime (owner `pod-a`, as the process it takes over
 * from) whose lookups finish at once, and waits for it to end: what its tool ran, the outcome,
 * and the stored context after.
 */
export async function finishOnNewRuntime(
  scope: BatchScope,
  store: RunStore,
  runId: string,
): Promise<{ ran: number[]; status: string; context: BatchContext }> {
  const lookup = gatedLookup();
  lookup.all();
  const runtime = scope.runtime({ tools: [lookup.tool], store, durable: { owner: 'pod-a', leaseMs: 5_000 } });
  const { recovered } = await runtime.recover();
  expect(recovered.map((handle) => handle.runId)).toEqual([runId]);
  const { status } = await recovered[0]!.result();
  const context = contextOf((await store.load(runId))?.snapshot);
  return { ran: lookup.ran.slice().sort((a, b) => a - b), status, context };
}

/** Each call's answer, in call order: what the transcript of a finished batch holds. */
export const allAnswers = () => Array.from({ length: CALLS }, (_, n) => ({ customer: `customer-${n}` }));

/** The tool messages' contents of a transcript. */
export const answersOf = (context: BatchContext) =>
  context.messages
    .filter((message) => message.role === 'tool')
    .map((message) => (message as { content: unknown }).content);
