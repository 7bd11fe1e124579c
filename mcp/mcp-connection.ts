import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MAX_TOOL_RESULT_BYTES } from '../tools/call-tool.ts';
import { ToolUnavailableError } from '../tools/tool-error.ts';
import { StdioReadBuffer } from './stdio-read-buffer.ts';

/**
 * How to reach an MCP server (docs/mcp.md §Client): a command run over stdio, a streamable HTTP
 * endpoint, or a `Client` the app already connected (which the toolset then never closes or
 * reconnects).
 */
export type McpTransport =
  | {
      /** The server's executable, e.g. `process.execPath` or `npx`. */
      command: string;
      args?: string[];
      /** Added to the SDK's default environment (PATH, HOME, ...), never the whole `process.env`. */
      env?: Record<string, string>;
      cwd?: string;
    }
  | {
      /** The streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`. */
      url: string | URL;
      headers?: Record<string, string>;
    }
  | { client: Client };

/** Key of the run's ToolCallMeta in a request's `_meta`. */
export const TOOL_CALL_META_KEY = 'toolwarden/toolCallMeta';

/** What went on the wire for one `tools/call`: its JSON-RPC id, the HTTP session, the protocol version. */
export interface SentRequest {
  requestId: string | number;
  sessionId?: string;
  protocolVersion?: string;
}

/** What a connection's transport reported, per client. */
interface Wire {
  protocolVersion?: string;
  sessionId: () => string | undefined;
  /** `tools/call` request ids by the call's ToolCallMeta `toolCallId`, until read. */
  requests: Map<string, string | number>;
}

/** Request ids remembered per connection before the oldest are dropped (each is read once, at once). */
const MAX_REMEMBERED_REQUESTS = 1_000;

/**
 * Largest message read from a stdio server: a result of `MAX_TOOL_RESULT_BYTES` (16 MiB, the
 * documented limit) with its JSON-RPC envelope (the SDK's default is 10 MiB). A bigger message is
 * skipped unread and its call answered with an error; the process is kept ({@link StdioReadBuffer}).
 */
export const MAX_STDIO_MESSAGE_BYTES = MAX_TOOL_RESULT_BYTES + 1024 * 1024;

/** Lines of a stdio server's stderr kept to explain a failure. */
const STDERR_LINES = 20;

/**
 * One server connection, opened on first use and opened again on the next use after it was lost
 * (a crashed process, a dropped HTTP session). Never throws anything but
 * {@link ToolUnavailableError} from {@link McpConnection.client}.
 */
export class McpConnection {
  private connecting: Promise<Client> | undefined;
  private closed = false;
  private readonly stderr: string[] = [];
  private readonly wires = new WeakMap<Client, Wire>();
  /** Called with each new connection (the first and every reconnect). */
  onConnect: ((client: Client) => void) | undefined;
  /** Called with each new client before it connects: its request handlers (roots, elicitation, sampling). */
  beforeConnect: ((client: Client) => Promise<void>) | undefined;

  constructor(
    readonly server: string,
    private readonly transport: McpTransport,
    private readonly clientInfo: { name: string; version: string },
    /** Declared in `initialize` (client-features.ts). */
    private readonly capabilities: Record<string, unknown> = {},
  ) {}

  /** The connected client. @throws ToolUnavailableError naming the server and why it cannot be reached. */
  client(): Promise<Client> {
    if (this.closed)
      return Promise.reject(new ToolUnavailableError(`MCP server "${this.server}" was closed`));
    this.connecting ??= this.connect().catch((error: unknown) => {
      this.connecting = undefined;
      throw new ToolUnavailableError(
        `MCP server "${this.server}" cannot be reached: ${describe(error)}${this.stderrTail()}`,
        { cause: error },
      );
    });
    return this.connecting;
  }

  /**
   * Forgets the connection `failed` (a transport failure was seen on it) and closes it: the next
   * {@link client} call connects again. A connection that already replaced it is kept.
   */
  lost(failed: Client): void {
    if ('client' in this.transport) return;
    const current = this.connecting;
    void current
      ?.then((client) => {
        if (client !== failed) return;
        if (this.connecting === current) this.connecting = undefined;
        return client.close();
      })
      .catch(() => {});
  }

