import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isLoopbackHost } from '../inspector/request-guard.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';
import type { RunEvent } from '../run/run-events.ts';
import { ApprovalEditRefusedError } from '../runtime/approval-edits.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import type { Tool } from '../tools/define-tool.ts';
import { requestGuard } from './gateway-request-guard.ts';
import { GatewaySession, gatewayPlanner, SESSION_ENDED_KEY } from './gateway-session.ts';

/** What the gateway's runtime is made of: `createRuntime`'s options without a planner. */
export interface McpGatewayConfig extends Omit<RuntimeOptions, 'planner' | 'agent'> {
  /** The agent the sessions' runs belong to. Default `{ id: 'mcp-gateway' }`. */
  agent?: RuntimeOptions['agent'];
}

/** Options of {@link serveMcp}. */
export interface ServeMcpOptions {
  /**
   * `stdio`: this process's stdin/stdout is one MCP session. `{ port, host }`: streamable HTTP on
   * `http://host:port/mcp` (docs/mcp.md §Gateway security).
   */
  transport: 'stdio' | GatewayHttpOptions;
  /** The server's name and version in `initialize`. Default `toolwarden-gateway`. */
  serverInfo?: { name: string; version: string };
}

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

/** How long an HTTP session may sit idle before it ends (15 minutes). */
export const DEFAULT_IDLE_TIMEOUT_MS = 15 * 60_000;
/** Sessions the HTTP gateway keeps open at once by default. */
export const DEFAULT_MAX_SESSIONS = 100;

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

/** The agent id of a gateway's runs when the config names none (also the `service` of its catalog). */
export const GATEWAY_AGENT_ID = 'mcp-gateway';

/** Times a client may send an edit the tool boundary refuses before the call is denied. */
export const MAX_EDIT_ROUNDS = 3;

/** The gateway's caps when the config sets none: a session lasts up to a day and may make 10,000 calls. */
export const GATEWAY_CAPS = {
  ...DEFAULT_CAPS,
  maxToolCalls: 10_000,
  maxConsecutiveFailedToolCalls: 50,
  timeBudgetMs: 86_400_000,
  // Every `tools/call` of the session is a planner turn, and a confirmation an await: as many as calls.
  maxTurns: 10_000,
  maxAwaits: 10_000,
};

/**
 * Serves toolwarden tools as an MCP server: a policy-enforcing, traced MCP gateway (issue 13,
 * docs/mcp.md §Gateway). Every client session is a run of the gateway's runtime whose planner is
 * the client: each `tools/call` goes through the tool boundary (a bad call comes back as an
 * `isError` result whose text a model can act on, with the RetryHint in `structuredContent`),
 * the configured policies (per session: caps, circuit breaker, rate-limit backoff, allow and
 * deny lists; a confirmation is asked of the client by MCP elicitation, or denied when the
 * client cannot answer), and telemetry (a span per call with ToolCallMeta; `sessionId` is the
 * MCP session id). Tools loaded with `mcpToolset` are served the same way.
 *
 * Over HTTP every request is checked before anything else (docs/mcp.md §Gateway security): its
 * `Host` must name loopback, the bind address or an `allowedHosts` name (else 421), its `Origin`,
 * when present, must be a loopback page or in `allowedOrigins` (else 403), and with a `token` its
 * `Authorization` must carry it (else 401; the `Bearer` scheme in any case, RFC 9110). The SDK's
 * own DNS-rebinding check of the transport is not used: it compares whole `Host` headers
 * exactly, so it refused `LOCALHOST` and `127.0.0.2`, which the check here reads as loopback.
 *
 * @throws TypeError for an HTTP bind off loopback without a `token`; Error naming the address
 *   when it cannot listen (the port in use: `EADDRINUSE`). Nothing is left running either way.
 */
