import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { type WebSocket, WebSocketServer } from 'ws';
import type { RunEvent } from '../run/run-events.ts';
import { ApprovalEditRefusedError } from '../runtime/approval-edits.ts';
import type { ProvidedToolResult } from '../runtime/run-handle.ts';
import type { InspectionStore, InspectorMessage, RunPage, RunQuery } from './inspection-store.ts';
import { inspectorPage } from './inspector-page.ts';
import { isLoopbackHost, isLoopbackOrigin, tokenMatches } from './request-guard.ts';

/**
 * How the page answers a run that waits (the runtime's by-id methods: `runtime.provideClarification`,
 * `provideToolResults`, `confirm`). Each throws for an answer that does not fit what the run awaits.
 */
export interface InspectorAnswers {
  provideClarification(runId: string, answer: { id: string; answer: string }): Promise<unknown>;
  provideToolResults(runId: string, results: ProvidedToolResult[]): Promise<unknown>;
  confirm(
    runId: string,
    answer: { id: string; approved: boolean; by?: string; reason?: string; edits?: Record<string, unknown> },
  ): Promise<unknown>;
  /**
   * `runtime.list({ awaiting: true })` (issue 35 item 6): the store's waiting runs, read without
   * restoring them; the inspector lists those it does not host (the approval desk).
   */
  list?(filter: { awaiting: true }): Promise<StoredWaitingRun[]>;
  /** `runtime.events(runId, { follow: false })`: a stored run's events, for its log on the page. */
  events?(runId: string, options: { follow: false }): AsyncIterable<{ event: RunEvent }>;
  /** `runtime.fork` (issue 27 item 4): a new run from the step at the run's event `atEvent`; resolves with its handle. */
  fork?(
    runId: string,
    options: { atEvent: number; edit?: { input: unknown } | { answer: string } },
  ): Promise<{ runId: string }>;
}

/** What the inspector reads of a stored run waiting for an answer (`StoredRun`, stores/run-store.ts). */
export interface StoredWaitingRun {
  runId: string;
  agentId: string;
  /** The persisted snapshot, as the store keeps it. */
  snapshot: unknown;
}

/** The header a write from the page must carry: a cross-site form or `fetch` cannot send it without a CORS preflight, which the server never grants. */
export const ANSWER_HEADER = 'x-toolwarden-inspector';

export interface InspectorServerOptions {
  store: InspectionStore;
  /** The chart drawn on the page: `toSvg(graph, { embedStyle: false })`. */
  svg: string;
  /** The simple view (`toSimpleGraph`) drawn, and its maps; absent: the page has the full chart only. */
  simple?: {
    svg: string;
    via: Record<string, string[][]>;
    shownAs: Record<string, string>;
    /** What decided each way of `via` (the label of a taken arrow). */
    wayLabels?: Record<string, string[]>;
  };
  /** Where answers from the page go; absent or `readOnly`: the page shows what a run awaits, without forms. */
  answers?: InspectorAnswers;
  /** Serve the page without answering (every write refused with 403). Default false. */
  readOnly?: boolean;
  /** A Jaeger UI (`http://127.0.0.1:16686`): the page links each run's trace there. */
  jaegerUrl?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** A loopback address: `127.0.0.1` (default), `::1` or `localhost`. */
  host?: string;
  /** The secret every request must carry as `?token=`. Default: 24 random bytes, base64url. */
  token?: string;
  /** Largest WebSocket message accepted, bytes. Default 4 MiB. */
  maxWsPayload?: number;
  /** SSE comment interval keeping idle streams open through proxies, ms. Default 15 000. */
  heartbeatMs?: number;
  /** Live `/events` streams at once; more get 503. Default 16. */
  maxSseClients?: number;
  /**
   * Bytes queued for one `/events` client that has not read them yet; past this the client is
   * dropped: it is sent a `dropped` message saying why (the page shows it and offers to
   * reconnect) and the stream ends. Default 8 MiB.
   */
  maxSseBufferedBytes?: number;
  /** Run summaries in the `hello` page (and the default page of `GET /api/runs`). Default 100. */
  pageSize?: number;
  /** Log entries sent when a run is opened (its newest; the page asks for earlier ones). Default 200. */
  logPageSize?: number;
  /** Called as each page connects (`/events`), before its `hello`: the plugin lists the store's waiting runs then. */
  onClient?: () => void;
}

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
 * | `/api/graph`   | the chart's graph model (JSON)                                        |
 * | `/api/runs/:key/frame?seq=N` | the run as it was at log entry N (time travel)          |
 * | `POST /api/runs/:key/answer` | answers what the run awaits (same origin, {@link ANSWER_HEADER}; not when read-only); a confirmation may carry `edits` (a refused edit: 422 with its `retryHint`) |
 * | `/ws` (upgrade)| `@statelyai/inspect` WebSocket inspector events, shown like native runs |
 *
 * Every request needs `?token=<token>` (else 403) and a loopback `Host` header (else 421, which
 * defeats DNS rebinding); WebSocket upgrades with a non-loopback `Origin` are refused too.
 */
