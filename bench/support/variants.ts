/**
 * The side-by-side's variants by name (docs/benchmarks.md §Side by side): each a factory of the
 * reference loop for a run length, made where it is measured (in its own process, or all in one
 * with `--one-process`). The yardstick is the chart's floor (chart-floor.ts); the peers come from
 * bench/peers/peer-loops.ts, whose packages live in bench/peers/node_modules.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Loop } from './cpu-block.ts';

/** The variant the others are divided by first: the run machine's chart with the loop's work only. */
export const YARDSTICK = 'chart floor: same states + work';
/** The peer the others are divided by second. */
export const BASELINE = 'AI SDK 6 generateText';

/**
 * Makes a variant's loop for runs of `steps` steps; `dir` is a scratch directory (SQLite's file).
 * Imports what the variant needs only, so that a process measuring one variant holds no other's
 * code or heap.
 */
export type MakeLoop = (steps: number, dir: string) => Promise<Loop>;

/** The peer loops of `bench/peers/peer-loops.ts` (loaded by URL: its packages live in bench/peers). */
export interface PeerModule {
  peerLoops: Record<string, (steps: number) => Loop>;
  aiSdkLoop: (steps: number) => Loop;
}

const peersDir = join(dirname(new URL(import.meta.url).pathname), '..', 'peers');

/**
 * Installs the peers (bench/peers/package-lock.json) and builds LangGraph's SqliteSaver's native
 * addon for this Node (scripts/bench-peers.sh) when they are not there yet.
 * @throws Error when the script fails (its output says why).
 */
export function ensurePeers(): void {
  const ready = [
    '@langchain/langgraph-checkpoint-sqlite/package.json',
    'better-sqlite3/build/Release/better_sqlite3.node',
  ];
  if (ready.every((path) => existsSync(join(peersDir, 'node_modules', path)))) return;
  console.log('installing the bench peers: bash scripts/bench-peers.sh');
  const script = join(peersDir, '..', '..', 'scripts', 'bench-peers.sh');
  const installed = spawnSync('bash', [script], { stdio: 'inherit' });
  if (installed.status !== 0) throw new Error(`scripts/bench-peers.sh exited with ${installed.status}`);
}

export async function loadPeers(): Promise<PeerModule> {
  return (await import(new URL('../peers/peer-loops.ts', import.meta.url).href)) as PeerModule;
}

const loops = () => import('./toolwarden-loops.ts');

const toolwarden: Record<string, MakeLoop> = {
  [YARDSTICK]: async (steps) => (await import('./chart-floor.ts')).chartFloorLoop(steps),
  'toolwarden: default runtime': async (steps) => (await loops()).actorLoop({}, steps),
  // The default memory store keeps up to 1,000 finished runs (issue 24 item 7): their heap is GC
  // work the default row pays and an app that reads no finished run would not (issue 29 item 4).
  'toolwarden: default runtime, finished runs not kept': async (steps) => {
    const { memoryStore } = await import('../../stores/memory-store.ts');
    return (await loops()).actorLoop({ store: memoryStore({ maxFinishedRuns: 0 }) }, steps);
  },
  'toolwarden: no store, no telemetry': async (steps) => {
    const { discardingStore } = await import('./reference-loop.ts');
    return (await loops()).actorLoop({ store: discardingStore(), telemetry: false }, steps);
  },
  'toolwarden: SQLite store': async (steps, dir) => {
    const { sqliteStore } = await import('../../stores/sqlite-store.ts');
    const path = join(dir, `runs-${steps}-${process.pid}.db`);
    return (await loops()).actorLoop({ store: sqliteStore({ path }) }, steps);
  },
  'toolwarden: PostgreSQL store': async (steps) => {
    const { postgresStore } = await import('../../stores/postgres-store.ts');
    const store = postgresStore({
      connectionString: postgresUrl(),
      schema: `tw_bench_${process.pid}_${steps}`,
    });
    return (await loops()).actorLoop({ store }, steps);
  },
  'toolwarden: run machine alone': async (steps) => (await loops()).machineLoop(steps),
  'naive XState machine': async (steps) => (await loops()).naiveLoop(steps),
  'plain async loop': async (steps) => (await loops()).plainLoop(steps),
};

/**
 * Every variant's name, yardstick first, then toolwarden's, then the peers' (which need
 * {@link ensurePeers}). The PostgreSQL ones (toolwarden's store, LangGraph's `PostgresSaver`) only
 * when the database of `TOOLWARDEN_PG_URL` (default: scripts/postgres.sh's) answers; each makes a
 * schema of its own there (`tw_bench_<pid>_<steps>`, `lg_bench_<pid>`), left for inspection.
 */
export async function variantNames(): Promise<string[]> {
  const names = [...Object.keys(toolwarden), ...Object.keys((await loadPeers()).peerLoops)];
  if (await postgresAnswers()) return names;
  console.log(
    `side by side: no PostgreSQL at ${postgresUrl()}: its variants are left out (bash scripts/postgres.sh start)`,
  );
  return names.filter((name) => !/Postgres/.test(name));
}

function postgresUrl(): string {
  return process.env.TOOLWARDEN_PG_URL || 'postgres://postgres@127.0.0.1:54329/toolwarden_test';
}

async function postgresAnswers(): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: postgresUrl(), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The loop of variant `name` for runs of `steps` steps.
 * @throws Error when no variant has that name.
 */
export async function makeVariantLoop(name: string, steps: number, dir: string): Promise<Loop> {
  const own = toolwarden[name];
  if (own) return own(steps, dir);
  // The peers' packages are installed apart (bench/peers): without them, say which is missing.
  const peers = await loadPeers().catch((error: unknown) => {
    throw new Error(
      `no bench variant is named ${JSON.stringify(name)} among toolwarden's, and the peers' loops could not be loaded (bash scripts/bench-peers.sh): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      { cause: error },
    );
  });
  const peer = peers.peerLoops[name];
  if (!peer) throw new Error(`no bench variant is named ${JSON.stringify(name)}`);
  return peer(steps);
}
