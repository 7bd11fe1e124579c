import { CANCEL_GRACE_MS } from '../../machines/in-doubt-outcomes.ts';
import type { PendingCall } from '../../machines/run-context.ts';
import type { ExecuteToolInput, ExecuteToolOutput, RunPort } from '../../machines/run-ports.ts';
import { composeWrappers, type RunInfo, type ToolInvocation } from '../../plugins/define-plugin.ts';
import {
  CALL_ABORT,
  CallAbort,
  canceledWhileRunning,
  DEFAULT_TOOL_TIMEOUT_MS,
  type ExecuteOptions,
  executeToolCall,
  LAZY_SIGNAL,
} from '../../tools/call-tool.ts';
import { MAX_TIMEOUT_MS, type Tool } from '../../tools/define-tool.ts';
import { toPolicyRetryHint } from '../../tools/retry-hint.ts';
import { ToolError, ToolTimeoutError } from '../../tools/tool-error.ts';
import { type ToolResult, toolResultToJSON } from '../../tools/tool-result.ts';
import type { RunDeps } from './run-deps.ts';
import { TimeBudgetExhaustedError } from './within-budget.ts';

/**
 * How long past a tool's own timeout the plugins' `wrapToolCall` hooks may hold a call (ms). The
 * tool's timeout lives inside `next`; a hook that never calls `next`, or hangs after it, would
 * otherwise keep the run in `executing` for ever (issue 12: every wait has a deadline).
 */
export const WRAPPER_GRACE_MS = 1_000;

/**
 * The `executeTool` port: one admitted call (docs/architecture.md `executing`). Runs the
 * plugins' `wrapToolCall` hooks (where injected fields are filled and telemetry opens the span),
 * then the tool with its timeout. Stopping the run's `steps` actor (cancel) aborts the tool's signal. Never
 * rejects: every outcome is a ToolResult.
 *
 * What the hooks cannot do to a call: hold it past the tool's timeout plus
 * {@link WRAPPER_GRACE_MS} (the call ends as a `timeout` result and its signal aborts) or past
 * the run's time budget (`deadlineAt`: the call ends, its signal aborts, the run finalizes with
 * `time_budget`), run
 * `execute` twice (a second `next` throws), or have a call reported `executed: true` when a hook
 * threw before `execute` started.
 */
export function createExecuteToolPort(
  deps: RunDeps,
  runInfoFor: (runId: string) => RunInfo,
): RunPort<ExecuteToolInput, ExecuteToolOutput> {
  const wrappers = deps.plugins.flatMap((plugin) =>
    plugin.wrapToolCall ? [plugin.wrapToolCall.bind(plugin)] : [],
  );
  return async (task) => {
    const { input } = task;
    const { call, meta, index } = input;
    const tool = deps.catalog.get(call.name);
    // The run's time budget bounds the call too (issue 24 item 6), whatever its own timeout.
    const budgetMs =
      input.deadlineAt === undefined ? Number.POSITIVE_INFINITY : input.deadlineAt - Date.now();
    let result: ToolResult;
    if (tool && budgetMs <= 0) {
      result = outOfBudget(call.name, call.toolCallId, false);
    } else if (!tool) {
      result = {
        name: call.name,
        toolCallId: call.toolCallId,
        executed: false,
        error: new ToolError(`Unknown tool ${call.name}`),
      };
    } else {
      // The call's cancellation, its signal the task controller's when read (the tool's, and the
      // hooks' `call.signal`): the run stopping, the tool's timeout and the budget abort it.
      const abort = new CallAbort(task);
      const publishProgress = deps.publishProgress;
      if (publishProgress !== undefined) {
        const where = { turnId: meta.turnId, toolCallId: call.toolCallId, tool: tool.id };
        abort.progress = (update) => publishProgress(meta.runId, where, update);
      }
      // A call's questions to a person (`elicit()`) go to the run, where it can wait.
      if (task.elicit) abort.elicit = task.elicit.bind(task);
      if (task.onStop) task.onStop(() => abort.abort(stopped()));
      else {
        const { signal } = task.controller;
        if (signal.aborted) abort.abort(signal.reason);
        else signal.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
      }
      const invocation = toolInvocation(input, tool, ownCopy(call.preparedInput ?? {}), abort, runInfoFor);
      const once = { started: false };
      const execute = executeOnce(input, once, invocation, abort, deps.defaultToolTimeoutMs);
      const invoke = wrappers.length === 0 ? execute : composeWrappers(wrappers, execute);
      const timeoutMs = toolTimeoutMs(tool.timeoutMs, deps.defaultToolTimeoutMs);
      const timer = new CallTimer(abort, tool.id, timeoutMs, budgetMs, input.deadlineAt);
      // A cancel while the call runs: its signal aborts, and the run waits for its end a bounded while.
      task.onCancel?.(() => {
        abort.abort(canceledWhileRunning());
        timer.endIn(CANCEL_GRACE_MS, new CancelGraceError(tool.id, CANCEL_GRACE_MS));
      });
      try {
        // Invoked now, not a tick later: the durable gate reads the run's persister synchronously,
        // and a run stopped meanwhile would no longer have one. A synchronous throw is caught below.
        result = await Promise.race([invoke(invocation), timer.expired]);
      } catch (err) {
        result =
          err instanceof ToolTimeoutError
            ? heldTooLong(call.name, call.toolCallId, once.started, err)
            : err instanceof TimeBudgetExhaustedError
              ? outOfBudget(call.name, call.toolCallId, once.started)
              : {
                  name: call.name,
                  toolCallId: call.toolCallId,
                  executed: once.started,
                  error: ToolError.from(err),
                };
      } finally {
        timer.clear();
      }
    }
    return {
      index,
      result: toolResultToJSON(result),
      hint: result.retryHint ? toPolicyRetryHint(result.retryHint, meta) : undefined,
    };
  };
}

