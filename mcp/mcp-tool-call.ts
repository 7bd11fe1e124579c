import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { context, trace } from '@opentelemetry/api';
import { noteToolErrorType } from '../telemetry/span-notes.ts';
import { reportToolProgress } from '../tools/call-tool.ts';
import type { ToolContext } from '../tools/define-tool.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import { type McpConnection, TOOL_CALL_META_KEY } from './mcp-connection.ts';
import { type McpCallResult, toToolFailure, toToolOutput } from './mcp-result.ts';
import type { McpToolDefinition } from './mcp-tool-list.ts';
import { trackCallContext } from './run-elicitation.ts';

/**
 * One `tools/call` of a server's tool (docs/mcp.md §Client, §Errors): with the run's ToolCallMeta
 * and trace context in `_meta`, progress resetting its timeout, as an MCP Task when the tool
 * requires one, its failures as ToolErrors, the MCP attributes on its span.
 *
 * @module
 */

/** A server's `notifications/progress` for one call (MCP: `progress` grows; `total` and `message` optional). */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** What a call needs of its toolset. */
export interface McpCallSettings {
  /** The toolset's name (the server, in messages). */
  server: string;
  connection: McpConnection;
  /** The SDK's timeout between progress notifications, ms. */
  perCallMs: number;
  /** The call's limit however much progress it reports, ms (the boundary's `timeoutMs`). */
  totalMs: number;
  onProgress?: ((progress: McpProgress, meta: ToolCallMeta) => void) | undefined;
  /** Calls running now, by toolCallId: a server's request (elicitation, sampling) is told about them. */
  inFlight: Map<string, ToolCallMeta>;
}

/**
 * Calls `definition` with `input` on the toolset's server; resolves with the tool's output.
 *
 * @throws ToolError (from `toToolFailure`) for a failed request: a timeout, a JSON-RPC error, a lost connection.
 */
export async function callMcpTool(
  settings: McpCallSettings,
  definition: McpToolDefinition,
  id: string,
  input: unknown,
  ctx: ToolContext,
): Promise<unknown> {
  const { name } = definition;
  const client: Client = await settings.connection.client();
  const span = trace.getSpan(context.active());
  const params = { name, arguments: input as Record<string, unknown>, _meta: requestMeta(ctx) };
  const requestOptions = {
    signal: ctx.signal,
    timeout: settings.perCallMs,
    resetTimeoutOnProgress: true,
    // The boundary's own deadline (`settings.totalMs`) aborts `signal` first (the SDK then sends
    // notifications/cancelled); the SDK's total is only a backstop.
    maxTotalTimeout: settings.totalMs + 5_000,
    onprogress: (progress: McpProgress) => {
      span?.addEvent('mcp.progress', {
        'mcp.progress': progress.progress,
        ...(progress.total === undefined ? {} : { 'mcp.progress.total': progress.total }),
        ...(progress.message === undefined ? {} : { 'mcp.progress.message': progress.message.slice(0, 500) }),
      });
      settings.onProgress?.(progress, ctx.meta);
      reportToolProgress(ctx, progress);
    },
  };
  settings.inFlight.set(ctx.meta.toolCallId, ctx.meta);
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
    throw toToolFailure(settings.server, id, settings.perCallMs, error, ctx.signal, () =>
      settings.connection.lost(client),
    );
  } finally {
    settings.inFlight.delete(ctx.meta.toolCallId);
    describeCall(settings.connection, client, ctx);
  }
  // Outside the `try`: an `isError` answer is the tool's own failure, never the connection's.
  // MCP's name for a tool that ran and reported a failure (docs/gen-ai/mcp.md, `error.type`).
  if (result.isError === true) noteToolErrorType('tool_error');
  return toToolOutput(settings.server, name, result);
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
