import { randomUUID } from 'node:crypto';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type ElicitResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** One tool of the test server: what `tools/list` says, and what a call does. */
export interface TestTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** Default: echoes the arguments as text. */
  call?: (
    args: Record<string, unknown>,
    extra: {
      signal: AbortSignal;
      /** Asks the client for input during the call (`elicitation/create`, form mode), as a server's tool does. */
      elicit: (params: {
        message: string;
        requestedSchema: Record<string, unknown>;
      }) => Promise<ElicitResult>;
    },
  ) => Promise<unknown> | unknown;
}

/** What the server saw: the calls (name, arguments, `_meta`) and the calls canceled by the client. */
export interface TestServerLog {
  calls: { name: string; arguments: unknown; meta: Record<string, unknown> | undefined }[];
  canceled: string[];
}

/**
 * An MCP server of our own on 127.0.0.1 over streamable HTTP, built with the SDK's low-level
 * `Server`, for what published servers cannot show (issue 13): hangs, malformed results, hostile
 * listings, tools that come and go. `tools` may be changed at any time; `listChanged()` tells
 * every connected session.
 */
export async function startTestMcpServer(tools: TestTool[]): Promise<{
  url: string;
  tools: TestTool[];
  log: TestServerLog;
  listChanged(): Promise<void>;
  /** How many sessions clients opened so far. */
  sessionsOpened(): number;
  /** Drops every session's connection (the server keeps listening). */
  dropSessions(): Promise<void>;
  close(): Promise<void>;
}> {
  const log: TestServerLog = { calls: [], canceled: [] };
  const sessions = new Map<string, { server: Server; transport: StreamableHTTPServerTransport }>();
  let opened = 0;

  function newSession(): { server: Server; transport: StreamableHTTPServerTransport } {
    const server = new Server(
      { name: 'toolwarden-test', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map(({ call: _, ...definition }) => ({
        inputSchema: { type: 'object', properties: {} },
        ...definition,
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args, _meta } = request.params;
      log.calls.push({ name, arguments: args, meta: _meta as Record<string, unknown> | undefined });
      extra.signal.addEventListener('abort', () => log.canceled.push(name));
      const tool = tools.find((candidate) => candidate.name === name);
      if (!tool) return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
      if (!tool.call) return { content: [{ type: 'text', text: JSON.stringify(args ?? {}) }] };
      const elicit = (params: { message: string; requestedSchema: Record<string, unknown> }) =>
        server.elicitInput({ mode: 'form', ...params } as never, { relatedRequestId: extra.requestId });
      return (await tool.call(args ?? {}, { signal: extra.signal, elicit })) as never;
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        opened += 1;
        sessions.set(id, { server, transport });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    return { server, transport };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return existing.transport.handleRequest(req, res);
    if (typeof id === 'string') {
      res
        .writeHead(404)
        .end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
        );
      return;
    }
    const session = newSession();
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res);
  }

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    tools,
    log,
    listChanged: async () => {
      await Promise.all(
        [...sessions.values()].map(({ server }) => server.sendToolListChanged().catch(() => {})),
      );
    },
    sessionsOpened: () => opened,
    dropSessions: async () => {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(({ transport }) => transport.close().catch(() => {})));
    },
    close: async () => {
      await Promise.all([...sessions.values()].map(({ transport }) => transport.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