export async function startInspectorServer(options: InspectorServerOptions): Promise<InspectorServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host)) {
    throw new InspectorHostError(`The inspector only listens on loopback addresses, not "${host}"`);
  }
  const token = options.token ?? randomBytes(24).toString('base64url');
  const store = options.store;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const closers = new Set<() => void>();
  const maxBuffered = options.maxSseBufferedBytes ?? 8 * 1024 * 1024;
  const pageSize = options.pageSize ?? 100;
  const logPageSize = options.logPageSize ?? 200;
  /** A `limit` query: a positive integer, at most 1,000 (the store's default maxLog). */
  const logLimit = (value: string | undefined): number | undefined => {
    const limit = Number(value);
    return value && Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : undefined;
  };
  /** The first page of runs (the `hello`'s, and the page's own), smaller when its summaries are large (long labels): it must fit half the limit. */
  const firstPage = (): RunPage => {
    for (let limit = pageSize; ; limit = Math.floor(limit / 2)) {
      const page = store.page({ limit: Math.max(1, limit) });
      if (limit <= 1 || JSON.stringify(page).length <= maxBuffered / 2) return page;
    }
  };

  const app = new Hono();
  app.use('*', async (c, next) => {
    if (!isLoopbackHost(c.req.header('host'))) {
      return c.text('Misdirected Request: the inspector answers to 127.0.0.1 and localhost only\n', 421);
    }
    if (!tokenMatches(c.req.query('token'), token)) {
      return c.text('Forbidden: the inspector URL carries a token; use the URL it printed\n', 403);
    }
    await next();
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
    c.header('X-Frame-Options', 'DENY');
  });

  app.get('/', (c) => {
    const nonce = randomBytes(16).toString('base64');
    c.header(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        'img-src data:',
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
    );
    return c.html(
      inspectorPage({
        svg: options.svg,
        nonce,
        machineId: store.graph.machineId,
        ...(options.simple === undefined ? {} : { simple: options.simple }),
        canAnswer: options.answers !== undefined && options.readOnly !== true,
        canFork: options.answers?.fork !== undefined && options.readOnly !== true,
        ...(options.jaegerUrl === undefined ? {} : { jaegerUrl: options.jaegerUrl }),
        // Issue 27 item 1: the list is drawn from the page itself, one round trip before the hello.
        runs: firstPage(),
      }),
    );
  });

  // Time travel: the run as it was at a log entry.
  app.get('/api/runs/:key/frame', (c) => {
    const seq = Number(c.req.query('seq'));
    if (!Number.isInteger(seq)) return c.json({ error: 'seq must be an integer' }, 400);
    const frame = store.frameAt(c.req.param('key'), seq);
    return frame ? c.json(frame) : c.json({ error: 'no snapshot kept that far back' }, 404);
  });

  // Answering a waiting run from the page (issue 15): the token (checked above), a loopback
  // Host, the page's own Origin and a custom header (CSRF: a cross-site page can send none of
  // them without a preflight), then the run's own validation.
  app.post('/api/runs/:key/answer', async (c) => {
    if (options.readOnly || options.answers === undefined) {
      return c.json({ error: 'the inspector is read-only: answers are not accepted here' }, 403);
    }
    if (
      c.req.header('origin') !== `http://${c.req.header('host')}` ||
      c.req.header(ANSWER_HEADER) !== 'answer'
    ) {
      return c.json({ error: 'answers are accepted from the inspector page only (same origin)' }, 403);
    }
    const run = store.run(c.req.param('key'));
    if (run?.source !== 'native') return c.json({ error: 'no such run here' }, 404);
    let body: Record<string, unknown>;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: 'the body must be JSON' }, 400);
    }
    try {
      if (body.kind === 'clarification' && typeof body.id === 'string' && typeof body.answer === 'string') {
        await options.answers.provideClarification(run.runId, { id: body.id, answer: body.answer });
      } else if (
        body.kind === 'confirmation' &&
        typeof body.id === 'string' &&
        typeof body.approved === 'boolean'
      ) {
        // Approve with edits (issue 24 item 4, safety): `edits` (toolCallId → input) pass the
        // tool boundary in the run handle; a refused edit is a 422 with the hint, the run still waits.
        const edits = body.edits;
        await options.answers.confirm(run.runId, {
          id: body.id,
          approved: body.approved,
          by: 'inspector',
          ...(typeof body.reason === 'string' && body.reason !== '' ? { reason: body.reason } : {}),
          ...(edits !== null && typeof edits === 'object' && !Array.isArray(edits)
            ? { edits: edits as Record<string, unknown> }
            : {}),
        });
      } else if (body.kind === 'toolResults' && Array.isArray(body.results)) {
        await options.answers.provideToolResults(run.runId, body.results as ProvidedToolResult[]);
      } else {
        return c.json({ error: 'expected { kind: clarification | confirmation | toolResults, ... }' }, 400);
      }
    } catch (error) {
      if (error instanceof ApprovalEditRefusedError) {
        return c.json(
          { error: error.message, toolCallId: error.toolCallId, retryHint: error.retryHint ?? null },
          422,
        );
      }
      return c.json({ error: error instanceof Error ? error.message : String(error) }, 409);
    }
    return c.json({ ok: true });
  });

  // Forking a run from a step of its timeline (issue 27 item 4): guarded like answers, with the
  // header's value `fork`; the page names the step by its log entry, turned here into the run's
  // own event seq.
  app.post('/api/runs/:key/fork', async (c) => {
    if (options.readOnly || options.answers?.fork === undefined) {
      return c.json({ error: 'the inspector is read-only: runs are not forked here' }, 403);
    }
    if (
      c.req.header('origin') !== `http://${c.req.header('host')}` ||
      c.req.header(ANSWER_HEADER) !== 'fork'
    ) {
      return c.json({ error: 'forks are started from the inspector page only (same origin)' }, 403);
    }
    const run = store.run(c.req.param('key'));
    if (run?.source !== 'native') return c.json({ error: 'no such run here' }, 404);
    let body: { seq?: unknown; edit?: unknown };
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: 'the body must be JSON' }, 400);
    }
    const atEvent = typeof body.seq === 'number' ? store.runEventSeq(run.key, body.seq) : undefined;
    if (atEvent === undefined)
      return c.json({ error: 'expected { seq: a log entry of this run kept here }' }, 400);
    const edit = body.edit as { input?: unknown; answer?: unknown } | undefined;
    if (edit !== undefined && !('input' in edit) && typeof edit.answer !== 'string') {
      return c.json({ error: 'edit: { input } or { answer: string }' }, 400);
    }
    try {
      const child = await options.answers.fork(run.runId, {
        atEvent,
        ...(edit === undefined
          ? {}
          : { edit: 'input' in edit ? { input: edit.input } : { answer: edit.answer as string } }),
      });
      return c.json({ ok: true, runId: child.runId });
    } catch (error) {
      return c.json({ error: error instanceof Error ? error.message : String(error) }, 409);
    }
  });

  // Issue 12 defect 6: 1,000 clients blocked the process for 137 s sending 3.3 GB, and a client
  // that never read made the server buffer without limit. Each message is serialized once for
  // every client, clients are capped, and a client too far behind is dropped, told why.
  // Issue 27 item 1: the first message carries a page of run summaries only (it carried every
  // run's context and log, ~7 MB at 100 runs, past the limit: dropped, reconnected, dropped);
  // a run's context and log come when it is opened, and then only to the stream that opened it.
  const maxClients = options.maxSseClients ?? 16;
  const serialized = new WeakMap<object, string>();
  const serialize = (data: unknown): string => {
    if (data === null || typeof data !== 'object') return JSON.stringify(data);
    let text = serialized.get(data);
    if (text === undefined) {
      text = JSON.stringify(data);
      serialized.set(data, text);
    }
    return text;
  };
  /** Open streams by id: which run each one has open. */
  const streams = new Map<string, { open: (key: string | null) => void }>();
  /** Why a page's earlier stream was dropped, by the page's `client` id: its next `hello` says so. */
  const droppedClients = new Map<string, string>();
  let clients = 0;
  app.get('/events', (c) => {
    if (clients >= maxClients) {
      return c.text(`Too many live inspector streams (at most ${maxClients}); close another page\n`, 503);
    }
    clients++;
    options.onClient?.();
    const client = (c.req.query('client') ?? '').slice(0, 64);
    // Bytes Node holds for this response, unsent: where a client that does not read piles up.
    const outgoing = (c.env as { outgoing?: { writableLength?: number } } | undefined)?.outgoing;
    return streamSSE(c, async (stream) => {
      const id = randomBytes(9).toString('base64url');
      const queue: { event: string; text: string }[] = [];
      let queued = 0;
      let writing: Promise<void> | null = null;
      let dropped: string | null = null;
      let stuck = false;
      let ended = false;
      let stop: () => void = () => {};
      let watched = null as { key: string; release: () => void } | null;
      // One write at a time, in order; resolves when the queue is empty.
      const drain = async () => {
        while (queue.length > 0 && !ended) {
          const next = queue.shift()!;
          queued -= next.text.length;
          await stream.writeSSE({ event: next.event, data: next.text }).catch(() => undefined);
        }
      };
      const pump = (): Promise<void> => {
        // Cleared in a later microtask, after the assignment, even when nothing was to be written.
        writing ??= drain().finally(() => {
          writing = null;
        });
        return writing;
      };
      const send = (event: string, data: unknown) => {
        if (dropped || ended) return;
        const text = serialize(data);
        queued += text.length;
        if (queued + (outgoing?.writableLength ?? 0) > maxBuffered) {
          // Too far behind: forget what it has not been sent, tell it why, end the stream.
          dropped = `this page fell more than ${Math.round(maxBuffered / 1024)} KiB of updates behind and was disconnected (maxSseBufferedBytes)`;
          if (client) {
            droppedClients.set(client, dropped);
            if (droppedClients.size > 256) droppedClients.delete(droppedClients.keys().next().value!);
          }
          queue.length = 0;
          queued = 0;
          queue.push({ event: 'dropped', text: JSON.stringify({ reason: dropped }) });
          void pump().then(() => stop());
          // A client that reads nothing at all never takes even that: cut it off.
          setTimeout(() => {
            stuck = true;
            stop();
          }, 5000).unref();
          return;
        }
        queue.push({ event, text });
        void pump();
      };
      streams.set(id, {
        open(key) {
          watched?.release();
          watched = key === null ? null : { key, release: store.watch(key) };
        },
      });
      // Subscribe and take the hello in the same tick: nothing can fall between them.
      const unsubscribe = store.subscribe((message: InspectorMessage) => {
        if ((message.type === 'log' || message.type === 'context') && message.key !== watched?.key) return;
        send(message.type, message);
      });
      const earlier = client ? droppedClients.get(client) : undefined;
      if (client) droppedClients.delete(client);
      send('hello', {
        stream: id,
        ...firstPage(),
        ...(earlier === undefined ? {} : { droppedBefore: earlier }),
      });
      const heartbeat = setInterval(() => {
        if (queue.length === 0 && writing === null) void stream.write(': ping\n\n').catch(() => undefined);
      }, heartbeatMs);
      await new Promise<void>((resolve) => {
        stop = resolve;
        stream.onAbort(resolve);
        closers.add(resolve);
      });
      ended = true;
      clients--;
      clearInterval(heartbeat);
      unsubscribe();
      watched?.release();
      streams.delete(id);
      if (stuck) stream.abort();
    });
  });

  app.get('/api/runs', (c) => {
    const query: RunQuery = {
      limit: Number(c.req.query('limit') ?? pageSize) || pageSize,
      before: c.req.query('before') ?? null,
    };
    const status = c.req.query('status');
    const text = c.req.query('q');
    if (status) query.status = status;
    if (text) query.text = text;
    return c.json(store.page(query));
  });
  // Opening a run: its context and log, and (with `stream`) its live `log` and `context`
  // messages on that stream from now on. Entries recorded between the two carry higher seqs.
  app.get('/api/runs/:key', (c) => {
    const key = c.req.param('key');
    const run = store.run(key);
    if (!run) return c.json({ error: 'no such run (evicted past maxRuns?)' }, 404);
    const stream = streams.get(c.req.query('stream') ?? '');
    stream?.open(key);
    const { context, ...summary } = run;
    // Its newest log entries only (issue 27 item 1): a long run's whole log (up to maxLog, 1,000
    // entries, ~300 KB for 360 calls) took ~75 ms to draw; the page asks for earlier ones.
    const page = store.logPage(key, { limit: logLimit(c.req.query('limit')) ?? logPageSize });
    return c.json({ run: summary, context, ...page });
  });
  // A run's log: whole, or (`limit`, `before` a seq) the page before an entry, with `earlier`.
  app.get('/api/runs/:key/log', (c) => {
    const key = c.req.param('key');
    if (!store.summary(key)) return c.json({ error: 'no such run' }, 404);
    const limit = logLimit(c.req.query('limit'));
    if (limit === undefined) return c.json({ key, log: store.log(key) });
    const before = Number(c.req.query('before'));
    return c.json({ key, ...store.logPage(key, { limit, ...(Number.isInteger(before) ? { before } : {}) }) });
  });
  app.get('/api/graph', (c) => c.json(store.graph));
  app.notFound((c) => c.text('Not found\n', 404));

  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host }, () =>
      resolve(created as Server),
    ) as Server;
    created.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxWsPayload ?? 4 * 1024 * 1024 });
  let connections = 0;
  server.on('upgrade', (request, socket, head) => {
    const reject = (status: number, reason: string) => {
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = new URL(request.url ?? '/', origin);
    if (!isLoopbackHost(request.headers.host)) return reject(421, 'Misdirected Request');
    if (!isLoopbackOrigin(request.headers.origin)) return reject(403, 'Forbidden');
    if (!tokenMatches(url.searchParams.get('token'), token)) return reject(403, 'Forbidden');
    if (url.pathname !== '/ws') return reject(404, 'Not Found');
    wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const connection = `ws${++connections}`;
      ws.on('message', (data) => {
        let message: unknown;
        try {
          message = JSON.parse(String(data));
        } catch {
          return; // not an inspection event
        }
        store.receiveStately(message, connection);
      });
      ws.on('error', () => ws.terminate());
    });
  });

  return {
    url: `${origin}/?token=${encodeURIComponent(token)}`,
    wsUrl: `${origin.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(token)}`,
    origin,
    port,
    token,
    store,
    async close() {
      for (const close of closers) close();
      closers.clear();
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}
