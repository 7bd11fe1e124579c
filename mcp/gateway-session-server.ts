import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Runtime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import type { Tool } from '../tools/define-tool.ts';
import { answerAwait } from './gateway-confirmation.ts';
import { GatewaySession, SESSION_ENDED_KEY } from './gateway-session.ts';

/**
 * One client session of the gateway as an MCP server (docs/mcp.md §Gateway): `tools/list` is the
 * session's served set, `tools/call` a call of its run, and the run's awaits are answered by
 * the client (gateway-confirmation.ts).
 *
 * @module
 */

/** What every session server of one gateway shares. */
export interface GatewayParts {
  /** The SDK's `Server` (the optional peer, loaded by `serveMcp`). */
  Server: typeof Server;
  types: typeof import('@modelcontextprotocol/sdk/types.js');
  runtime: Runtime;
  /** Open sessions by run id (the gateway planner reads them). */
  sessions: Map<string, GatewaySession>;
  serverInfo: { name: string; version: string };
}

/** A session's MCP server, and how to end the session (its run completes, its memory is freed). */
export interface SessionServer {
  server: Server;
  ended: (reason: string, message: string) => void;
}

/**
 * A fresh MCP server for one session; the session's run starts with its first `tools/list` or
 * `tools/call`. It declares `tools.listChanged` and sends `notifications/tools/list_changed`
 * whenever the tools it serves this session change after the client listed them: a policy
 * disabled or enabled one (circuit breaker), or the session ended (a cap, the time budget) and
 * serves none.
 */
export function sessionServer(gateway: GatewayParts, sessionId: () => string | undefined): SessionServer {
  const { runtime, sessions, types } = gateway;
  const server = new gateway.Server(gateway.serverInfo, { capabilities: { tools: { listChanged: true } } });
  let run: RunHandle | undefined;
  let session: GatewaySession | undefined;
  /** The served set the client last listed (tool ids joined), to tell it when that changes. */
  let listed: string | undefined;
  const served = () =>
    session?.endedBecause !== undefined
      ? []
      : runtime
          .listTools()
          .filter((tool) => tool.execute !== undefined && run?.context.disabledTools[tool.id] === undefined);
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