  /** The wire details of the `tools/call` sent with ToolCallMeta `toolCallId` on `client` (read once). */
  sentRequest(client: Client, toolCallId: string): SentRequest | undefined {
    const wire = this.wires.get(client);
    const requestId = wire?.requests.get(toolCallId);
    if (wire === undefined || requestId === undefined) return undefined;
    wire.requests.delete(toolCallId);
    const sessionId = wire.sessionId();
    return {
      requestId,
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(wire.protocolVersion === undefined ? {} : { protocolVersion: wire.protocolVersion }),
    };
  }

  /** What the server wrote on stderr lately, for error messages. */
  stderrTail(): string {
    return this.stderr.length === 0 ? '' : ` (server stderr: ${this.stderr.slice(-5).join(' | ')})`;
  }

  async close(): Promise<void> {
    this.closed = true;
    const current = this.connecting;
    this.connecting = undefined;
    if ('client' in this.transport) return;
    const client = await current?.catch(() => undefined);
    await client?.close().catch(() => {});
  }

  private async connect(): Promise<Client> {
    if ('client' in this.transport) return this.transport.client;
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js').catch((error: unknown) => {
      throw new Error(
        'toolwarden/mcp needs the optional peer @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk',
        { cause: error },
      );
    });
    const client = new Client(this.clientInfo, { capabilities: this.capabilities });
    await this.beforeConnect?.(client);
    const transport = await this.openTransport();
    client.onclose = () => {
      // Only the connection in use is forgotten; a replaced one closing late changes nothing.
      if (this.connecting !== undefined) {
        void this.connecting.then(
          (current) => {
            if (current === client) this.connecting = undefined;
          },
          () => {},
        );
      }
    };
    client.onerror = () => {};
    this.wires.set(client, watch(transport));
    await client.connect(transport);
    this.onConnect?.(client);
    return client;
  }

  private async openTransport() {
    const transport = this.transport as Exclude<McpTransport, { client: Client }>;
    if ('url' in transport) {
      const { StreamableHTTPClientTransport } = await import(
        '@modelcontextprotocol/sdk/client/streamableHttp.js'
      );
      return new StreamableHTTPClientTransport(new URL(transport.url), {
        requestInit: { headers: transport.headers ?? {} },
      });
    }
    const { StdioClientTransport, getDefaultEnvironment } = await import(
      '@modelcontextprotocol/sdk/client/stdio.js'
    );
    const stdio = new StdioClientTransport({
      command: transport.command,
      args: transport.args ?? [],
      env: { ...getDefaultEnvironment(), ...transport.env },
      ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
      stderr: 'pipe',
    });
    // The SDK's reader is quadratic in a message's size and kills the process over its limit.
    if ('_readBuffer' in stdio) {
      const { deserializeMessage } = await import('@modelcontextprotocol/sdk/shared/stdio.js');
      (stdio as unknown as { _readBuffer: StdioReadBuffer })._readBuffer = new StdioReadBuffer(
        MAX_STDIO_MESSAGE_BYTES,
        deserializeMessage,
      );
    }
    stdio.stderr?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        this.stderr.push(line.slice(0, 300));
        if (this.stderr.length > STDERR_LINES) this.stderr.shift();
      }
    });
    return stdio;
  }
}

/**
 * Watches what a transport sends and negotiates: the id of each `tools/call` (by its ToolCallMeta)
 * and the protocol version the client settles on (the SDK hands it to `setProtocolVersion`, which
 * only HTTP transports define; a stdio one gets it here too).
 */
function watch(transport: Transport): Wire {
  const wire: Wire = {
    sessionId: () => transport.sessionId,
    requests: new Map(),
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if ('method' in message && message.method === 'tools/call' && 'id' in message) {
      const meta = (message.params?._meta as Record<string, unknown> | undefined)?.[TOOL_CALL_META_KEY];
      const toolCallId = (meta as { toolCallId?: unknown } | undefined)?.toolCallId;
      if (typeof toolCallId === 'string') {
        if (wire.requests.size >= MAX_REMEMBERED_REQUESTS) {
          wire.requests.delete(wire.requests.keys().next().value as string);
        }
        wire.requests.set(toolCallId, message.id);
      }
    }
    return send(message, options);
  };
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    wire.protocolVersion = version;
    setProtocolVersion?.(version);
  };
  return wire;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
