/**
 * The embedding example's server: one toolwarden runtime on a SQLite file behind the HTTP API of
 * `app.ts`, bound to 127.0.0.1. Runs survive a restart (even `kill -9`): on start the server
 * resumes the runs that were mid-step, and a run waiting for an answer is restored when the
 * answer comes.
 *
 *     node --import tsx examples/embedding/server.ts
 *     TOOLWARDEN_DB=./runs.db PORT=8787 node --import tsx examples/embedding/server.ts
 *
 * Prints `listening on http://127.0.0.1:<port>` once it accepts requests. SIGTERM or SIGINT stop
 * it cleanly: writes are flushed and the runs released for the next process.
 *
 * @module
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { createRuntime, RunConflictError, type Runtime } from 'toolwarden';
import { sqliteStore } from 'toolwarden/sqlite';
import { createEmbeddingApp } from './app.ts';
import { supportAgent } from './support-agent.ts';

export interface EmbeddingServerOptions {
  /** The SQLite file. Default `./toolwarden-runs.db`. */
  db?: string;
  /** 0 picks a free port. Default 8787. */
  port?: number;
  /**
   * This server's name as the owner of its runs. It must stay the same across restarts so a
   * restarted server takes its runs back at once; default: one name per database file.
   */
  owner?: string;
  /** Evict runs waiting for an answer from memory after this long, ms. Default 60 000. */
  evictAfterMs?: number;
}

export interface EmbeddingServer {
  url: string;
  runtime: Runtime;
  /** Flushes, releases the runs, closes the store and the listener. */
  close(): Promise<void>;
}

export async function startEmbeddingServer(options: EmbeddingServerOptions = {}): Promise<EmbeddingServer> {
  const db = resolve(options.db ?? 'toolwarden-runs.db');
  const store = sqliteStore({ path: db });
  const agent = supportAgent();
  const runtime = createRuntime({
    agent: { id: 'support', name: 'Support agent' },
    planner: agent.planner,
    tools: agent.tools,
    store,
    durable: {
      owner: options.owner ?? `embedding-example:${db}`,
      evictAfterMs: options.evictAfterMs ?? 60_000,
      // After kill -9 the restarted server may answer the dead one's runs once its lease lapses:
      // short here, so a client's Retry-After wait is seconds (the default is 30 s).
      leaseMs: 5_000,
    },
    onError: (error, where) => console.error(`[embedding] ${where}:`, error),
  });

  // Runs that were mid-step when the last process stopped go on now; runs waiting for an answer
  // stay in the store until it comes.
  for (const run of await runtime.list({ status: 'running' })) {
    runtime.resume(run.runId).catch((error: unknown) => {
      if (error instanceof RunConflictError)
        console.error(`[embedding] ${run.runId} is held elsewhere: ${error.message}`);
      else console.error(`[embedding] could not resume ${run.runId}:`, error);
    });
  }

  const app = createEmbeddingApp(runtime);
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((done) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: options.port ?? 8787 }, (info) =>
      done({ server, port: info.port }),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    async close() {
      await runtime.close();
      await store.close();
      await new Promise<void>((done) => {
        server.close(() => done());
        // Open event streams would hold `close` forever.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await startEmbeddingServer({
    db: process.env.TOOLWARDEN_DB,
    port: process.env.PORT === undefined ? undefined : Number(process.env.PORT),
    evictAfterMs: process.env.EVICT_AFTER_MS === undefined ? undefined : Number(process.env.EVICT_AFTER_MS),
  });
  console.log(`listening on ${server.url}`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
