import { MAX_FAILURE_MESSAGE_CHARS } from '../tools/call-tool.ts';
import { type ToolOutput, toolOutput } from '../tools/define-tool.ts';
import { clipText } from '../tools/preview-value.ts';
import {
  MalformedResponseError,
  ToolArgumentsRejectedError,
  ToolError,
  ToolTimeoutError,
  ToolUnavailableError,
} from '../tools/tool-error.ts';
import type { Artifact } from '../tools/tool-result.ts';
import { MESSAGE_TOO_LARGE } from './stdio-read-buffer.ts';

// JSON-RPC error codes the SDK uses (its `ErrorCode`), kept here so that importing this module
// does not load the optional peer.
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

/**
 * The JSON-RPC error code of an SDK `McpError`, or `undefined` for anything else (an HTTP
 * transport's error carries the HTTP status as `code`: that is transport trouble).
 */
function jsonRpcCode(error: unknown): number | undefined {
  if (!(error instanceof Error) || error.name !== 'McpError') return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
}

/** A `tools/call` result as the SDK's `CallToolResultSchema` parses it (only what we read). */
export interface McpCallResult {
  content?: { type: string; [key: string]: unknown }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * What a model and a UI get from an MCP tool result (docs/mcp.md §Results):
 *
 * | MCP result | toolwarden |
 * |---|---|
 * | `isError: true` | ToolArgumentsRejectedError: `invalid_arguments`, recoverable, the server's text and what to do in the message; the connection is kept |
 * | `structuredContent` | the result (checked against the tool's `outputSchema` by the boundary) |
 * | text content only | the result: the texts joined by a blank line |
 * | image, audio, embedded resource, resource link | artifacts (never sent to the model); a link is also named in the text |
 *
 * @throws ToolArgumentsRejectedError for `isError` results (the tool ran and refused this input:
 *   a missing file, an access denied, a handler that threw).
 */
export function toToolOutput(server: string, tool: string, result: McpCallResult): unknown {
  const texts: string[] = [];
  const artifacts: Artifact[] = [];
  for (const part of Array.isArray(result.content) ? result.content : []) {
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image' || part.type === 'audio') {
      artifacts.push({ kind: part.type, data: part.data, mimeType: String(part.mimeType ?? '') });
    } else if (part.type === 'resource') {
      const resource = part.resource as { uri?: string; mimeType?: string } | undefined;
      artifacts.push({
        kind: 'resource',
        data: resource,
        ...(resource?.mimeType ? { mimeType: resource.mimeType } : {}),
        ...(resource?.uri ? { title: resource.uri } : {}),
      });
    } else if (part.type === 'resource_link') {
      texts.push(`[resource ${String(part.uri)}${part.name ? ` (${String(part.name)})` : ''}]`);
      artifacts.push({ kind: 'resource_link', data: part, title: String(part.uri) });
    } else {
      artifacts.push({ kind: `mcp:${String(part.type)}`, data: part });
    }
  }
  if (result.isError === true) {
    // Cut before it is kept anywhere: the error (and its cause) go to events, spans and the transcript.
    const text = clipText(texts.join('\n\n'), MAX_FAILURE_MESSAGE_CHARS);
    throw new ToolArgumentsRejectedError(
      `MCP server "${server}" reported an error from its tool "${tool}" for this input: ${text || '(no text)'} — change the arguments as the error says, or use another tool`,
    );
  }
  const text = texts.join('\n\n');
  const value = result.structuredContent !== undefined ? result.structuredContent : text;
  return artifacts.length > 0 ? (toolOutput(value, { artifacts }) as ToolOutput) : value;
}

/**
 * The boundary's reading of a failed `tools/call` (docs/mcp.md §Errors). Only transport trouble
 * drops the connection: everything else leaves it, and the calls other runs have in flight on it,
 * alone.
 *
 * | failure | becomes | hint reason | reconnect |
 * |---|---|---|---|
 * | the call's signal aborted (the tool's `timeoutMs`, a cancel) | the abort reason | `timeout` for a timeout | no |
 * | JSON-RPC -32001, the SDK's own request timeout | ToolTimeoutError | `timeout` | no |
 * | JSON-RPC -32602 invalid params | ToolArgumentsRejectedError | `invalid_arguments` | no |
 * | JSON-RPC -32601 method not found | ToolUnavailableError | `tool_unavailable` | no |
 * | any other JSON-RPC error (-32603 internal, a server's own code) | ToolError with the server's message, recoverable | none | no |
 * | a result that is not a `CallToolResult` | ToolError naming the server | none | no |
 * | a stdio answer over `MAX_STDIO_MESSAGE_BYTES` (skipped unread, answered {@link MESSAGE_TOO_LARGE}) | MalformedResponseError | `malformed_response` | no |
 * | JSON-RPC -32000 connection closed, not connected, a closed pipe, an HTTP failure | ToolUnavailableError | `tool_unavailable` | yes |
 *
 * A server's message is cut to `MAX_FAILURE_MESSAGE_CHARS` (4,096) here, as `isError` text is,
 * and the SDK's error is not kept as the cause (its message is the whole text again): a 2 MB
 * JSON-RPC message would otherwise go whole into events, spans and the stored transcript.
 *
 * (An `isError: true` result is not a failure of the call: {@link toToolOutput} reads it.)
 * `lost` is called when the connection must be opened again.
 */
export function toToolFailure(
  server: string,
  toolId: string,
  timeoutMs: number,
  error: unknown,
  signal: AbortSignal,
  lost: () => void,
): unknown {
  if (signal.aborted) return signal.reason;
  if (ToolUnavailableError.is(error)) return error;
  const code = jsonRpcCode(error);
  const message = clipText(error instanceof Error ? error.message : String(error), MAX_FAILURE_MESSAGE_CHARS);
  if (code !== undefined && code !== CONNECTION_CLOSED) {
    if (code === REQUEST_TIMEOUT) return new ToolTimeoutError(toolId, timeoutMs);
    if (code === MESSAGE_TOO_LARGE) {
      return new MalformedResponseError(`MCP server "${server}" answered too much: ${message}`);
    }
    if (code === INVALID_PARAMS) return new ToolArgumentsRejectedError(message);
    if (code === METHOD_NOT_FOUND) {
      return new ToolUnavailableError(`MCP server "${server}" does not answer this call: ${message}`);
    }
    return new ToolError(`MCP server "${server}" answered with an error: ${message}`, {
      recoverable: true,
    });
  }
  if (isSchemaError(error)) {
    return new ToolError(
      `MCP server "${server}" answered with a result that is not an MCP tool result: ${clipText(message, 500)}`,
    );
  }
  // Connection closed, not connected, a closed pipe, a refused HTTP connection: transport
  // trouble, not the tool's.
  lost();
  return new ToolUnavailableError(
    `MCP server "${server}" failed the call (${message}); the next call reconnects`,
  );
}

/** zod's error for a response the SDK's result schema refused (zod 3 and 4 name it `ZodError`). */
function isSchemaError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError');
}
