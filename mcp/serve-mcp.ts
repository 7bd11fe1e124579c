import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_CAPS } from '../run/caps.ts';
import type { RunEvent } from '../run/run-events.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import type { Tool } from '../tools/define-tool.ts';
import { GatewaySession, gatewayPlanner } from './gateway-session.ts';

/** What the gateway's runtime is made of: `createRuntime`'s options without a planner. */
export interface McpGatewayConfig extends Omit<RuntimeOptions, 'planner' | 'agent'> {
  /** The agent the sessions' runs belong to. Default `{ id: 'mcp-gateway' }`. */
  agent?: RuntimeOptions['agent'];
}

/** Options of {@link serveMcp}. */
export interface ServeMcpOptions {
  /**
   * `stdio`: this process's stdin/stdout is one MCP session. `{ port, host }`: streamable HTTP on
   * `http://host:port/mcp`, host `127.0.0.1` by default; any other host requires `token`.
   */
  transport: 'stdio' | { port: number; host?: string; token?: string };
  /** The server's name and version in `initialize`. Default `toolwarden-gateway`. */
  serverInfo?: { name: string; version: string };
}

/** A running gateway. */
export interface McpGateway {
  /** The HTTP endpoint (`http://127.0.0.1:PORT/mcp`); absent over stdio. */
  url?: string;
  /** The runtime hosting one run per client session (its events, inspector, telemetry). */
  runtime: Runtime;
  /** Ends every session (their runs complete) and stops serving. */
  close(): Promise<void>;
}

/** The gateway's caps when the config sets none: a session lasts up to a day and may make 10,000 calls. */
export const GATEWAY_CAPS = {
  ...DEFAULT_CAPS,
  maxToolCalls: 10_000,
  maxConsecutiveFailedToolCalls: 50,
  timeBudgetMs: 86_400_000,
};

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

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
 * @throws TypeError for an HTTP bind off loopback without a `token`.
 */
export async function serveMcp(
  source: Tool[] | McpGatewayConfig,
  options: ServeMcpOptions,
): Promise<McpGateway> {
  const config: McpGatewayConfig = Array.isArray(source) ? { tools: source } : source;
  const http = options.transport === 'stdio' ? undefined : options.transport;
  const host = http?.host ?? '127.0.0.1';
  if (http !== undefined && !LOOPBACK.has(host) && !http.token) {
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
    agent: config.agent ?? { id: 'mcp-gateway' },
    planner: gatewayPlanner(sessions),
  });
  const serverInfo = options.serverInfo ?? { name: 'toolwarden-gateway', version: '1.0.0' };

  /** A fresh MCP server for one session; the session's run starts on `initialize`. */
  function sessionServer(sessionId: () => string | undefined): { server: Server; ended: () => void } {
    const server = new Server(serverInfo, { capabilities: { tools: {} } });
    let run: RunHandle | undefined;
    let session: GatewaySession | undefined;
    const open = () => {
      if (session) return session;
      const id = sessionId() ?? randomUUID();
      session = new GatewaySession(
        `mcp-${id}`,
        (toolId) => runtime.toolSpec(toolId)?.outputSchema !== undefined,
      );
      sessions.set(session.runId, session);
      run = runtime.start({
        runId: session.runId,
        sessionId: id,
        labels: { 'mcp.session': id },
        messages: [{ role: 'user', content: `MCP client session ${id}` }],
      });
      const current = session;
      run.events$.subscribe((event) => void answerAwait(server, run!, event));
      void run.result().then(
        (outcome) => current.end(`the run ${outcome.status}`),
        () => current.end('the run was lost'),
      );
      return session;
    };
    server.setRequestHandler(types.ListToolsRequestSchema, () => {
      open(); // the session's run: policies disable tools when it starts
      const disabled = run?.context.disabledTools ?? {};
      return {
        tools: runtime
          .listTools()
          .filter((tool) => tool.execute !== undefined && disabled[tool.id] === undefined)
          .map(toMcpTool),
      };
    });
    server.setRequestHandler(types.CallToolRequestSchema, (request) =>
      open().call(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>),
    );
    return {
      server,
      ended: () => {
        session?.end('the client disconnected');
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
        const { id, prompt, details } = event.confirmation;
        let approved = false;
        let reason = 'the MCP client cannot be asked (no elicitation capability)';
        if (server.getClientCapabilities()?.elicitation) {
          const answer = await server.elicitInput({
            message: `${prompt}\n${JSON.stringify(details ?? [], null, 2)}`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean', title: 'Approve', description: prompt } },
              required: ['approve'],
            },
          });
          approved = answer.action === 'accept' && answer.content?.approve === true;
          reason = approved ? '' : `the MCP client answered ${answer.action}`;
        }
        await run.confirm({ id, approved, by: 'mcp-client', ...(approved ? {} : { reason }) });
      }
    } catch {
      // The run ended or the answer was refused: nothing waits on it any more.
    }
  }

  if (http === undefined) {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    const { server, ended } = sessionServer(() => 'stdio');
    const transport: Transport = new StdioServerTransport();
    transport.onclose = ended;
    await server.connect(transport);
    return {
      runtime,
      close: async () => {
        ended();
        await server.close();
        await runtime.close();
      },
    };
  }

  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  const live = new Map<
    string,
    { server: Server; transport: InstanceType<typeof StreamableHTTPServerTransport>; ended: () => void }
  >();
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('toolwarden MCP gateway: POST /mcp');
      return;
    }
    if (http!.token !== undefined && req.headers.authorization !== `Bearer ${http!.token}`) {
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? live.get(id) : undefined;
    if (existing) return existing.transport.handleRequest(req, res);
    if (typeof id === 'string') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
        );
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        live.set(sessionId, { server, transport, ended });
      },
    });
    const { server, ended } = sessionServer(() => transport.sessionId);
    transport.onclose = () => {
      ended();
      if (transport.sessionId) live.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }
  const listener = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(http.port, host, () => resolve());
  });
  const { port } = listener.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`,
    runtime,
    close: async () => {
      for (const { transport, ended } of live.values()) {
        ended();
        await transport.close().catch(() => {});
      }
      live.clear();
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      await runtime.close();
    },
  };
}

/** A toolwarden tool as an MCP tool: its id as the name, its model-facing schemas, its tags as annotations. */
function toMcpTool(tool: Tool) {
  const tags = new Set(tool.tags ?? []);
  return {
    name: tool.id,
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
