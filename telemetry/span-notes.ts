/**
 * What code running inside a toolwarden span tells the telemetry plugin, through the active
 * OpenTelemetry context (so nothing is passed by hand, and nothing happens when no plugin records):
 *
 * | note | left by | read by the plugin |
 * |---|---|---|
 * | {@link noteToolErrorType} | a tool's `execute` (MCP: `tool_error` for an `isError` result) | `error.type` of its `execute_tool` span, instead of the retry reason or error class |
 * | {@link countInferenceCall} | a model client inside a planner turn (`modelPlanner`) | `gen_ai.invoke_agent.inference_calls` of the segment |
 */
import type { Context } from '@opentelemetry/api';
import { context, createContextKey } from '../plugins/otel-api.ts';

// The context keys, made on first use (with the API: plugins/otel-api.ts).
let keys: { toolCallNotes: symbol; invokeAgentTally: symbol } | undefined;
function contextKeys(): NonNullable<typeof keys> {
  keys ??= {
    toolCallNotes: createContextKey('toolwarden.tool_call_notes'),
    invokeAgentTally: createContextKey('toolwarden.invoke_agent_tally'),
  };
  return keys;
}

/** Notes on one tool call, kept while its `execute` runs. */
export interface ToolCallNotes {
  /** The `error.type` the tool names for its failure (a protocol's own error class). */
  errorType?: string;
}

/** Counts of one run segment, kept while its planner turns run. */
export interface InvokeAgentTally {
  inferenceCalls: number;
}

/** `ctx` carrying `notes` for the tool call that runs in it. */
export function withToolCallNotes(ctx: Context, notes: ToolCallNotes): Context {
  return ctx.setValue(contextKeys().toolCallNotes, notes);
}

/**
 * Names the `error.type` of the tool call running now (its `execute_tool` span), when the tool's
 * protocol has its own name for the failure: MCP's `tool_error` for a `CallToolResult` with
 * `isError: true` (semantic-conventions-genai docs/gen-ai/mcp.md, `error.type` note). Does nothing
 * outside a traced tool call.
 */
export function noteToolErrorType(errorType: string): void {
  const notes = context.active().getValue(contextKeys().toolCallNotes) as ToolCallNotes | undefined;
  if (notes) notes.errorType = errorType;
}

/** `ctx` carrying `tally` for the planner turns that run in it. */
export function withInvokeAgentTally(ctx: Context, tally: InvokeAgentTally): Context {
  return ctx.setValue(contextKeys().invokeAgentTally, tally);
}

/** Counts one model call for the run segment whose planner turn runs now; nothing outside one. */
export function countInferenceCall(): void {
  const tally = context.active().getValue(contextKeys().invokeAgentTally) as InvokeAgentTally | undefined;
  if (tally) tally.inferenceCalls += 1;
}
