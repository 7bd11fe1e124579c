import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Message } from '../run/message.ts';
import type { Planner, PlanResult } from '../run/planner.ts';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import { postgresStore } from '../stores/postgres-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { flakyStore, postgresTestGate } from './support/durable-stores.ts';
import { dropSchema, uniqueSchemaName } from './support/postgres-test-database.ts';

/**
 * A batch's calls and results kept as rows in the SQL stores (issue 36 item 5, docs/durability.md
 * §Appended rows): a run executing a 2,000-call batch writes per save only the results that landed
 * since the save before, and a run taken over mid-batch restores with exactly the results done
 * so far, running only the others.
 */

const CALLS = 2_000;

/** What the test reads of a store's database after a save: the snapshot row and the batch's rows. */
interface Probe {
  headBytes: number;
  /** Rows by member (`pending`, `results`, …). */
  rows: Record<string, number>;
}

interface SqlKind {
  name: 'sqlite' | 'postgres';
  skip?: string;
  require(): void;
  fixture(): Promise<{ open(): RunStore; probe(runId: string): Promise<Probe>; dispose(): Promise<void> }>;
}

const postgres = await postgresTestGate('batch rows (PostgreSQL)');

const kinds: SqlKind[] = [
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

/**
 * A lookup tool whose calls finish only when the test lets them: `finishRandom(count, seed)`
 * ends `count` calls, each picked at random among those running (the runtime runs up to
 * MAX_PARALLEL_TOOL_CALLS at once, so results land out of order); `all()` lets every call,
 * running or to come, finish at once.
 */
function gatedLookup() {
  const running = new Map<number, () => void>();
  const finished: number[] = [];
  const ran: number[] = [];
  let open = false;
  const tool = defineTool({
    id: 'crm.lookup',
    description: 'Look a customer up',
    input: z.object({ n: z.number().int() }),
    output: z.object({ customer: z.string() }),
    readOnly: true,
    execute: async ({ n }) => {
      if (!open) await new Promise<void>((resolve) => running.set(n, resolve));
      ran.push(n);
      return { customer: `customer-${n}` };
    },
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
function batchPlanner(): Planner {
  const decide = async (input: { messages: readonly Message[] }): Promise<PlanResult> => {
    const last = input.messages[input.messages.length - 1] as Message;
    if (last.role === 'tool') return { finalResponse: { text: 'Looked every customer up.' } };
    return { toolCalls: Array.from({ length: CALLS }, (_, n) => ({ name: 'crm.lookup', input: { n } })) };
  };
  return { planStart: decide, planResume: decide };
}

/** A seeded random number generator (mulberry32), so a failure replays. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type BatchContext = {
  batch: {
    pending: { toolCallId: string; input: { n: number } }[];
    results: ({ toolCallId: string; result?: unknown } | null)[];
  };
  messages: Message[];
};
const contextOf = (snapshot: unknown) => (snapshot as { context: BatchContext }).context;

for (const kind of kinds) {
  describe.skipIf(kind.skip !== undefined)(`a ${CALLS}-call batch on the ${kind.name} store`, () => {
    const runtimes: Runtime[] = [];
    const disposals: (() => Promise<void>)[] = [];
    afterEach(async () => {
      await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
      for (const dispose of disposals.splice(0)) await dispose();
    });

    it('writes per save only the results that landed since the save before: no rows for the calls, one per result, a head of constant size', {
      timeout: 60_000,
    }, async () => {
      kind.require();
      const fixture = await kind.fixture();
      disposals.push(fixture.dispose);
      const probes: (Probe & { done: number })[] = [];
      const inner = fixture.open();
      // Each save of the executing batch is followed by a look at what the database holds.
      const store: RunStore = {
        ...inner,
        async save(runId, update) {
          const saved = await inner.save(runId, update);
          const context = contextOf(update.snapshot);
          if (context.batch.pending.length > 0) {
            const done = context.batch.results.filter((result) => result !== null).length;
            probes.push({ ...(await fixture.probe(runId)), done });
          }
          return saved;
        },
      };
      const lookup = gatedLookup();
      const runtime = createRuntime({
        agent: { id: 'batch-rows' },
        planner: batchPlanner(),
        tools: [lookup.tool],
        store,
        telemetry: false,
        caps: { maxToolCalls: CALLS, maxCallsPerBatch: CALLS },
      });
      runtimes.push(runtime);
      const run = runtime.start({
        runId: 'run-rows',
        messages: [{ role: 'user', content: 'Look them all up' }],
      });
      // Results land out of order, a few between two saves.
      await lookup.finishRandom(CALLS, 36, async (i) => {
        if (i % 97 === 0) await run.persisted();
      });
      expect((await run.result()).status).toBe('completed');

      expect(probes.length).toBeGreaterThan(10);
      for (const probe of probes) {
        // The calls: one row, written once; the results: one row per result done, none for the rest.
        expect(probe.rows.pending).toBe(1);
        expect(probe.rows.results ?? 0).toBe(probe.done);
      }
      const heads = probes.map((probe) => probe.headBytes);
      // The head holds markers, not the batch (before: ~170 bytes a call, ~110 a result).
      expect(Math.max(...heads)).toBeLessThan(4_000);
      expect(Math.max(...heads) - Math.min(...heads)).toBeLessThan(100);
      // Once folded, the batch's rows are gone but for the results handed on (one row).
      expect(await fixture.probe('run-rows')).toMatchObject({
        rows: { messages: 2 + CALLS + 1, lastResults: 1 },
      });
      expect((await fixture.probe('run-rows')).rows.results).toBeUndefined();
      expect((await fixture.probe('run-rows')).rows.pending).toBeUndefined();
    });

    it('restores a run taken over mid-batch with exactly the results done so far, and runs only the others', {
      timeout: 60_000,
    }, async () => {
      kind.require();
      const fixture = await kind.fixture();
      disposals.push(fixture.dispose);
      const first = gatedLookup();
      const partitioned = flakyStore(fixture.open());
      const cutOff: unknown[] = [];
      const a = createRuntime({
        agent: { id: 'batch-rows' },
        planner: batchPlanner(),
        tools: [first.tool],
        store: partitioned,
        telemetry: false,
        caps: { maxToolCalls: CALLS, maxCallsPerBatch: CALLS },
        durable: { owner: 'pod-a', leaseMs: 300 },
        onError: (error) => cutOff.push(error),
      });
      runtimes.push(a);
      const run = a.start({
        runId: 'run-taken-over',
        messages: [{ role: 'user', content: 'Look them all up' }],
      });
      await first.finishRandom(733, 7, async (i) => {
        if (i % 50 === 0) await run.persisted();
      });
      const done = first.finished;
      const reader = fixture.open();
      await vi.waitFor(
        async () => {
          const stored = await reader.load('run-taken-over');
          expect(contextOf(stored?.snapshot).batch.results.filter((r) => r !== null)).toHaveLength(
            done.length,
          );
        },
        { timeout: 20_000 },
      );
      // Process A is cut off from the database (a crash, as far as the store can tell); its lease lapses.
      partitioned.down = true;
      await new Promise((resolve) => setTimeout(resolve, 500));

      const stored = contextOf((await fixture.open().load('run-taken-over'))?.snapshot);
      expect(stored.batch.pending).toHaveLength(CALLS);
      const doneSet = new Set(done);
      stored.batch.results.forEach((result, i) => {
        const call = stored.batch.pending[i]!;
        expect(call.input.n).toBe(i);
        if (doneSet.has(i))
          expect(result).toMatchObject({
            toolCallId: call.toolCallId,
            result: { customer: `customer-${i}` },
          });
        else expect(result).toBeNull();
      });

      const second = gatedLookup();
      second.all();
      const b = createRuntime({
        agent: { id: 'batch-rows' },
        planner: batchPlanner(),
        tools: [second.tool],
        store: fixture.open(),
        telemetry: false,
        caps: { maxToolCalls: CALLS, maxCallsPerBatch: CALLS },
        durable: { owner: 'pod-a', leaseMs: 5_000 },
      });
      runtimes.push(b);
      const { recovered } = await b.recover();
      expect(recovered.map((handle) => handle.runId)).toEqual(['run-taken-over']);
      const outcome = await recovered[0]!.result();
      expect(outcome.status).toBe('completed');
      expect(second.ran.slice().sort((x, y) => x - y)).toEqual(
        Array.from({ length: CALLS }, (_, n) => n).filter((n) => !doneSet.has(n)),
      );
      const finished = contextOf((await fixture.open().load('run-taken-over'))?.snapshot);
      const answers = finished.messages.filter((message) => message.role === 'tool');
      expect(answers).toHaveLength(CALLS);
      expect(answers.map((message) => (message as { content: unknown }).content)).toEqual(
        Array.from({ length: CALLS }, (_, n) => ({ customer: `customer-${n}` })),
      );
      first.all(); // A's calls end; its writes are refused (it lost the run)
      // All A reported: the store it could not reach.
      for (const error of cutOff)
        expect(String(error)).toMatch(/flaky test store is unavailable|RunConflictError|lost/);
    });
  });
}
