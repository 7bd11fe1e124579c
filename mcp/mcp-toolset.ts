import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { context, trace } from '@opentelemetry/api';
import { z } from 'zod';
import { noteToolErrorType } from '../telemetry/span-notes.ts';
import { reportToolProgress } from '../tools/call-tool.ts';
import { closestIds } from '../tools/closest-ids.ts';
import type { Tool, ToolContext } from '../tools/define-tool.ts';
import { measureSchema } from '../tools/json-schema-budget.ts';
import { toolFromJsonSchema } from '../tools/json-schema-tool.ts';
import { withLinearPatterns } from '../tools/linear-pattern.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import { ToolUnavailableError } from '../tools/tool-error.ts';
import { fromToolSource, type ToolSource } from '../tools/tool-source.ts';
import { clientCapabilities, type McpClientFeatures, serveClientFeatures } from './client-features.ts';
import { McpConnection, type McpTransport, TOOL_CALL_META_KEY } from './mcp-connection.ts';
import { cleanDescription, printable, toolSegment } from './mcp-names.ts';
import { type McpCallResult, toToolFailure, toToolOutput } from './mcp-result.ts';
import { trackCallContext } from './run-elicitation.ts';

export { type McpTransport, TOOL_CALL_META_KEY } from './mcp-connection.ts';

/** A server's `notifications/progress` for one call (MCP: `progress` grows; `total` and `message` optional). */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

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

/** A `tools/list` page as read before each tool is checked on its own: one malformed entry must not refuse the page. */
const ToolListPageSchema = z.looseObject({
  tools: z.array(z.unknown()).optional(),
  nextCursor: z.string().optional(),
});

