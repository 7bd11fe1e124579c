import { isRecord, validationHint } from './build-retry-hint.ts';
import { closestIds } from './closest-ids.ts';
import { MAX_TIMEOUT_MS, type Tool, ToolOutput } from './define-tool.ts';
import { type ParseLimits, parseArguments, toJsonValue } from './parse-arguments.ts';
import { clipText, PREVIEW_CHARS, previewValue } from './preview-value.ts';
import type { RetryHint } from './retry-hint.ts';
import type { ToolCallMeta } from './tool-call-meta.ts';
import type { ToolCatalog } from './tool-catalog.ts';
import {
  RateLimitedError,
  ToolArgumentsRejectedError,
  ToolError,
  ToolTimeoutError,
  ToolUnavailableError,
} from './tool-error.ts';
import type { ToolResult } from './tool-result.ts';
import { dottedPath, MAX_HINT_ISSUES, validateToolInput } from './validate-input.ts';

/**
 * The tool boundary (docs/tool-boundary.md §Failures), in the two halves the run machine calls from its `validating`
 * and `executing` states, plus {@link callTool} that does both.
 *
 * | situation                          | reason               | restrictToTool | executed |
 * |------------------------------------|----------------------|----------------|----------|
 * | required field absent              | `missing_fields`     | true           | false    |
 * | other schema violation, bad JSON   | `invalid_arguments`  | true           | false    |
 * | tool unknown or disabled           | `tool_unavailable`   | false          | false    |
 * | `execute` exceeded `timeoutMs`     | `timeout`            | false          | true     |
 * | `execute` threw RateLimitedError   | `rate_limited`       | false          | true     |
 * | `execute` threw ToolUnavailableError | `tool_unavailable` | false          | true     |
 * | `execute` threw ToolArgumentsRejectedError | `invalid_arguments` | false    | true     |
 * | result fails `output` schema       | `malformed_response` | false          | true     |
 * | `execute` threw anything else      | no hint, `recoverable: false` | —     | true     |
 *
 * None of these functions throw: every outcome is a {@link ToolResult}.
 */
/** One call as a planner proposes it, with the id it runs under. */
export interface ToolCallRequest {
  /** The tool id the planner asked for. */
  name: string;
  toolCallId: string;
  /** An object, or JSON text as LLM providers deliver arguments. */
  input: unknown;
}

/** How {@link prepareToolCall} (and {@link callTool}) checks a call. */
export interface PrepareOptions {
  /** False for tools disabled by the app or a policy; such calls become `tool_unavailable`. */
  isEnabled?: (toolId: string) => boolean;
  limits?: ParseLimits;
}

export type PreparedCall =
  | {
      ok: true;
      tool: Tool;
      /** The validated input the model sent, injected fields left for plugins to fill. */
      input: Record<string, unknown>;
      /** Injected fields the model tried to set; dropped (docs/tool-boundary.md: a model can never set them). */
      droppedFields: string[];
    }
  | { ok: false; result: ToolResult };

export const VALIDATION_FAILED = 'Argument validation failed';

/**
 * Characters of one issue's message in a refused call's error message (five issues at most are
 * described there): with the paths clipped (`preview-value.ts`), a refusal's message stays under
 * ~3 KB whatever the input (issue 24 item 8: long unknown keys gave a 98 KB message).
 */
const ISSUE_MESSAGE_CHARS = 300;

