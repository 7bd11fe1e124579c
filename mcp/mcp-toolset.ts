import { closestIds } from '../tools/closest-ids.ts';
import type { Tool, ToolContext } from '../tools/define-tool.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import { ToolUnavailableError } from '../tools/tool-error.ts';
import { fromToolSource, type ToolSource } from '../tools/tool-source.ts';
import { clientCapabilities, type McpClientFeatures, serveClientFeatures } from './client-features.ts';
import { McpConnection, type McpTransport } from './mcp-connection.ts';
import { printable } from './mcp-names.ts';
import { buildMcpTool, type McpToolSettings } from './mcp-tool-build.ts';
import { callMcpTool, type McpCallSettings, type McpProgress } from './mcp-tool-call.ts';
import { listToolEntries, type McpToolDefinition, toolsOfEntries } from './mcp-tool-list.ts';

export { type McpTransport, TOOL_CALL_META_KEY } from './mcp-connection.ts';
export type { McpProgress } from './mcp-tool-call.ts';

/** Options of {@link mcpToolset}. */
export interface McpToolsetOptions extends McpClientFeatures {
  /** The toolset: tool ids are `<name>.<tool>` (letters, digits, `_`, `-`). */
  name: string;
  transport: McpTransport;
  /**
   * Each call's limit in ms without news from the server: a `notifications/progress` starts it
   * again (the SDK's `resetTimeoutOnProgress`). Default 60,000.
   */
  timeoutMs?: number;
  /**
   * A call's limit in ms however much progress it reports (the SDK's `maxTotalTimeout`; the
   * tool's `timeoutMs` at the boundary). Default 10 × `timeoutMs`.
   */
  maxTotalTimeoutMs?: number;
  /** Told of each progress notification of a call (also a `mcp.progress` event on its `execute_tool` span). */
  onProgress?: (progress: McpProgress, meta: ToolCallMeta) => void;
  /** Tools the server marks destructive ask for approval before each call (`awaiting.confirmation`). Default false. */
  confirmDestructive?: boolean;
  /** Told about tools skipped or renamed and descriptions cleaned. Default `console.warn`. */
  onWarning?: (message: string) => void;
  /** How the client introduces itself. Default `{ name: 'toolwarden', version: '0' }`. */
  clientInfo?: { name: string; version: string };
  /** Tools kept from a listing; the rest are dropped with a warning. Default {@link MAX_MCP_TOOLS}. */
  maxTools?: number;
  /** `tools/list` pages read at most; a server that pages on is cut off with a warning. Default {@link MAX_MCP_LIST_PAGES}. */
  maxListPages?: number;
}

/** An MCP server's tools as toolwarden tools (docs/mcp.md §Client). */
export interface McpToolset {
  readonly name: string;
  /** The server's tools as of the last listing; pass them to `createRuntime({ tools })`. */
  readonly tools: Tool[];
  /** Warnings given so far (also sent to `onWarning`). */
  readonly warnings: readonly string[];
  /** Lists the tools again (also done on `notifications/tools/list_changed`). */
  refresh(): Promise<void>;
  /** Called after each listing with the tools then offered. */
  onToolsChanged?: (tools: Tool[]) => void;
  /** Closes the connection (a stdio server process is ended). */
  close(): Promise<void>;
}

/** Listing pages read at most by default: a server that pages forever is cut off with a warning. */
export const MAX_MCP_LIST_PAGES = 100;
/** Tools kept from one server's listing by default (issue 25 item 6: 100,000 tools stalled the process 13 s; 500 keep a listing's GC pauses near 50 ms). */
export const MAX_MCP_TOOLS = 500;

/**
 * Connects to an MCP server and offers its tools behind the tool boundary (issue 13,
 * docs/mcp.md §Client). Each tool's `inputSchema` becomes the boundary's schema (as
 * `toolFromJsonSchema` reads it), so a bad call from a model gets a RetryHint and never reaches
 * the server; an `outputSchema` checks `structuredContent` (`malformed_response`). Annotations
 * become tags: `read-only`, `destructive`, `idempotent`, `open-world` (MCP's defaults for absent
 * hints), plus `mcp` and `mcp:<name>`.
 *
 * A call carries the run's ToolCallMeta and the W3C `traceparent` of its `execute_tool` span in
 * the request's `_meta`, so an instrumented server joins the run's trace. A tool the server
 * removed answers `tool_unavailable` naming the closest tools; a lost connection is
 * `tool_unavailable` and the next call reconnects.
 *
 * @throws ToolUnavailableError when the server cannot be reached or listed (its name, the cause
 *   and the tail of its stderr in the message).
 */
