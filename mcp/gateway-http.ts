import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Runtime } from '../runtime/create-runtime.ts';
import { requestGuard } from './gateway-request-guard.ts';
import type { SessionServer } from './gateway-session-server.ts';

/**
 * The gateway over streamable HTTP (docs/mcp.md §Gateway security, §Session lifetime): every
 * request checked before it is read, one MCP server per session, a session ended when idle for
 * `idleTimeoutMs`, at most `maxSessions` at once.
 *
 * @module
 */

/** How long an HTTP session may sit idle before it ends (15 minutes). */
export const DEFAULT_IDLE_TIMEOUT_MS = 15 * 60_000;
/** Sessions the HTTP gateway keeps open at once by default. */
export const DEFAULT_MAX_SESSIONS = 100;

/** The gateway over streamable HTTP (docs/mcp.md §Gateway security). */
export interface GatewayHttpOptions {
  /** 0 for an ephemeral port. */
  port: number;
  /** Bind address, `127.0.0.1` by default; anything off loopback requires `token`. */
  host?: string;
  /** Bearer token every request must carry (`Authorization: Bearer <token>`). */
  token?: string;
  /**
   * Host names (no port) a request's `Host` may name besides the loopback ones (`localhost`,
   * `127.0.0.1` and all of 127/8, `[::1]`, any case) and the bind address: a reverse proxy's name,
   * a LAN name. A wildcard bind (`0.0.0.0`, `::`) also accepts this machine's interface addresses
   * and its host name (`os.networkInterfaces()`, `os.hostname()`). A request naming any other host
   * is refused with 421 (DNS rebinding), the message naming this option.
   */
  allowedHosts?: string[];
  /**
   * Origins (`https://app.example`) a request's `Origin` may be besides loopback pages; a request
   * with any other `Origin` is refused with 403. Requests without `Origin` (non-browser clients)
   * pass.
   */
  allowedOrigins?: string[];
  /**
   * A session none of whose requests is open for this long ends as if the client sent DELETE: its
   * run completes and its memory is freed; the client's next request gets 404 and initializes
   * again. Default {@link DEFAULT_IDLE_TIMEOUT_MS} (15 minutes).
   */
  idleTimeoutMs?: number;
  /** Sessions open at once; one more `initialize` is answered 503 with `Retry-After`. Default {@link DEFAULT_MAX_SESSIONS}. */
  maxSessions?: number;
}

export { MAX_EDIT_ROUNDS } from './gateway-confirmation.ts';
/** A running gateway. */
export interface McpGateway {
  /** The HTTP endpoint (`http://127.0.0.1:PORT/mcp`); absent over stdio. */
  url?: string;
  /** The runtime hosting one run per client session (its events, inspector, telemetry). */
  runtime: Runtime;
  /** How many client sessions are open. */
  sessions(): number;
  /** Ends every session (their runs complete) and stops serving. */
  close(): Promise<void>;
}

/** An open session: idle while no POST of its is open. */
interface LiveSession extends SessionServer {
  transport: StreamableHTTPServerTransport;
  posts: number;
  idle: NodeJS.Timeout | undefined;
}

/** The HTTP sessions of one gateway, by MCP session id. */
class HttpSessions {
  readonly live = new Map<string, LiveSession>();
  /** Sessions being initialized (not yet in `live`), counted against `maxSessions`. */
  private starting = 0;
  private readonly guard: ReturnType<typeof requestGuard>;
  private readonly idleTimeoutMs: number;
  private readonly maxSessions: number;

  constructor(
    http: GatewayHttpOptions,
    bracketed: string,
    private readonly Transport: typeof StreamableHTTPServerTransport,
    private readonly newSession: (sessionId: () => string | undefined) => SessionServer,
  ) {
    this.guard = requestGuard(http, bracketed);
    this.idleTimeoutMs = http.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.maxSessions = http.maxSessions ?? DEFAULT_MAX_SESSIONS;
  }