/** Parses, looks up and validates one call; never runs the tool. */
export function prepareToolCall(
  catalog: ToolCatalog,
  call: ToolCallRequest,
  options: PrepareOptions = {},
): PreparedCall {
  // A planner decoding JSON may hand over a number or null where the name should be.
  if (typeof call.name !== 'string') call = { ...call, name: previewValue(call.name) };
  const tool = catalog.get(call.name);
  const parsed = parseArguments(call.input, options.limits);
  if (!tool || !(options.isEnabled?.(tool.id) ?? true)) {
    const priorInput = parsed.ok && isRecord(parsed.value) ? parsed.value : rawPrior(call.input);
    const { isEnabled } = options;
    return {
      ok: false,
      result: unavailable(catalog, call, tool ? 'disabled' : 'unknown', priorInput, (id) =>
        isEnabled ? (isEnabled(id) ?? true) : true,
      ),
    };
  }
  if (!parsed.ok) {
    const message = `${VALIDATION_FAILED} for ${tool.id}: ${parsed.message}`;
    const hint = validationHint(tool, 'invalid_arguments', rawPrior(call.input), [], [], message);
    return { ok: false, result: failure(call, message, hint, false) };
  }
  const forbidden = parsed.forbiddenKeys.map((path) => ({
    path,
    constraint: 'forbidden_key',
    message: `Field name "${path.split('.').pop()}" is not allowed`,
  }));
  const value = parsed.value;
  const droppedFields: string[] = [];
  if (isRecord(value)) {
    for (const field of tool.inject ?? []) {
      if (Object.hasOwn(value, field)) {
        droppedFields.push(field);
        delete value[field];
      }
    }
  }
  const validation = validateToolInput(tool, value);
  const priorInput = isRecord(value) ? value : { $value: value };
  if (!validation.ok || forbidden.length > 0) {
    const issues = [...forbidden, ...(validation.ok ? [] : validation.issues)].slice(0, MAX_HINT_ISSUES);
    const issueCount = forbidden.length + (validation.ok ? 0 : validation.issueCount);
    const reason = validation.ok ? 'invalid_arguments' : validation.reason;
    const missing = validation.ok ? [] : validation.missingFields;
    const message = `${VALIDATION_FAILED} for ${tool.id}: ${issues
      .slice(0, 5)
      .map((issue) => `${issue.path || '(root)'}: ${clipText(issue.message, ISSUE_MESSAGE_CHARS)}`)
      .join('; ')}${issueCount > 5 ? `; and ${issueCount - 5} more` : ''}`;
    const hint = validationHint(tool, reason, priorInput, missing, issues, message);
    return { ok: false, result: failure(call, message, hint, false) };
  }
  return { ok: true, tool, input: validation.value as Record<string, unknown>, droppedFields };
}

/** What {@link executeToolCall} (and {@link callTool}) runs a call with. */
export interface ExecuteOptions {
  meta: ToolCallMeta;
  labels?: Record<string, string>;
  /** Cancels the call (the run was canceled); the result is a non-recoverable ToolError. */
  signal?: AbortSignal;
  /**
   * The controller of `signal`, when it is the call's own (the run's `executeTool` port: one
   * controller per call). Its signal is then the tool's and the timeout aborts it; without it a
   * controller of the call's own is chained to `signal` (two controllers and a listener a call).
   */
  controller?: AbortController;
  /**
   * Used when the tool declares no `timeoutMs`. Default 60 000 ms; values above
   * {@link MAX_TIMEOUT_MS} are clamped to it, and a value that is not positive means the default.
   */
  defaultTimeoutMs?: number;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/**
 * Runs a prepared call's `execute` with an AbortSignal and its timeout, decodes the output, and
 * maps typed errors to hints. `input` must already be valid and hold any injected fields.
 */
export async function executeToolCall(
  tool: Tool,
  input: unknown,
  options: ExecuteOptions,
): Promise<ToolResult> {
  const call = { name: tool.id, toolCallId: options.meta.toolCallId };
  const started = performance.now();
  if (!tool.execute) {
    return timed(
      crash(call, new ToolError(`Tool ${tool.id} has no execute function (it is an external tool)`), false),
      started,
    );
  }
  if (tool.inject?.length) {
    const full = tool.input.safeParse(input);
    if (!full.success) {
      const fields = full.error.issues.map((issue) => dottedPath(issue.path)).join(', ');
      return timed(
        crash(
          call,
          new ToolError(`Injected fields of ${tool.id} were not filled by a plugin: ${fields}`),
          false,
        ),
        started,
      );
    }
    input = full.data;
  }
  if (options.signal?.aborted) {
    // Stopped before it started (a cancel, a run lost to another owner): nothing may run.
    return timed(
      crash(call, ToolError.from(options.signal.reason ?? new Error('Run canceled')), false),
      started,
    );
  }
  const requested = tool.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  // setTimeout fires at once for delays above 2^31-1 ms (Infinity included): clamp instead.
  const timeoutMs = requested > 0 ? Math.min(requested, MAX_TIMEOUT_MS) : DEFAULT_TOOL_TIMEOUT_MS;
  const { signal: parent, controller: given } = options;
  const own = given !== undefined && given.signal === parent;
  const controller = own ? given : new AbortController();
  const onParentAbort = own ? undefined : () => controller.abort(parent?.reason ?? new Error('Run canceled'));
  if (onParentAbort) parent?.addEventListener('abort', onParentAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new ToolTimeoutError(tool.id, timeoutMs)), timeoutMs);
  try {
    const output = await Promise.race([
      Promise.resolve().then(() =>
        tool.execute!(input, { meta: options.meta, signal: controller.signal, labels: options.labels ?? {} }),
      ),
      new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(controller.signal.reason);
        else
          controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
      }),
    ]);
    return timed(decodeOutput(tool, call, output), started);
  } catch (err) {
    return timed(executionFailure(tool, call, err, controller.signal.reason), started);
  } finally {
    clearTimeout(timer);
    if (onParentAbort) parent?.removeEventListener('abort', onParentAbort);
  }
}

