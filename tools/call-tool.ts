import { isRecord, validationHint } from './build-retry-hint.ts';
import { inDoubtResult, type RestoredCall, rerunnable } from './call-in-doubt.ts';
import { closestIds } from './closest-ids.ts';
import { MAX_TIMEOUT_MS, type Tool, type ToolContext, ToolOutput } from './define-tool.ts';
import type { ElicitationAnswer, ElicitationChannel, ElicitationRequest } from './elicitation.ts';
import { idempotencyKey } from './idempotency-key.ts';
import { type ParseLimits, parseArguments, toJsonValue } from './parse-arguments.ts';
import { clipText, PREVIEW_CHARS, previewValue } from './preview-value.ts';
import type { RetryHint } from './retry-hint.ts';
import type { ToolCallMeta } from './tool-call-meta.ts';
import type { ToolCatalog } from './tool-catalog.ts';
import {
  MalformedResponseError,
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
 * | `execute` threw MalformedResponseError | `malformed_response` | false      | true     |
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
  /**
   * Dotted paths of `__proto__`/`constructor`/`prototype` keys an earlier copy of the input (an
   * approver's edit, `run-answers.ts`) already left out: refused as `forbidden_key`, as if the
   * input still had them.
   */
  forbiddenKeys?: readonly string[];
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
  const forbiddenPaths = options.forbiddenKeys
    ? [...options.forbiddenKeys, ...parsed.forbiddenKeys]
    : parsed.forbiddenKeys;
  const forbidden = forbiddenPaths.map((path) => ({
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
   * The controller of `signal`, when it is the call's own: its signal is then the tool's and the
   * timeout aborts it; without it the call's own signal is chained to `signal`.
   */
  controller?: AbortController;
  /**
   * The call's cancellation, kept by the caller (the run's `executeTool` port), which also times
   * the call out: when given, `signal`, `controller` and the tool's timeout are the caller's, and
   * no timer is set here. The tool's `ctx.signal` is made only if the tool reads it.
   */
  abort?: CallAbort;
  /**
   * Used when the tool declares no `timeoutMs`. Default 60 000 ms; values above
   * {@link MAX_TIMEOUT_MS} are clamped to it, and a value that is not positive means the default.
   */
  defaultTimeoutMs?: number;
  /**
   * What `ctx.idempotencyKey` digests: the call's validated input as the run recorded it (never
   * changed in place; without injected fields). Default: the input given, as it is when the call
   * starts.
   */
  keyInput?: unknown;
  /**
   * The call was started before and its end never recorded (a restored run, a retried Temporal
   * activity): a tool that is neither `readOnly` nor `idempotent` is reconciled or left in doubt,
   * never run again blindly (tools/call-in-doubt.ts).
   */
  restored?: RestoredCall;
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
  const { signal: parent, controller: given } = options;
  const stopped = options.abort ? options.abort.aborted : parent?.aborted;
  if (stopped) {
    // Stopped before it started (a cancel, a run lost to another owner): nothing may run.
    const reason = options.abort ? options.abort.reason : parent?.reason;
    return timed(crash(call, ToolError.from(reason ?? new Error('Run canceled')), false), started);
  }
  let abort = options.abort;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onParentAbort: (() => void) | undefined;
  if (!abort) {
    const requested = tool.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    // setTimeout fires at once for delays above 2^31-1 ms (Infinity included): clamp instead.
    const timeoutMs = requested > 0 ? Math.min(requested, MAX_TIMEOUT_MS) : DEFAULT_TOOL_TIMEOUT_MS;
    const callAbort = new CallAbort();
    // The caller's own controller (it may watch it): the tool's signal, aborted by the timeout.
    if (given !== undefined && given.signal === parent) callAbort.use(given);
    abort = callAbort;
    if (parent) {
      onParentAbort = () => callAbort.abort(parent.reason ?? new Error('Run canceled'));
      parent.addEventListener('abort', onParentAbort, { once: true });
    }
    timer = setTimeout(() => callAbort.abort(new ToolTimeoutError(tool.id, timeoutMs)), timeoutMs);
  }
  const ended = abort;
  const restored = options.restored !== undefined && !rerunnable(tool) ? options.restored : undefined;
  const settling = { reconciling: false };
  try {
    const output = await Promise.race([
      Promise.resolve().then(() => {
        const ctx = toolContext(options, ended, input);
        return restored ? reconcileOrRun(tool, input, ctx, settling) : tool.execute!(input, ctx);
      }),
      // A cancel's abort is the tool's to honour: its return, or its throw, is the call's end.
      new Promise<never>((_, reject) =>
        ended.whenAborted((reason) => {
          if (!waitedFor(reason)) reject(reason);
        }),
      ),
    ]);
    return timed(decodeOutput(tool, call, output), started);
  } catch (err) {
    // No reconcile, or it could not tell (it threw, timed out, said `unknown`): in doubt.
    if (restored && (err === IN_DOUBT || settling.reconciling)) {
      return timed(inDoubtResult(tool, call, restored.cause, restored.startedAt), started);
    }
    return timed(executionFailure(tool, call, err, ended.reason), started);
  } finally {
    clearTimeout(timer);
    if (onParentAbort) parent?.removeEventListener('abort', onParentAbort);
  }
}

/** What `execute` is given: its `signal` is made when the tool first reads it (spreads read it too). */
export function toolContext(options: ExecuteOptions, abort: CallAbort, input?: unknown): ToolContext {
  const ctx = {
    meta: options.meta,
    labels: options.labels ?? {},
    [CALL_ABORT]: abort,
    // The key's input, kept (not the key): most tools never read it, and a digest is a few µs.
    // Without `keyInput`, the key is made now, before `execute` may change its input.
    [KEY_INPUT]:
      options.keyInput === undefined
        ? { key: idempotencyKey(options.meta.runId, options.meta.toolCallId, input) }
        : { input: options.keyInput },
  };
  Object.defineProperty(ctx, 'signal', LAZY_SIGNAL);
  Object.defineProperty(ctx, 'idempotencyKey', LAZY_KEY);
  return ctx as typeof ctx & ToolContext;
}

/** Where a ToolContext keeps what its idempotency key is made from (or the key, once made). */
const KEY_INPUT = Symbol('toolwarden.keyInput');

/** `ctx.idempotencyKey`: made on first read from the call's meta and recorded input, then kept. */
const LAZY_KEY: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { meta: ToolCallMeta; [KEY_INPUT]: { key?: string; input?: unknown } }): string {
    const source = this[KEY_INPUT];
    source.key ??= idempotencyKey(this.meta.runId, this.meta.toolCallId, source.input);
    return source.key;
  },
};

/** Thrown by {@link reconcileOrRun} when the call stays in doubt. */
const IN_DOUBT = Symbol('toolwarden.inDoubt');

/**
 * A restored call of a tool that may not run twice: its `reconcile` says whether the effect
 * happened (`done`: its output, nothing runs), did not (`not_done`: run it now), or cannot tell;
 * without `reconcile` the call stays in doubt. `settling.reconciling` is true while `reconcile`
 * runs, so its throw or timeout counts as "cannot tell".
 */
async function reconcileOrRun(
  tool: Tool,
  input: unknown,
  ctx: ToolContext,
  settling: { reconciling: boolean },
): Promise<unknown> {
  if (tool.reconcile === undefined) throw IN_DOUBT;
  settling.reconciling = true;
  const outcome = await tool.reconcile(input as never, ctx);
  settling.reconciling = false;
  if (outcome?.status === 'done') return outcome.output;
  if (outcome?.status === 'not_done') return tool.execute!(input, ctx);
  throw IN_DOUBT;
}

/** How far a running call got, as its tool reports it (MCP's `notifications/progress`, a task's status). */
export interface ToolProgress {
  /** Grows as the work goes on; with `total`, `progress / total` is the share done. */
  progress?: number;
  total?: number;
  /** What it is doing now, e.g. `MCP task working: Gathering sources...`. */
  message?: string;
}

/**
 * Reports progress of the call `ctx` belongs to: in a run it is published live on `run.events$`
 * as a `tool_progress` RunEvent (not stored: there may be many), nowhere otherwise. Never throws.
 */
export function reportToolProgress(ctx: ToolContext, update: ToolProgress): void {
  try {
    (ctx as { [CALL_ABORT]?: CallAbort })[CALL_ABORT]?.progress?.(update);
  } catch {
    // A listener's failure is not the tool's.
  }
}

/**
 * Asks a person through the run the call belongs to, and waits for the answer while the call
 * keeps running (its timeout keeps counting: a wait longer than the call's `timeoutMs` ends as
 * `cancel`). Resolves `undefined` when the call is not in a run that can ask (`callTool` on its
 * own, a Temporal activity). Never rejects.
 */
export function elicit(
  ctx: ToolContext,
  request: ElicitationRequest,
): Promise<ElicitationAnswer | undefined> {
  const abort = (ctx as { [CALL_ABORT]?: CallAbort })[CALL_ABORT];
  const channel = abort?.elicit;
  if (abort === undefined || channel === undefined) return Promise.resolve(undefined);
  if (abort.aborted) return Promise.resolve({ action: 'cancel' });
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: ElicitationAnswer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    // The run's end declines synchronously before the call aborts (run-steps.ts), so a cancel of
    // the run reads as `decline`, the call's own timeout as `cancel`.
    abort.whenAborted(() => settle({ action: 'cancel' }));
    try {
      channel(request, settle);
    } catch {
      settle({ action: 'cancel' });
    }
  });
}