export async function serveMcp(
  source: Tool[] | McpGatewayConfig,
  options: ServeMcpOptions,
): Promise<McpGateway> {
  const config: McpGatewayConfig = Array.isArray(source) ? { tools: source } : source;
  const http = options.transport === 'stdio' ? undefined : options.transport;
  const host = http?.host ?? '127.0.0.1';
  const bracketed = host.includes(':') ? `[${host}]` : host;
  if (http !== undefined && !isLoopbackHost(bracketed) && !http.token) {
    throw new TypeError(`serveMcp: binding ${host} (not loopback) requires a bearer token (transport.token)`);
  }
  const [{ Server }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const sessions = new Map<string, GatewaySession>();
  const runtime = createRuntime({
    caps: GATEWAY_CAPS,
    ...config,
    agent: config.agent ?? { id: GATEWAY_AGENT_ID },
    planner: gatewayPlanner(sessions),
  });
  const serverInfo = options.serverInfo ?? { name: 'toolwarden-gateway', version: '1.0.0' };

  /**
   * A fresh MCP server for one session; the session's run starts with its first `tools/list` or
   * `tools/call`. It declares `tools.listChanged` and sends `notifications/tools/list_changed`
   * whenever the tools it serves this session change after the client listed them: a policy
   * disabled or enabled one (circuit breaker), or the session ended (a cap, the time budget) and
   * serves none.
   */
  function sessionServer(sessionId: () => string | undefined): {
    server: Server;
    ended: (reason: string, message: string) => void;
  } {
    const server = new Server(serverInfo, { capabilities: { tools: { listChanged: true } } });
    let run: RunHandle | undefined;
    let session: GatewaySession | undefined;
    /** The served set the client last listed (tool ids joined), to tell it when that changes. */
    let listed: string | undefined;
    const served = () =>
      session?.endedBecause !== undefined
        ? []
        : runtime
            .listTools()
            .filter(
              (tool) => tool.execute !== undefined && run?.context.disabledTools[tool.id] === undefined,
            );
    const announce = () => {
      if (listed === undefined) return;
      const now = served()
        .map((tool) => tool.id)
        .join('\n');
      if (now === listed) return;
      listed = now;
      server.sendToolListChanged().catch(() => {}); // the client may be gone
    };
    const open = () => {
      if (session) return session;
      const id = sessionId() ?? randomUUID();
      session = new GatewaySession(
        `mcp-${id}`,
        (toolId) => runtime.toolSpec(toolId)?.outputSchema !== undefined,
      );
      session.onEnded = announce;
      sessions.set(session.runId, session);
      run = runtime.start({
        runId: session.runId,
        sessionId: id,
        labels: { 'mcp.session': id },
        messages: [{ role: 'user', content: `MCP client session ${id}` }],
      });
      const current = session;
      run.events$.subscribe((event) => {
        void answerAwait(server, run!, event);
        if (event.type === 'tool_result' || event.type === 'policy_decision') announce();
      });
      void run.result().then(
        (outcome) => current.end(`run_${outcome.status}`, `the run ${outcome.status}`),
        () => current.end('run_lost', 'the run was lost'),
      );
      return session;
    };
    server.setRequestHandler(types.ListToolsRequestSchema, () => {
      open(); // the session's run: policies disable tools when it starts
      const tools = served();
      listed = tools.map((tool) => tool.id).join('\n');
      return {
        tools: tools.map(toMcpTool),
        // An ended session serves nothing; the client is told why.
        ...(session?.endedBecause === undefined
          ? {}
          : { _meta: { [SESSION_ENDED_KEY]: { ...session.endedBecause } } }),
      };
    });
    server.setRequestHandler(types.CallToolRequestSchema, (request) =>
      open().call(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>),
    );
    return {
      server,
      ended: (reason, message) => {
        session?.end(reason, message);
        if (session) sessions.delete(session.runId);
      },
    };
  }

  /** A confirmation is asked of the client (elicitation); a clarification a policy asked for is left to the client's model. */
  async function answerAwait(server: Server, run: RunHandle, event: RunEvent): Promise<void> {
    try {
      if (event.type === 'await_clarification') {
        await run.provideClarification({
          id: event.clarification.id,
          answer: 'The MCP client was sent the hint and decides how to retry.',
        });
      } else if (event.type === 'await_confirmation') {
        const { id, prompt, details, toolCallIds } = event.confirmation;
        let approved = false;
        let reason = 'the MCP client cannot be asked (no elicitation capability)';
        if (server.getClientCapabilities()?.elicitation) {
          // Approve with edits (issue 24 item 4, safety): a confirmation holding one call offers an
          // `input` field; an edit the tool boundary refuses is asked again with its hint.
          const editable = toolCallIds?.length === 1 ? toolCallIds[0] : undefined;
          let refusal = '';
          for (let round = 0; ; round++) {
            const answer = await server.elicitInput({
              message: `${refusal}${prompt}\n${JSON.stringify(details ?? [], null, 2)}`,
              requestedSchema: {
                type: 'object',
                properties: {
                  approve: { type: 'boolean', title: 'Approve', description: prompt },
                  ...(editable === undefined
                    ? {}
                    : {
                        input: {
                          type: 'string',
                          title: 'Edited input (JSON)',
                          description: 'Approve the call with this input instead; leave empty to keep it',
                        },
                      }),
                },
                required: ['approve'],
              },
            });
            approved = answer.action === 'accept' && answer.content?.approve === true;
            reason = approved ? '' : `the MCP client answered ${answer.action}`;
            const edit = answer.content?.input;
            if (!approved || editable === undefined || typeof edit !== 'string' || edit.trim() === '') break;
            const problem = await confirmWithEdit(run, id, editable, edit);
            if (problem === undefined) return;
            if (round + 1 >= MAX_EDIT_ROUNDS) {
              approved = false;
              reason = `the MCP client's edits were refused ${MAX_EDIT_ROUNDS} times: ${problem}`;
              break;
            }
            refusal = `Your edited input was refused: ${problem}\nEdit it again, or approve or deny the call as it is.\n\n`;
          }
        }
        await run.confirm({ id, approved, by: 'mcp-client', ...(approved ? {} : { reason }) });
      }
    } catch {
      // The run ended or the answer was refused: nothing waits on it any more.
    }
  }

  /** Approves with the client's edit; what was wrong with it when refused (the hint's message), else undefined. */
  async function confirmWithEdit(
    run: RunHandle,
    id: string,
    toolCallId: string,
    edit: string,
  ): Promise<string | undefined> {
    let input: unknown;
    try {
      input = JSON.parse(edit);
    } catch (err) {
      return `not JSON (${err instanceof Error ? err.message : String(err)})`;
    }
    try {
      await run.confirm({ id, approved: true, by: 'mcp-client', edits: { [toolCallId]: input } });
      return undefined;
    } catch (err) {
      if (err instanceof ApprovalEditRefusedError) return err.message;
      throw err;
    }
  }

  if (http === undefined) {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    const { server, ended } = sessionServer(() => 'stdio');
    const transport: Transport = new StdioServerTransport();
    transport.onclose = () => ended('client_disconnected', 'the client disconnected');
    await server.connect(transport);
    return {
      runtime,
      sessions: () => sessions.size,
      close: async () => {
        ended('gateway_closed', 'the gateway closed');
        await server.close();
        await runtime.close();
      },
    };
  }

  const guard = requestGuard(http, bracketed);

  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  const idleTimeoutMs = http.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxSessions = http.maxSessions ?? DEFAULT_MAX_SESSIONS;
  /** Open sessions by MCP session id: a session is idle while no POST of its is open. */
  interface LiveSession {
    server: Server;
    transport: InstanceType<typeof StreamableHTTPServerTransport>;
    ended: (reason: string, message: string) => void;
    posts: number;
    idle: NodeJS.Timeout | undefined;
  }
  const live = new Map<string, LiveSession>();
  /** Sessions being initialized (not yet in `live`), counted against `maxSessions`. */
  let starting = 0;

  /** Ends an idle session as DELETE would: its run completes, its memory is freed. */
  const armIdle = (entry: LiveSession) => {
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      entry.ended('idle_timeout', `the session was idle for ${idleTimeoutMs} ms`);
      void entry.server.close().catch(() => {});
    }, idleTimeoutMs);
    entry.idle.unref();
  };
  /** A request of the session: not idle while a POST is open (a long call), idle again after. */
  const busy = (entry: LiveSession, req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return; // a GET stream open for notifications is not activity
    entry.posts += 1;
    clearTimeout(entry.idle);
    res.once('close', () => {
      entry.posts -= 1;
      if (entry.posts === 0 && live.has(entry.transport.sessionId ?? '')) armIdle(entry);
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = guard(req);
    if (refused !== undefined) {
      res.writeHead(refused.status, refused.headers).end(jsonRpcError(-32000, refused.message));
      return;
    }
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('toolwarden MCP gateway: POST /mcp');
      return;
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? live.get(id) : undefined;
    if (existing) {
      busy(existing, req, res);
      return existing.transport.handleRequest(req, res);
    }
    if (typeof id === 'string') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(jsonRpcError(-32001, 'Session not found'));
      return;
    }
    if (live.size + starting >= maxSessions) {
      res
        .writeHead(503, { 'content-type': 'application/json', 'retry-after': '60' })
        .end(
          jsonRpcError(
            -32000,
            `Too many MCP sessions: ${maxSessions} are open (transport.maxSessions). End one with DELETE, or retry later; idle sessions end after ${idleTimeoutMs} ms.`,
          ),
        );
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        const entry: LiveSession = { server, transport, ended, posts: 0, idle: undefined };
        live.set(sessionId, entry);
        busy(entry, req, res);
      },
    });
    const { server, ended } = sessionServer(() => transport.sessionId);
    transport.onclose = () => {
      ended('client_disconnected', 'the client ended the session');
      const entry = live.get(transport.sessionId ?? '');
      if (entry !== undefined) {
        clearTimeout(entry.idle);
        live.delete(transport.sessionId!);
      }
    };
    starting += 1;
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } finally {
      starting -= 1;
    }
  }
  const listener = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(http.port, host, () => resolve());
    });
  } catch (error) {
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `serveMcp: cannot listen on ${bracketed}:${http.port}: ${
        code === 'EADDRINUSE'
          ? 'the port is in use (pick another with --port / transport.port)'
          : String(error)
      }`,
      { cause: error },
    );
  }
  const port = (listener.address() as AddressInfo).port;
  return {
    url: `http://${bracketed}:${port}/mcp`,
    runtime,
    sessions: () => live.size,
    close: async () => {
      for (const { transport, ended, idle } of live.values()) {
        clearTimeout(idle);
        ended('gateway_closed', 'the gateway closed');
        await transport.close().catch(() => {});
      }
      live.clear();
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

/** A toolwarden tool as an MCP tool: its id as the name, its model-facing schemas, its tags as annotations. */
function toMcpTool(tool: Tool) {
  const tags = new Set(tool.tags ?? []);
  return {
    name: tool.id,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: { type: 'object' as const, ...tool.inputSchema },
    ...(tool.outputSchema === undefined
      ? {}
      : { outputSchema: { type: 'object' as const, ...tool.outputSchema } }),
    annotations: {
      readOnlyHint: tags.has('read-only'),
      destructiveHint: tags.has('destructive'),
      idempotentHint: tags.has('idempotent'),
      openWorldHint: tags.has('open-world'),
    },
  };
}