export async function mcpToolset(options: McpToolsetOptions): Promise<McpToolset> {
  if (!/^[A-Za-z0-9_-]+$/.test(options.name)) {
    throw new TypeError(
      `mcpToolset: name must be letters, digits, _ or - (it prefixes tool ids), got "${printable(options.name)}"`,
    );
  }
  const warn = options.onWarning ?? ((message: string) => console.warn(`[toolwarden mcp] ${message}`));
  const warnings: string[] = [];
  const warning = (message: string) => {
    warnings.push(message);
    warn(message);
  };
  const connection = new McpConnection(
    options.name,
    options.transport,
    options.clientInfo ?? { name: 'toolwarden', version: '0' },
    clientCapabilities(options),
  );
  /** Calls running now, by toolCallId: a server's request (elicitation, sampling) is told about them. */
  const inFlight = new Map<string, ToolCallMeta>();
  connection.beforeConnect = (client) => serveClientFeatures(client, options, () => [...inFlight.values()]);
  const perCallMs = options.timeoutMs ?? 60_000;
  const totalMs = options.maxTotalTimeoutMs ?? 10 * perCallMs;
  const calling: McpCallSettings = {
    server: options.name,
    connection,
    perCallMs,
    totalMs,
    onProgress: options.onProgress,
    inFlight,
  };
  const building: McpToolSettings = {
    server: options.name,
    totalMs,
    confirmDestructive: options.confirmDestructive,
    warning,
    execute: (definition, id, input, ctx) => call(definition, id, input, ctx),
  };
  /** Server tool name → the toolwarden tool made for it, as of the last listing. */
  let offered = new Map<string, Tool>();
  const tools: Tool[] = [];
  let listing: Promise<void> | undefined;

  /** Runtimes following this server's list (tools/tool-source.ts). */
  const followers = new Set<() => void>();
  const source: ToolSource = {
    name: options.name,
    tools,
    subscribe: (listener) => {
      followers.add(listener);
      return () => followers.delete(listener);
    },
  };
  const toolset: McpToolset = {
    name: options.name,
    tools,
    warnings,
    refresh: () => {
      listing ??= list().finally(() => {
        listing = undefined;
      });
      return listing;
    },
    close: () => {
      followers.clear();
      return connection.close();
    },
  };

  connection.onConnect = (client) => {
    void import('@modelcontextprotocol/sdk/types.js').then(({ ToolListChangedNotificationSchema }) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        toolset
          .refresh()
          .catch((error: unknown) =>
            warning(`refreshing the tools of "${options.name}" after list_changed failed: ${String(error)}`),
          );
      });
    });
  };

  async function list(): Promise<void> {
    const client = await connection.client();
    const definitions = await listToolEntries(
      client,
      options.name,
      { maxTools: options.maxTools ?? MAX_MCP_TOOLS, maxPages: options.maxListPages ?? MAX_MCP_LIST_PAGES },
      warning,
    );
    const next = await toolsOfEntries(definitions, options.name, offered, toTool, warning);
    offered = next;
    tools.splice(0, tools.length, ...next.values());
    toolset.onToolsChanged?.(tools);
    for (const follower of [...followers]) follower();
  }

  /** The tool for one listed definition, or undefined (skipped, with a warning naming why). Never throws. */
  function toTool(definition: McpToolDefinition, segment: string): Tool | undefined {
    const id = `${options.name}.${segment}`;
    try {
      const tool = buildMcpTool(definition, segment, id, building);
      return tool === undefined ? undefined : fromToolSource(tool, source);
    } catch (error) {
      warning(`tool ${id} skipped: ${(error as Error).message}`);
      return undefined;
    }
  }

  async function call(
    definition: McpToolDefinition,
    id: string,
    input: unknown,
    ctx: ToolContext,
  ): Promise<unknown> {
    const { name } = definition;
    if (!offered.has(name)) {
      const ids = [...offered.values()].map((tool) => tool.id);
      const near = closestIds(id, ids);
      throw new ToolUnavailableError(
        `MCP server "${options.name}" no longer offers this tool${near.length > 0 ? `; closest: ${near.join(', ')}` : ''}`,
      );
    }
    return callMcpTool(calling, definition, id, input, ctx);
  }

  try {
    await toolset.refresh();
  } catch (error) {
    await connection.close();
    throw ToolUnavailableError.is(error)
      ? error
      : new ToolUnavailableError(
          `MCP server "${options.name}" could not list its tools: ${String(error)}${connection.stderrTail()}`,
          {
            cause: error,
          },
        );
  }
  return toolset;
}