/** Why a call's signal aborts when the run stops: what an AbortController's `abort()` gives. */
function stopped(): DOMException {
  return new DOMException('This operation was aborted', 'AbortError');
}

/**
 * What the `wrapToolCall` hooks get of a call. Its `signal` is made when first read (a spread
 * copy reads it); a hook may assign one of its own, which then is the tool's.
 */
function toolInvocation(
  input: ExecuteToolInput,
  tool: Tool,
  toolInput: Record<string, unknown>,
  abort: CallAbort,
  runInfoFor: (runId: string) => RunInfo,
): ToolInvocation {
  const { call, meta, labels } = input;
  const invocation: ToolInvocation & { [CALL_ABORT]: CallAbort } = {
    tool,
    input: toolInput,
    meta,
    labels,
    droppedFields: call.droppedFields ?? [],
    run: runInfoFor(meta.runId),
    [CALL_ABORT]: abort,
  };
  Object.defineProperty(invocation, 'signal', LAZY_SIGNAL);
  // Set after, not spread in: a spread in an object literal takes V8's slow path every call.
  if (call.edited) invocation.edited = { original: call.edited.original, by: call.edited.by };
  const approval = approvalOf(call);
  if (approval) invocation.approval = approval;
  abort.invocation = invocation;
  return invocation;
}

/**
 * The cancellation of a call as the port handed it to the `wrapToolCall` hooks, while its signal
 * is the call's own (no hook assigned another): a hook that only waits for the call to stop
 * (the durable gate) listens here, and no AbortSignal is made. `undefined` for an invocation a
 * hook made: read its `signal`.
 */
export function callAbortOf(invocation: ToolInvocation): CallAbort | undefined {
  const abort = (invocation as { [CALL_ABORT]?: CallAbort })[CALL_ABORT];
  // A copy a hook made carries the key too, and maybe a signal of its own.
  return abort?.invocation === invocation && !abort.substituted ? abort : undefined;
}

/**
 * The innermost `next` of the `wrapToolCall` hooks: runs `execute` once (`once.started` says
 * whether it began); a second call rejects. The tool's signal is the call's own unless a hook
 * handed on another one (assigned, or in an invocation of its own). Made here, not inline: tsx
 * names an inline closure, an `Object.defineProperty` a call.
 */
function executeOnce(
  request: ExecuteToolInput,
  once: { started: boolean },
  original: ToolInvocation,
  abort: CallAbort,
  defaultTimeoutMs: number | undefined,
): (invocation: ToolInvocation) => Promise<ToolResult> {
  const { call } = request;
  return (invocation) => {
    if (once.started) {
      return Promise.reject(
        new ToolError(`A wrapToolCall hook called next() twice for ${call.name}; execute ran once`),
      );
    }
    once.started = true;
    const own =
      invocation === original
        ? !abort.substituted
        : abort.signalMade && !abort.substituted && invocation.signal === abort.signal;
    // The key digests the input the run recorded, not the copy hooks fill and the tool may change.
    const options: ExecuteOptions = {
      meta: invocation.meta,
      labels: invocation.labels,
      defaultTimeoutMs,
      keyInput: call.preparedInput ?? {},
    };
    if (request.restored) options.restored = request.restored;
    if (own) options.abort = abort;
    else options.signal = invocation.signal;
    return executeToolCall(invocation.tool, invocation.input, options);
  };
}

/**
 * The one timer of a call. At the tool's timeout it aborts the call (`execute` ends as a
 * `timeout` result); a hook still holding the call then has {@link WRAPPER_GRACE_MS} more before
 * the call ends without it. The run's time budget ends the call whenever it comes first.
 */
class CallTimer {
  /** Rejects when the call is held past the grace or the budget; never resolves. */
  readonly expired: Promise<never>;
  private reject: (err: unknown) => void = noop;
  private handle: ReturnType<typeof setTimeout> | undefined;
  private toolTimedOut = false;

