import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import type { InspectionStore } from './inspection-store.ts';
import { isLoopbackHost } from './request-guard.ts';
import { answerRoute } from './server/answer-route.ts';
import { compareRoute } from './server/compare-route.ts';
import { EventStreams } from './server/event-streams.ts';
import { firstRunsPage } from './server/first-page.ts';
import { forkRoute } from './server/fork-route.ts';
import { guardRequests } from './server/guard-requests.ts';
import { inDoubtRoute } from './server/in-doubt-route.ts';
import type { InspectorServerOptions } from './server/inspector-server-options.ts';
import { listen } from './server/listen.ts';
import { pageRoute } from './server/page-route.ts';
import { readRoutes } from './server/read-routes.ts';
import { acceptStatelySockets } from './server/stately-sockets.ts';

export {
  ANSWER_HEADER,
  type InspectorAnswers,
  type InspectorServerOptions,
  type StoredWaitingRun,
} from './server/inspector-server-options.ts';

export interface InspectorServer {
  /** The page, token included: `http://127.0.0.1:PORT/?token=…`. */
  url: string;
  /** Where `@statelyai/inspect`'s `createWebSocketInspector({ url })` connects: `ws://…/ws?token=…`. */
  wsUrl: string;
  origin: string;
  port: number;
  token: string;
  store: InspectionStore;
  /** Ends open streams and sockets, then stops listening. */
  close(): Promise<void>;
}

/** Thrown when the inspector is asked to listen on a non-loopback address. */
export class InspectorHostError extends Error {
  override readonly name = 'InspectorHostError';
}

/**
 * Serves the inspector (issue 8 §3–4) on a loopback address:
 *
 * | path           | what                                                                 |
 * |----------------|----------------------------------------------------------------------|
 * | `/`            | the page (HTML/CSS/JS inline, CSP: nothing loads from elsewhere)      |
 * | `/events`      | Server-Sent Events: `hello` (a page of run summaries), then `run`, `update` (deltas), `removed`; `log` and `context` of the run the stream opened; `dropped` (why the server ended it) |
 * | `/api/runs`    | a page of run summaries (`?limit`, `before`, `status`, `q`)          |
 * | `/api/runs/:key` | a run opened: its summary, context and newest log entries (`?limit`, default `logPageSize`; `earlier`: how many are kept before them; `?stream=` the `hello`'s id: that stream then gets its `log` and `context` messages) |
 * | `/api/runs/:key/log` | one run's log: whole, or `?limit&before=<seq>` the entries before one, with `earlier` |
 * | `/api/compare?a=<key>&b=<key>` | two runs compared step by step (`compareRuns` on their stored runs and logs, sanitized) |
 * | `/api/graph`   | the chart's graph model (JSON)                                        |
 * | `/api/runs/:key/frame?seq=N` | the run as it was at log entry N (time travel)          |
 * | `POST /api/runs/:key/answer` | answers what the run awaits (same origin, {@link ANSWER_HEADER}; not when read-only); a confirmation may carry `edits` (a refused edit: 422 with its `retryHint`) |
 * | `/ws` (upgrade)| `@statelyai/inspect` WebSocket inspector events, shown like native runs |
 *
 * Every request needs `?token=<token>` (else 403) and a loopback `Host` header (else 421, which
 * defeats DNS rebinding); WebSocket upgrades with a non-loopback `Origin` are refused too.
 *
 * Built in named steps, one module each under `inspector/server/`: {@link guardRequests},
 * {@link pageRoute}, the writes ({@link answerRoute}, {@link inDoubtRoute}, {@link forkRoute}, guarded alike by
 * `acceptWrite`), {@link EventStreams}, {@link readRoutes}, {@link compareRoute}, {@link listen},
 * {@link acceptStatelySockets}.
 *
 * @throws InspectorHostError for a `host` that is not loopback; the listen error (`EADDRINUSE`).
 */
export async function startInspectorServer(options: InspectorServerOptions): Promise<InspectorServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host)) {
    throw new InspectorHostError(`The inspector only listens on loopback addresses, not "${host}"`);
  }
  const token = options.token ?? randomBytes(24).toString('base64url');
  const store = options.store;
  const maxBufferedBytes = options.maxSseBufferedBytes ?? 8 * 1024 * 1024;
  const pageSize = options.pageSize ?? 100;
  const firstPage = () => firstRunsPage(store, pageSize, maxBufferedBytes);
  const streams = new EventStreams(store, {
    maxClients: options.maxSseClients ?? 16,
    maxBufferedBytes,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    firstPage,
    ...(options.onClient === undefined ? {} : { onClient: options.onClient }),
  });

  const app = new Hono();
  app.use('*', guardRequests(token));
  pageRoute(app, options, firstPage);
  answerRoute(app, options);
  inDoubtRoute(app, options);
  forkRoute(app, options);
  streams.route(app);
  readRoutes(app, store, {
    pageSize,
    logPageSize: options.logPageSize ?? 200,
    openOnStream: (streamId, key) => streams.open(streamId, key),
  });
  compareRoute(app, store, options.answers);
  app.notFound((c) => c.text('Not found\n', 404));

  const { server, port, origin } = await listen(app, host, options.port ?? 0);
  const wss = acceptStatelySockets(server, store, {
    origin,
    token,
    maxPayload: options.maxWsPayload ?? 4 * 1024 * 1024,
  });
  return {
    url: `${origin}/?token=${encodeURIComponent(token)}`,
    wsUrl: `${origin.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(token)}`,
    origin,
    port,
    token,
    store,
    async close() {
      streams.closeAll();
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}