/**
 * The result with its duration since `started` (`performance.now()`). Object.assign, not
 * `{ ...result, telemetry }`: Node 20's V8 takes ~0.5 µs for each member added after a spread.
 */
function timed(result: ToolResult, started: number): ToolResult {
  return Object.assign({}, result, { telemetry: { durationMs: performance.now() - started } });
}

/** {@link prepareToolCall} then {@link executeToolCall}; the whole boundary in one call. */
export async function callTool(
  catalog: ToolCatalog,
  call: ToolCallRequest,
  options: PrepareOptions & ExecuteOptions,
): Promise<ToolResult> {
  const prepared = prepareToolCall(catalog, call, options);
  if (!prepared.ok) return prepared.result;
  return executeToolCall(prepared.tool, prepared.input, {
    ...options,
    meta: { ...options.meta, toolCallId: call.toolCallId },
  });
}

function decodeOutput(
  tool: Tool,
  call: Pick<ToolResult, 'name' | 'toolCallId'>,
  output: unknown,
): ToolResult {
  const envelope = output instanceof ToolOutput ? output : undefined;
  const value = envelope ? envelope.result : output;
  const extras = envelope?.extras ?? {};
  if (tool.bounded && !extras.bounds) {
    return malformed(tool, call, `Tool ${tool.id} is declared bounded but returned no Bounds`);
  }
  if (tool.output) {
    const decoded = tool.output.safeParse(value);
    if (!decoded.success) {
      const detail = decoded.error.issues
        .slice(0, 5)
        .map((issue) => `${dottedPath(issue.path) || '(root)'}: ${issue.message}`)
        .join('; ');
      return malformed(
        tool,
        call,
        `Tool ${tool.id} returned a result that does not match its output schema: ${detail}`,
      );
    }
    return jsonResult(tool, call, decoded.data, extras);
  }
  return jsonResult(tool, call, value, extras);
}

/**
 * Largest tool result accepted, in bytes of its JSON (16 MiB). A result is stored in the run's
 * snapshot and events: a bigger one belongs in an artifact or behind a bounded tool (docs/tool-boundary.md §Bounded results).
 */
export const MAX_TOOL_RESULT_BYTES = 16 * 1024 * 1024;

/**
 * The result as the run keeps it: a plain JSON copy, or `malformed_response` when JSON cannot
 * carry it (a function, a cycle, a BigInt: issue 12 defect 1, which crashed the process when the
 * store copied the snapshot) or it is over {@link MAX_TOOL_RESULT_BYTES}. `undefined` stays
 * `undefined` (a tool that returns nothing).
 */
function jsonResult(
  tool: Tool,
  call: Pick<ToolResult, 'name' | 'toolCallId'>,
  value: unknown,
  extras: object,
): ToolResult {
  if (value === undefined) return Object.assign({}, call, { executed: true, result: value }, extras);
  const json = toJsonValue(value, { subject: 'Tool result', maxBytes: MAX_TOOL_RESULT_BYTES });
  if (!json.ok)
    return malformed(tool, call, `Tool ${tool.id} returned a result JSON cannot carry: ${json.message}`);
  return Object.assign({}, call, { executed: true, result: json.value }, extras);
}

