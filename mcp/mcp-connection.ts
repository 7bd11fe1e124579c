import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolUnavailableError } from '../tools/tool-error.ts';

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
  /** Called with each new connection (the first and every reconnect). */
  onConnect: ((client: Client) => void) | undefined;

  constructor(
    readonly server: string,
    private readonly transport: McpTransport,
    private readonly clientInfo: { name: string; version: string },
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

  /** Forgets the connection: the next {@link client} call connects again. */
  lost(): void {
    if ('client' in this.transport) return;
    const current = this.connecting;
    this.connecting = undefined;
    void current?.then((client) => client.close()).catch(() => {});
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
    const client = new Client(this.clientInfo, { capabilities: {} });
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