  constructor(
    private readonly abort: CallAbort,
    private readonly toolId: string,
    private readonly timeoutMs: number,
    private readonly budgetMs: number,
    private readonly deadlineAt: number | undefined,
  ) {
    this.expired = new Promise<never>((_, reject) => {
      this.reject = reject;
    });
    this.handle = setTimeout(fireCallTimer, Math.min(timeoutMs, budgetMs), this);
  }

  fire(): void {
    const { timeoutMs, budgetMs } = this;
    const limitMs = timeoutMs + WRAPPER_GRACE_MS;
    if (!this.toolTimedOut && budgetMs > timeoutMs) {
      this.toolTimedOut = true;
      this.abort.abort(new ToolTimeoutError(this.toolId, timeoutMs));
      this.handle = setTimeout(fireCallTimer, Math.min(budgetMs, limitMs) - timeoutMs, this);
      return;
    }
    const err =
      budgetMs < limitMs
        ? new TimeBudgetExhaustedError(this.deadlineAt!)
        : new ToolTimeoutError(this.toolId, limitMs);
    this.abort.abort(err);
    this.reject(err);
  }

  clear(): void {
    clearTimeout(this.handle);
  }

  /** The call ends with `err` in `ms` at the latest (a cancel's grace), whatever its timeout. */
  endIn(ms: number, err: Error): void {
    clearTimeout(this.handle);
    this.handle = setTimeout(() => this.reject(err), ms);
  }
}

/** A canceled run's call that had not ended within the cancel's grace: its outcome is unknown. */
class CancelGraceError extends Error {
  override readonly name = 'CancelGraceError';
  constructor(toolId: string, graceMs: number) {
    super(`The run was canceled while ${toolId} ran, and it had not ended ${graceMs} ms later`);
  }
}

function fireCallTimer(timer: CallTimer): void {
  timer.fire();
}

function noop(): void {}

/** The effective timeout of a tool (ms), as {@link executeToolCall} computes it. */
export function toolTimeoutMs(declared: number | undefined, fallback: number | undefined): number {
  const requested = declared ?? fallback ?? DEFAULT_TOOL_TIMEOUT_MS;
  return requested > 0 ? Math.min(requested, MAX_TIMEOUT_MS) : DEFAULT_TOOL_TIMEOUT_MS;
}

/** A call a `wrapToolCall` hook held past its deadline: a `timeout` the planner may retry. */
function heldTooLong(name: string, toolCallId: string, started: boolean, err: ToolTimeoutError): ToolResult {
  const message = `${err.message} (a wrapToolCall hook held the call)`;
  return {
    name,
    toolCallId,
    executed: started,
    error: new ToolError(message, { recoverable: true, cause: err }),
    retryHint: { reason: 'timeout', tool: name, restrictToTool: false, missingFields: [], message },
  };
}

/**
 * A call the run's time budget stopped (or that would have started past it): not a hint, the
 * run finalizes with `time_budget` once the batch is in. `executed` is whether `execute` began.
 */
function outOfBudget(name: string, toolCallId: string, started: boolean): ToolResult {
  return {
    name,
    toolCallId,
    executed: started,
    error: new ToolError(
      started
        ? `Stopped: the run's time budget ran out while ${name} was running`
        : `Not executed: the run's time budget ran out before ${name} could run`,
      { recoverable: false },
    ),
  };
}

/**
 * A copy of the validated input the tool and `wrapToolCall` hooks may change (plugins fill
 * injected fields in place) without changing the run's context. Flat inputs, the common case,
 * are copied by spreading; nested ones are cloned.
 */
function ownCopy(input: Record<string, unknown>): Record<string, unknown> {
  for (const key in input) {
    const value = input[key];
    if (typeof value === 'object' && value !== null) return structuredClone(input);
  }
  return { ...input };
}

/**
 * The call's approval descriptor for plugins (`ToolInvocation.approval`, on the `execute_tool`
 * span): its facts, and `approvedBy` when it was held for approval (`person`: a confirmation
 * admitted it; `remembered`: a remembered approval did). `undefined` for a call with neither.
 */
function approvalOf(call: PendingCall): ToolInvocation['approval'] {
  const facts = call.approval;
  const approvedBy = call.remembered?.how === 'applied' ? 'remembered' : call.approved ? 'person' : undefined;
  if (facts === undefined && approvedBy === undefined) return undefined;
  return {
    ...(facts?.summary === undefined ? {} : { summary: facts.summary }),
    ...(facts?.risk === undefined ? {} : { risk: facts.risk }),
    ...(facts?.permissions === undefined ? {} : { permissions: facts.permissions }),
    ...(approvedBy === undefined ? {} : { approvedBy }),
  };
}
