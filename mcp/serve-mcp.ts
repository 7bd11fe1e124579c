import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isLoopbackHost } from '../inspector/request-guard.ts';
import { DEFAULT_CAPS } from '../run/caps.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import type { Tool } from '../tools/define-tool.ts';
import { type GatewayHttpOptions, type McpGateway, serveHttp } from './gateway-http.ts';
import { type GatewaySession, gatewayPlanner } from './gateway-session.ts';
import { type GatewayParts, sessionServer } from './gateway-session-server.ts';

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

export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_SESSIONS,
  type GatewayHttpOptions,
  type McpGateway,
} from './gateway-http.ts';

/** The agent id of a gateway's runs when the config names none (also the `service` of its catalog). */
export const GATEWAY_AGENT_ID = 'mcp-gateway';

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
  const parts: GatewayParts = { Server, types, runtime, sessions, serverInfo };
  if (http !== undefined) {
    return serveHttp(http, { host, bracketed }, runtime, (sessionId) => sessionServer(parts, sessionId));
  }
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { server, ended } = sessionServer(parts, () => 'stdio');
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