/** Lets other work run between tools while a listing is converted (each conversion is bounded, their sum is not). */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface McpToolDefinition {
  name: string;
  /** MCP `execution.taskSupport`: `required` tools are called as Tasks; `optional` and `forbidden` ones directly. */
  taskSupport?: 'required' | 'optional' | 'forbidden';
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

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
    const maxTools = options.maxTools ?? MAX_MCP_TOOLS;
    const maxPages = options.maxListPages ?? MAX_MCP_LIST_PAGES;
    const definitions: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= maxPages) {
        warning(`server "${options.name}" kept paging tools/list; read the first ${maxPages} pages`);
        break;
      }
      const result = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ToolListPageSchema,
      );
      const listed = result.tools ?? [];
      const room = maxTools - definitions.length;
      definitions.push(...listed.slice(0, room));
      cursor = result.nextCursor;
      if (listed.length > room || (cursor !== undefined && definitions.length >= maxTools)) {
        warning(`server "${options.name}" lists more than ${maxTools} tools; kept the first ${maxTools}`);
        break;
      }
      if (cursor === undefined) break;
    }
    const next = new Map<string, Tool>();
    const taken = new Set<string>();
    for (const [index, entry] of definitions.entries()) {
      if (index > 0) await yieldToLoop();
      const definition = readDefinition(entry);
      if (definition === undefined || next.has(definition.name)) {
        warning(
          `server "${options.name}" listed a tool without a name or an object inputSchema, or one name twice; skipped`,
        );
        continue;
      }
      const kept = offered.get(definition.name);
      const segment = kept ? kept.id.slice(options.name.length + 1) : toolSegment(definition.name, taken);
      taken.add(segment);
      const tool = toTool(definition, segment);
      if (tool) next.set(definition.name, tool);
    }
    offered = next;
    tools.splice(0, tools.length, ...next.values());
    toolset.onToolsChanged?.(tools);
    for (const follower of [...followers]) follower();
  }

  /** The tool for one listed definition, or undefined (skipped, with a warning naming why). Never throws. */
  function toTool(definition: McpToolDefinition, segment: string): Tool | undefined {
    const id = `${options.name}.${segment}`;
    try {
      const tool = buildTool(definition, segment, id);
      return tool === undefined ? undefined : fromToolSource(tool, source);
    } catch (error) {
      warning(`tool ${id} skipped: ${(error as Error).message}`);
      return undefined;
    }
  }

  function buildTool(definition: McpToolDefinition, segment: string, id: string): Tool | undefined {
    if (segment !== definition.name) {
      warning(`tool "${printable(definition.name)}" of "${options.name}" is offered as "${id}"`);
    }
    const description = cleanDescription(definition.description);
    if (description.changed.length > 0) warning(`description of ${id}: ${description.changed.join(', ')}`);
    const annotations = definition.annotations ?? {};
    const readOnly = annotations.readOnlyHint === true;
    const destructive = !readOnly && annotations.destructiveHint !== false;
    const tags = [
      'mcp',
      `mcp:${options.name}`,
      ...(readOnly ? ['read-only'] : []),
      ...(destructive ? ['destructive'] : []),
      ...(annotations.idempotentHint === true ? ['idempotent'] : []),
      ...(annotations.openWorldHint !== false ? ['open-world'] : []),
    ];
    let output: z.ZodType | undefined;
    if (definition.outputSchema !== undefined) {
      try {
        const refused = measureSchema(definition.outputSchema).refused;
        if (refused !== undefined) throw new Error(refused);
        output = withLinearPatterns(() =>
          z.fromJSONSchema(definition.outputSchema as Parameters<typeof z.fromJSONSchema>[0]),
        ).value;
      } catch (error) {
        warning(
          `outputSchema of ${id} cannot be read (${(error as Error).message}); results are not checked`,
        );
      }
    }
    return toolFromJsonSchema(
      { name: id, description: description.text, parameters: definition.inputSchema ?? { type: 'object' } },
      {
        onWarning: warning,
        ...(definition.title === undefined
          ? {}
          : { title: cleanDescription(definition.title).text.slice(0, 200) }),
        tags,
        ...(output === undefined ? {} : { output }),
        // The SDK enforces `timeoutMs` between progress notifications; the boundary the total.
        timeoutMs: totalMs,
        ...(options.confirmDestructive && destructive ? { requiresConfirmation: true } : {}),
        // What re-running a call means after a crash (docs/durability.md §Effects). A server's
        // hints are hints: a policy or the app may distrust them (wrap the tool without them).
        ...(readOnly ? { readOnly: true } : {}),
        ...(!readOnly && annotations.idempotentHint === true ? { idempotent: true } : {}),
        execute: (input, ctx) => call(definition, id, input, ctx),
      },
    );
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
    const client: Client = await connection.client();
    const span = trace.getSpan(context.active());
    const params = { name, arguments: input as Record<string, unknown>, _meta: requestMeta(ctx) };
    const requestOptions = {
      signal: ctx.signal,
      timeout: perCallMs,
      resetTimeoutOnProgress: true,
      // The boundary's own deadline (`totalMs`) aborts `signal` first (the SDK then sends
      // notifications/cancelled); the SDK's total is only a backstop.
      maxTotalTimeout: totalMs + 5_000,
      onprogress: (progress: McpProgress) => {
        span?.addEvent('mcp.progress', {
          'mcp.progress': progress.progress,
          ...(progress.total === undefined ? {} : { 'mcp.progress.total': progress.total }),
          ...(progress.message === undefined
            ? {}
            : { 'mcp.progress.message': progress.message.slice(0, 500) }),
        });
        options.onProgress?.(progress, ctx.meta);
        reportToolProgress(ctx, progress);
      },
    };
    inFlight.set(ctx.meta.toolCallId, ctx.meta);
    trackCallContext(ctx);
    let result: McpCallResult;
    try {
      const { CallToolResultSchema } = await sdkTypes();
      result = (
        definition.taskSupport === 'required'
          ? await callAsTask(client, params, requestOptions, ctx, span)
          : await client.request({ method: 'tools/call', params }, CallToolResultSchema, requestOptions)
      ) as McpCallResult;
    } catch (error) {
      throw toToolFailure(options.name, id, perCallMs, error, ctx.signal, () => connection.lost(client));
    } finally {
      inFlight.delete(ctx.meta.toolCallId);
      describeCall(connection, client, ctx);
    }
    // Outside the `try`: an `isError` answer is the tool's own failure, never the connection's.
    // MCP's name for a tool that ran and reported a failure (docs/gen-ai/mcp.md, `error.type`).
    if (result.isError === true) noteToolErrorType('tool_error');
    return toToolOutput(options.name, name, result);
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

let types: Promise<typeof import('@modelcontextprotocol/sdk/types.js')> | undefined;
/** The SDK's schemas, imported once (the optional peer is loaded on first use, not with this module). */
function sdkTypes(): Promise<typeof import('@modelcontextprotocol/sdk/types.js')> {
  types ??= import('@modelcontextprotocol/sdk/types.js');
  return types;
}

/**
 * A `tools/call` as an MCP Task (2025-11-25; the tool's `execution.taskSupport` is `required`):
 * the server answers at once with a task, the SDK polls `tasks/get` until it ends and reads its
 * result with `tasks/result` (which also carries the server's elicitation or sampling when the
 * task needs input). Each status is a `mcp.task` event on the call's span and its
 * `mcp.task.status` attribute, so a run waiting on a task shows it; an aborted call (its
 * timeout, a cancel) sends `tasks/cancel`.
 */
async function callAsTask(
  client: Client,
  params: Record<string, unknown>,
  requestOptions: Record<string, unknown>,
  ctx: ToolContext,
  span: ReturnType<typeof trace.getSpan>,
): Promise<unknown> {
  const { CallToolResultSchema } = await sdkTypes();
  const { signal } = ctx;
  let taskId: string | undefined;
  const cancel = () => {
    if (taskId !== undefined) void client.experimental.tasks.cancelTask(taskId).catch(() => {});
  };
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const stream = client.experimental.tasks.requestStream(
      { method: 'tools/call', params } as never,
      CallToolResultSchema,
      { ...requestOptions, task: {} },
    );
    for await (const message of stream) {
      if (message.type === 'result') return message.result;
      if (message.type === 'error') throw message.error;
      taskId = message.task.taskId;
      span?.setAttributes({ 'mcp.task.id': taskId, 'mcp.task.status': message.task.status });
      // The run shows it waits on the task: a live tool_progress event per status.
      reportToolProgress(ctx, {
        message: `MCP task ${message.task.status}${message.task.statusMessage ? `: ${message.task.statusMessage.slice(0, 300)}` : ''}`,
      });
      span?.addEvent('mcp.task', {
        'mcp.task.id': taskId,
        'mcp.task.status': message.task.status,
        ...(message.task.statusMessage === undefined
          ? {}
          : { 'mcp.task.status_message': message.task.statusMessage.slice(0, 500) }),
      });
    }
    throw new Error('the task ended without a result');
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/**
 * The MCP side of the call on its `execute_tool` span (the active span while `execute` runs), as
 * OpenTelemetry's MCP conventions name it: `mcp.method.name`, `mcp.session.id` (HTTP),
 * `mcp.protocol.version`, `jsonrpc.request.id`.
 */
function describeCall(connection: McpConnection, client: Client, ctx: ToolContext): void {
  const span = trace.getSpan(context.active());
  if (span === undefined || !span.isRecording()) return;
  const sent = connection.sentRequest(client, ctx.meta.toolCallId);
  span.setAttributes({
    'mcp.method.name': 'tools/call',
    ...(sent?.sessionId === undefined ? {} : { 'mcp.session.id': sent.sessionId }),
    ...(sent?.protocolVersion === undefined ? {} : { 'mcp.protocol.version': sent.protocolVersion }),
    ...(sent?.requestId === undefined ? {} : { 'jsonrpc.request.id': String(sent.requestId) }),
  });
}

/** `_meta` of a call: the run's ToolCallMeta and the W3C trace context of the active span. */
function requestMeta(ctx: ToolContext): Record<string, unknown> {
  const meta: Record<string, unknown> = { [TOOL_CALL_META_KEY]: ctx.meta };
  const span = trace.getSpan(context.active())?.spanContext();
  if (span !== undefined && trace.isSpanContextValid(span)) {
    meta.traceparent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 1).toString(16).padStart(2, '0')}`;
    if (span.traceState !== undefined) meta.tracestate = span.traceState.serialize();
  }
  return meta;
}

/** A listed tool as far as it can be read: a string name and an object `inputSchema`; a non-string description or non-object annotations are dropped. */
function readDefinition(entry: unknown): McpToolDefinition | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const raw = entry as Record<string, unknown>;
  const isObject = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === 'object' && !Array.isArray(value);
  if (typeof raw.name !== 'string' || (raw.inputSchema !== undefined && !isObject(raw.inputSchema)))
    return undefined;
  const taskSupport = isObject(raw.execution) ? raw.execution.taskSupport : undefined;
  return {
    name: raw.name,
    ...(taskSupport === 'required' || taskSupport === 'optional' || taskSupport === 'forbidden'
      ? { taskSupport }
      : {}),
    ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    // MCP's display name: the tool's own `title`, else the older `annotations.title`.
    ...(typeof raw.title === 'string'
      ? { title: raw.title }
      : isObject(raw.annotations) && typeof raw.annotations.title === 'string'
        ? { title: raw.annotations.title }
        : {}),
    ...(isObject(raw.inputSchema) ? { inputSchema: raw.inputSchema } : {}),
    ...(isObject(raw.outputSchema) ? { outputSchema: raw.outputSchema } : {}),
    ...(isObject(raw.annotations)
      ? { annotations: raw.annotations as McpToolDefinition['annotations'] }
      : {}),
  };
}