  /** Ends an idle session as DELETE would: its run completes, its memory is freed. */
  armIdle(entry: LiveSession): void {
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      entry.ended('idle_timeout', `the session was idle for ${this.idleTimeoutMs} ms`);
      void entry.server.close().catch(() => {});
    }, this.idleTimeoutMs);
    entry.idle.unref();
  }

  /** A request of the session: not idle while a POST is open (a long call), idle again after. */
  busy(entry: LiveSession, req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'POST') return; // a GET stream open for notifications is not activity
    entry.posts += 1;
    clearTimeout(entry.idle);
    res.once('close', () => {
      entry.posts -= 1;
      if (entry.posts === 0 && this.live.has(entry.transport.sessionId ?? '')) this.armIdle(entry);
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = this.guard(req);
    if (refused !== undefined) {
      res.writeHead(refused.status, refused.headers).end(jsonRpcError(-32000, refused.message));
      return;
    }
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('toolwarden MCP gateway: POST /mcp');
      return;
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? this.live.get(id) : undefined;
    if (existing) {
      this.busy(existing, req, res);
      return existing.transport.handleRequest(req, res);
    }
    if (typeof id === 'string') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(jsonRpcError(-32001, 'Session not found'));
      return;
    }
    if (this.live.size + this.starting >= this.maxSessions) {
      res
        .writeHead(503, { 'content-type': 'application/json', 'retry-after': '60' })
        .end(
          jsonRpcError(
            -32000,
            `Too many MCP sessions: ${this.maxSessions} are open (transport.this.maxSessions). End one with DELETE, or retry later; idle sessions end after ${this.idleTimeoutMs} ms.`,
          ),
        );
      return;
    }
    const transport = new this.Transport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        const entry: LiveSession = { server, transport, ended, posts: 0, idle: undefined };
        this.live.set(sessionId, entry);
        this.busy(entry, req, res);
      },
    });
    const { server, ended } = this.newSession(() => transport.sessionId);
    transport.onclose = () => {
      ended('client_disconnected', 'the client ended the session');
      const entry = this.live.get(transport.sessionId ?? '');
      if (entry !== undefined) {
        clearTimeout(entry.idle);
        this.live.delete(transport.sessionId!);
      }
    };
    this.starting += 1;
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } finally {
      this.starting -= 1;
    }
  }

  /** Ends every session (their runs complete). */
  async close(): Promise<void> {
    for (const { transport, ended, idle } of this.live.values()) {
      clearTimeout(idle);
      ended('gateway_closed', 'the gateway closed');
      await transport.close().catch(() => {});
    }
    this.live.clear();
  }
}

/**
 * Listens on `http.host` (`bracketed`: an IPv6 address in brackets) and `http.port`.
 *
 * @throws Error naming the address when it cannot listen (the port in use: `EADDRINUSE`); the
 *   runtime is closed first, so nothing is left running.
 */
export async function serveHttp(
  http: GatewayHttpOptions,
  bound: { host: string; bracketed: string },
  runtime: Runtime,
  newSession: (sessionId: () => string | undefined) => SessionServer,
): Promise<McpGateway> {
  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  const sessions = new HttpSessions(http, bound.bracketed, StreamableHTTPServerTransport, newSession);
  const listener = createServer((req, res) => {
    sessions.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(http.port, bound.host, () => resolve());
    });
  } catch (error) {
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `serveMcp: cannot listen on ${bound.bracketed}:${http.port}: ${
        code === 'EADDRINUSE'
          ? 'the port is in use (pick another with --port / transport.port)'
          : String(error)
      }`,
      { cause: error },
    );
  }
  const port = (listener.address() as AddressInfo).port;
  return {
    url: `http://${bound.bracketed}:${port}/mcp`,
    runtime,
    sessions: () => sessions.live.size,
    close: async () => {
      await sessions.close();
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      await runtime.close();
    },
  };
}

/** A JSON-RPC error body without an id (the request was not read). */
function jsonRpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}