/** Where an object handed out for a call (its ToolContext, its ToolInvocation) keeps the call's {@link CallAbort}. */
export const CALL_ABORT = Symbol('toolwarden.callAbort');

/**
 * The `signal` of an object with a {@link CALL_ABORT}: an accessor made once, defined on each
 * (an object literal with a getter of its own is ~4x slower to make, and V8 keeps it as a
 * dictionary). Enumerable, so spreads and JSON see it; assigning one replaces it (the call's
 * cancellation is told, see {@link CallAbort.substituted}).
 */
export const LAZY_SIGNAL: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { [CALL_ABORT]: CallAbort }): AbortSignal {
    return this[CALL_ABORT].signal;
  },
  set(this: { [CALL_ABORT]: CallAbort }, value: AbortSignal | undefined) {
    this[CALL_ABORT].substituted = true;
    Object.defineProperty(this, 'signal', { value, writable: true, enumerable: true, configurable: true });
  },
};

/** Marks the abort of a call whose run was canceled while it ran: see {@link canceledWhileRunning}. */
const WAITED_FOR = Symbol('toolwarden.waitedFor');

/**
 * Why a call's signal aborts when its run is canceled while the call runs (the run machine's
 * `canceling`, docs/durability.md §Effects): an `AbortError`, as `AbortController.abort()` gives,
 * marked so that {@link executeToolCall} does not end the call at the abort (as it does for a
 * timeout) but waits for what the tool returns; the run's port bounds that wait.
 */