function malformed(tool: Tool, call: Pick<ToolResult, 'name' | 'toolCallId'>, message: string): ToolResult {
  return failure(call, message, infraHint(tool.id, 'malformed_response', message), true);
}

function executionFailure(
  tool: Tool,
  call: Pick<ToolResult, 'name' | 'toolCallId'>,
  err: unknown,
  abortReason: unknown,
): ToolResult {
  // By brand, not instanceof: a tool may throw another copy of toolwarden's errors (issue 25 item 7).
  if (ToolTimeoutError.is(err) || (ToolTimeoutError.is(abortReason) && err === abortReason)) {
    const message = (err as ToolTimeoutError).message;
    return failure(call, message, infraHint(tool.id, 'timeout', message), true, err);
  }
  if (RateLimitedError.is(err)) {
    const message = `Tool ${tool.id} was rate limited: ${err.message}`;
    const hint = { ...infraHint(tool.id, 'rate_limited', message), retryAfterMs: err.retryAfterMs };
    return failure(call, message, hint, true, err);
  }
  if (ToolArgumentsRejectedError.is(err)) {
    const message = `Tool ${tool.id} refused its arguments: ${err.message}`;
    return failure(call, message, infraHint(tool.id, 'invalid_arguments', message), true, err);
  }
  if (ToolUnavailableError.is(err)) {
    const message = `Tool ${tool.id} is unavailable: ${err.message}`;
    return failure(call, message, infraHint(tool.id, 'tool_unavailable', message), true, err);
  }
  return crash(call, ToolError.from(err), true);
}

function infraHint(tool: string, reason: RetryHint['reason'], message: string): RetryHint {
  return { reason, tool, restrictToTool: false, missingFields: [], message };
}

/**
 * Characters of a failed call's message (the ToolError's and its hint's) the boundary keeps: a
 * tool's own error text is part of it, and may be megabytes (issue 24 item 8: clip every message).
 */
export const MAX_FAILURE_MESSAGE_CHARS = 4_096;

function failure(
  call: Pick<ToolResult, 'name' | 'toolCallId'>,
  full: string,
  given: RetryHint,
  executed: boolean,
  cause?: unknown,
): ToolResult {
  const message = clipText(full, MAX_FAILURE_MESSAGE_CHARS);
  const hint = given.message.length > MAX_FAILURE_MESSAGE_CHARS ? { ...given, message } : given;
  return {
    name: call.name,
    toolCallId: call.toolCallId,
    executed,
    error: new ToolError(message, { recoverable: true, cause }),
    retryHint: hint,
  };
}

function crash(
  call: Pick<ToolResult, 'name' | 'toolCallId'>,
  error: ToolError,
  executed: boolean,
): ToolResult {
  return { name: call.name, toolCallId: call.toolCallId, executed, error };
}

function unavailable(
  catalog: ToolCatalog,
  call: ToolCallRequest,
  why: 'unknown' | 'disabled',
  priorInput: Record<string, unknown>,
  enabled: (id: string) => boolean,
): ToolResult {
  const candidates = closestIds(call.name, catalog.ids.filter(enabled));
  const name = String(call.name).slice(0, 200);
  const message = `${why === 'unknown' ? 'Unknown tool' : 'Disabled tool'} "${name}". ${
    candidates.length > 0 ? `Closest known tools: ${candidates.join(', ')}.` : 'No tools are available.'
  }`;
  const hint: RetryHint = { ...infraHint(name, 'tool_unavailable', message), priorInput };
  return failure({ name, toolCallId: call.toolCallId }, message, hint, false);
}

/** `{ $raw }` for input that is not usable JSON (docs/tool-boundary.md §Failures row 3): the text, or a preview of the value. */
function rawPrior(input: unknown): Record<string, unknown> {
  return { $raw: typeof input === 'string' ? truncate(input) : previewValue(input) };
}

function truncate(text: string): string {
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…(truncated)` : text;
}