export function canceledWhileRunning(): DOMException {
  return Object.assign(new DOMException('This operation was aborted: the run was canceled', 'AbortError'), {
    [WAITED_FOR]: true,
  });
}

function waitedFor(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && WAITED_FOR in reason;
}

/**
 * One tool call's cancellation: aborted once (its timeout, the run's time budget, the run
 * stopping), with its reason. Its AbortSignal is made only when something reads it: a controller,
 * its signal and a listener cost ~3.8 µs a call on Node 20, and most tools never look. What must
 * end when the call aborts (the race of {@link executeToolCall}) is told through {@link whenAborted}.
 */
export class CallAbort {
  aborted = false;
  reason: unknown = undefined;
  /** A `wrapToolCall` hook assigned a signal of its own to the call: that one is the tool's. */
  substituted = false;
  /** The invocation the run's port made for the call, if any. */
  invocation: object | undefined = undefined;
  /** Where the call's {@link reportToolProgress} goes (the run's live `tool_progress` events), if anywhere. */
  progress: ((update: ToolProgress) => void) | undefined = undefined;
  /** Where the call's `elicit()` questions go (the run's `awaiting.elicitation`), if anywhere. */
  elicit: ElicitationChannel | undefined = undefined;
  private controller: AbortController | undefined;
  private listeners: ((reason: unknown) => void) | ((reason: unknown) => void)[] | undefined;

  /**
   * `source` gives the controller whose signal to hand out when it is first read (the run's
   * `steps` task: its controller is aborted when the run stops too); else one of its own is made.
   */
  constructor(private readonly source?: { readonly controller: AbortController }) {}

  /** The call's signal, made on first read (aborted already when the call was). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = this.source?.controller ?? new AbortController();
      if (this.aborted && !this.controller.signal.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Hands out `controller`'s signal from now on (the call not yet aborted). */
  use(controller: AbortController): void {
    this.controller = controller;
  }

  /** Whether {@link signal} was read. */
  get signalMade(): boolean {
    return this.controller !== undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (typeof listeners === 'function') listeners(reason);
    else if (listeners) for (const listener of listeners) listener(reason);
  }

  /** Calls `listener` with the reason when the call aborts, at once if it has. */
  whenAborted(listener: (reason: unknown) => void): void {
    const listeners = this.listeners;
    if (this.aborted) listener(this.reason);
    else if (listeners === undefined) this.listeners = listener;
    else if (typeof listeners === 'function') this.listeners = [listeners, listener];
    else listeners.push(listener);
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
  if (MalformedResponseError.is(err)) {
    const message = `Tool ${tool.id} got an answer it cannot use: ${err.message}`;
    return failure(call, message, infraHint(tool.id, 'malformed_response', message), true, err);
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
