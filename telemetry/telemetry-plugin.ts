/**
 * The telemetry plugin (docs/telemetry.md): OpenTelemetry spans and metrics for every run, built on the
 * public plugin hooks and `@opentelemetry/api` only. `createRuntime` installs it by default; with
 * no SDK registered every call is a no-op.
 *
 * A run is one trace. Its work is cut into **segments**: a segment starts when the run starts or
 * starts working again (an answer arrived, a backoff ended, `runtime.resume` restored it), and
 * ends when the run awaits or ends. Each segment is an `invoke_agent` span, the root of that
 * segment's plan and tool spans; the first segment's W3C trace context is kept in the run's
 * snapshot (`RunInfo.traceContext`), and later segments, in this process or another, are its
 * children, so the whole run stays one trace. Each later segment also names itself there as the
 * latest (`toolwarden.segment.traceparent`, stored by the host), and the next one links it, even
 * after a restart.
 *
 * | span | opened by | parent | ends |
 * |---|---|---|---|
 * | `invoke_agent {agent}` (segment 1) | `onRunStart('start')` | the caller's active span, if any; a fork (`runtime.fork`) links its parent's span | the run awaits or ends |
 * | `invoke_agent {agent}` (segment n) | the first hook or event of a working run with none open (`run_resumed` of a run restored working) | segment 1 (stored context); links the segment before (seen here, else stored; `toolwarden.resume.*`) and the caller's span | the run awaits or ends (with the opt-in: once its state changes' store versions are in) |
 * | `plan {agent}` | `wrapPlan` | the segment | the planner returns or throws |
 * | `execute_tool {tool}` | `wrapToolCall` (the tool's `execute` runs in its context) | the segment | the call returns |
 * | `execute_tool {tool}` (instant) | a `tool_result` no `wrapToolCall` saw: rejected in validation, denied, refused, external | the segment | at once |
 *
 * | event | becomes |
 * |---|---|
 * | `state_changed` to `awaiting.*` | segment ends, `toolwarden.run.status=awaiting`, `toolwarden.run.awaiting` |
 * | `state_changed` to a working state | a segment opens if none is |
 * | `tool_result` | instant tool span (if needed); `toolwarden.tool.calls` |
 * | `retry_hint` | `toolwarden.retry_hints` (the span event comes from the result's hint) |
 * | `policy_decision` | `toolwarden.policy_decision` span event on the segment; `toolwarden.policy.decisions` |
 * | `run_completed` / `run_failed` / `run_canceled` | segment ends with that status (failed: ERROR, `error.type`) |
 * | `onStateChange` (opt-in only) | `gen_ai.execution.state.changed` on the segment: changed key count, store version |
 *
 * With `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` (`semconv-opt-in.ts`) the spans
 * follow the latest GenAI conventions and the `gen_ai.*` metrics of `genai-metrics.ts` are recorded.
 *
 * A segment whose root span is not recording (no SDK registered, or sampled out) opens no
 * plan or tool spans: every standard sampler drops the children of a dropped root, and this keeps
 * the default, SDK-less install close to free. Metrics are recorded either way. When nothing at all
 * would see a segment (no recording span, no recording instrument, no context manager registered)
 * its planner turns and tool calls are passed straight on; an SDK registered meanwhile is followed
 * from the run's next segment (the next run, or the run's next working stretch).
 *
 * Errors: a hook of this plugin never throws and never changes a result; a `redact` hook that
 * throws records `[redaction failed]` instead of the content.
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  type Exception,
  isSpanContextValid,
  type Link,
  type MeterProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type {
  PlanInvocation,
  Plugin,
  RunInfo,
  RunStateChange,
  ToolInvocation,
} from '../plugins/define-plugin.ts';
import type { PlanResult } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { RetryHint } from '../tools/retry-hint.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_EXECUTION_STATE_CHANGED_KEY_COUNT,
  ATTR_GEN_AI_EXECUTION_STATE_VERSION,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_TOOLWARDEN_AGENT_ID,
  ATTR_TOOLWARDEN_FORK_AT_EVENT,
  ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID,
  ATTR_TOOLWARDEN_PLAN_KIND,
  ATTR_TOOLWARDEN_PLAN_RESULT_KIND,
  ATTR_TOOLWARDEN_POLICY_DECISION_DETAIL,
  ATTR_TOOLWARDEN_POLICY_DECISION_KIND,
  ATTR_TOOLWARDEN_POLICY_HOOK,
  ATTR_TOOLWARDEN_POLICY_NAME,
  ATTR_TOOLWARDEN_POLICY_NOTE,
  ATTR_TOOLWARDEN_RESUME_RESTORED,
  ATTR_TOOLWARDEN_RESUME_STATE,
  ATTR_TOOLWARDEN_RETRY_HINT_MESSAGE,
  ATTR_TOOLWARDEN_RETRY_HINT_MISSING_FIELDS,
  ATTR_TOOLWARDEN_RETRY_HINT_REASON,
  ATTR_TOOLWARDEN_RETRY_HINT_RESTRICT_TO_TOOL,
  ATTR_TOOLWARDEN_RETRY_HINT_RETRY_AFTER_MS,
  ATTR_TOOLWARDEN_RUN_AWAITING,
  ATTR_TOOLWARDEN_RUN_FINALIZE_REASON,
  ATTR_TOOLWARDEN_RUN_ID,
  ATTR_TOOLWARDEN_RUN_STATUS,
  ATTR_TOOLWARDEN_SESSION_ID,
  ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT,
  ATTR_TOOLWARDEN_TOOL_CALL_EDITED,
  ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY,
  ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED,
  ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT,
  ATTR_TOOLWARDEN_TOOL_CALL_ID,
  ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS,
  ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME,
  ATTR_TOOLWARDEN_TOOL_CALL_PARENT_ID,
  ATTR_TOOLWARDEN_TURN_ID,
  EVENT_GEN_AI_EXECUTION_STATE_CHANGED,
  EVENT_TOOLWARDEN_POLICY_DECISION,
  EVENT_TOOLWARDEN_RETRY_HINT,
  executeToolSpanName,
  FORK_AT_LABEL,
  FORK_PARENT_LABEL,
  FORK_TRACEPARENT_LABEL,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OPERATION_NAME_VALUE_PLAN,
  GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
  INSTRUMENTATION_SCOPE,
  invokeAgentSpanName,
  type PlanResultKind,
  planSpanName,
  type RunSegmentStatus,
  type ToolCallOutcome,
} from './attributes.ts';
import { instrumentSource, type ToolwardenInstruments } from './metrics.ts';
import { genAiLatestExperimental } from './semconv-opt-in.ts';
import {
  type InvokeAgentTally,
  type ToolCallNotes,
  withInvokeAgentTally,
  withToolCallNotes,
} from './span-notes.ts';
import {
  latestSegmentOf,
  spanContextFromCarrier,
  traceContextCarrier,
  withLatestSegment,
} from './trace-context.ts';

/** The name the telemetry plugin registers under; `createRuntime` skips its default when a plugin has it. */
export const TELEMETRY_PLUGIN_NAME = 'toolwarden.telemetry';

/**
 * The value of `gen_ai.tool.name` on metrics for a tool id the runtime never advertised nor ran
 * (a model's invented name): metric attributes must stay low-cardinality. Spans keep the name.
 */
export const OTHER_TOOL = '_OTHER';

/** What a {@link RedactContent} hook is told about the value it may redact. */
export interface ContentInfo {
  kind: 'arguments' | 'result';
  /** The tool id. */
  tool: string;
  toolCallId: string;
  runId: string;
}

/**
 * Returns what to record instead of `value` (strings as they are, anything else as JSON), or
 * `undefined` to record nothing. Called only when content capture is on.
 */
export type RedactContent = (value: unknown, info: ContentInfo) => unknown;

/** `createRuntime({ telemetry })` and {@link telemetryPlugin} options (docs/telemetry.md). */
export interface TelemetryPluginOptions {
  /** Where spans go. Default: the global provider of `@opentelemetry/api` (a no-op until an SDK registers). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global provider, followed if it is registered later. */
  meterProvider?: MeterProvider;
  /**
   * Record tool arguments and results (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`).
   * Default: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment (the
   * GenAI instrumentations' switch), else off: they may hold personal data.
   */
  captureContent?: boolean;
  /** Applied to every captured value before it is recorded. */
  redact?: RedactContent;
  /**
   * Emit the latest experimental GenAI conventions instead of v1.36.0's (`semconv-opt-in.ts`,
   * docs/telemetry.md §Conventions). Default: `OTEL_SEMCONV_STABILITY_OPT_IN` lists
   * `gen_ai_latest_experimental`.
   */
  latestGenAiConventions?: boolean;
}

/** `toolwarden.tool_call.outcome` of a result. */
export function toolCallOutcome(result: {
  executed: boolean;
  error?: unknown;
  inDoubt?: unknown;
  retryHint?: { reason: string };
}): ToolCallOutcome {
  // Started, its end never recorded (docs/durability.md §Effects): neither a success nor an error.
  if (result.inDoubt !== undefined || result.retryHint?.reason === 'outcome_unknown') return 'in_doubt';
  if (!result.executed) return 'rejected';
  return result.error ? 'error' : 'success';
}

/** `toolwarden.plan.result_kind` of what a planner returned, by the run machine's precedence. */
export function planResultKind(result: PlanResult | undefined): PlanResultKind {
  if (Array.isArray(result?.toolCalls) && result.toolCalls.length > 0) return 'tool_calls';
  const waits = result?.await;
  if (waits && (waits.clarification || waits.externalTools || waits.confirmation)) return 'await';
  if (result?.finalResponse) return 'final_response';
  return 'none';
}

/** `toolwarden.policy.decision.kind`: the decision's effect kinds joined with `,`; `note` when none. */
export function policyDecisionKind(kinds: readonly string[]): string {
  return kinds.length === 0 ? 'note' : kinds.join(',');
}

const FINAL_STATES = new Set(['completed', 'failed', 'canceled']);
const AWAIT_KINDS: Record<string, string> = {
  clarification: 'clarification',
  externalTools: 'external_tools',
  confirmation: 'confirmation',
  backoff: 'backoff',
};
const REDACTION_FAILED = '[redaction failed]';

/** One open segment of a run: its root span and what the hooks of that segment share. */
interface Segment {
  span: Span;
  /** The segment's parent context with its span set: the parent of plan and tool spans. */
  context: Context;
  /** The root span records: plan and tool spans are opened only then. */
  recording: boolean;
  /**
   * Nothing of the segment is seen: its span does not record, no instrument records and no
   * context manager is registered (so `context.with` would only call its function). The wrappers
   * then pass calls straight on. Decided when the segment opens, like {@link recording}.
   */
  quiet: boolean;
  /** The instruments it counted `runs.active` on (so +1 and −1 meet on one provider). */
  instruments: ToolwardenInstruments;
  /** Calls `wrapToolCall` opened a span for: their `tool_result` needs none. Made on first use. */
  wrapped?: Set<string>;
  /** toolCallId → attempt, from `retry_hint` events (they come before a rejected call's result). Made on first use. */
  attempts?: Map<string, number>;
  /** False until `run_started` confirms a segment opened by `onRunStart('start')`. */
  started: boolean;
  /** Token usage of the segment's planner turns (`PlanResult.usage`), summed; undefined until one reports it. */
  usage?: { inputTokens: number; outputTokens: number };
  /** `gen_ai.agent.name` of its metrics. */
  agentName: string;
  /** {@link segmentClock} when it opened, for `gen_ai.invoke_agent.duration`. */
  openedAt: number;
  /** Tool calls it ran or refused (one per `tool_result`), for `gen_ai.invoke_agent.tool_calls`. */
  toolCalls: number;
  /** Model calls its planner turns made (`countInferenceCall`), for `gen_ai.invoke_agent.inference_calls`. */
  tally: InvokeAgentTally;
  /** State changes whose store version is not known yet: the span ends once they are recorded. */
  pendingStates: number;
  /** When the segment ended, if its span waits for {@link pendingStates}. */
  endedAt?: number;
}

/**
 * The clock of segment durations, ms. Segments also open inside Temporal's workflow sandbox, which
 * has no `performance` (its `Date.now()` is the workflow's deterministic time).
 */
const segmentClock = (): number => globalThis.performance?.now() ?? Date.now();

/** Longest a segment's span waits past its end for the store versions of its state changes, ms. */
const STATE_VERSION_WAIT_MS = 5_000;

/** Most runs whose last segment this process remembers, to link the next one to it. */
const MAX_REMEMBERED_SEGMENTS = 10_000;

/**
 * Creates the telemetry plugin (docs/telemetry.md). `createRuntime` installs one by default (configured by
 * its `telemetry` option); build one yourself to place it among your plugins, in which case the
 * runtime adds no other.
 */
export function telemetryPlugin(options: TelemetryPluginOptions = {}): Plugin {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE);
  const instruments = instrumentSource(options.meterProvider);
  const capture =
    options.captureContent ??
    globalThis.process?.env?.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true';
  const latest = options.latestGenAiConventions ?? genAiLatestExperimental();
  const segments = new Map<string, Segment>();
  /** runId → how its last segment stopped (ended awaiting here, or the run was restored): the next one links it. */
  const previousSegments = new Map<string, PreviousSegment>();
  /** Segments ended in the current step, until its state change is reported (a microtask). */
  const closing = new Map<string, Segment>();
  /** Tool id → description, from advertised tools and executed calls; also "known tool ids". */
  const descriptions = new Map<string, string>();

  function open(run: RunInfo, first: boolean): Segment {
    const active = context.active();
    const stored = first ? undefined : spanContextFromCarrier(run.traceContext);
    let parent = active;
    const links: Link[] = [];
    const previous = previousSegments.get(run.runId);
    previousSegments.delete(run.runId);
    if (stored) {
      parent = trace.setSpanContext(active, stored);
      // The segment before: the run's causal chain, which the parent (always segment 1) does not
      // show. The one this process saw end, else the latest one the run's store kept.
      const before = previous?.context ?? latestSegmentOf(run.traceContext);
      if (before && before.spanId !== stored.spanId) links.push(resumeLink(before, previous));
      // The caller (e.g. the request that delivered an answer) is linked, not the parent.
      const caller = trace.getSpanContext(active);
      if (caller && isSpanContextValid(caller) && caller.traceId !== stored.traceId) {
        links.push({ context: caller });
      }
    }
    if (first) {
      const fork = forkLink(run.labels);
      if (fork) links.push(fork);
    }
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_AGENT_NAME]: run.agent.name,
      [ATTR_TOOLWARDEN_AGENT_ID]: run.agent.id,
      [ATTR_TOOLWARDEN_RUN_ID]: run.runId,
    };
    // v1.36.0 put the agent's id on the span; the latest conventions keep gen_ai.agent.id for a
    // hosted agent's stable id, off the in-process invoke_agent span.
    if (!latest) attributes[ATTR_GEN_AI_AGENT_ID] = run.agent.id;
    if (run.sessionId !== undefined) attributes[ATTR_GEN_AI_CONVERSATION_ID] = run.sessionId;
    const span = tracer.startSpan(
      invokeAgentSpanName(run.agent.name),
      { kind: SpanKind.INTERNAL, attributes, links: links.length > 0 ? links : undefined },
      parent,
    );
    // The run keeps its latest segment (the host stores a trace context set in `onEvent` with the
    // run's next write), so a segment after a restart or an eviction links this one.
    const recording = span.isRecording();
    if (stored && recording) run.traceContext = withLatestSegment(run.traceContext!, span.spanContext());
    const segmentInstruments = instruments();
    const quiet = !recording && !segmentInstruments.recording && !contextPropagates();
    const tally: InvokeAgentTally = { inferenceCalls: 0 };
    const segment: Segment = {
      span,
      // Read only by spans, metrics and context.with, none of which a quiet segment has.
      context: quiet ? parent : segmentContext(parent, span, latest ? tally : undefined),
      recording,
      quiet,
      instruments: segmentInstruments,
      started: !first,
      agentName: run.agent.name,
      openedAt: segmentClock(),
      toolCalls: 0,
      tally,
      pendingStates: 0,
    };
    segment.instruments.runsActive.add(1);
    segments.set(run.runId, segment);
    return segment;
  }

  function ensure(run: RunInfo): Segment {
    return segments.get(run.runId) ?? open(run, false);
  }

  function close(
    runId: string,
    status: RunSegmentStatus,
    annotate?: (span: Span) => void,
    errorType?: string,
  ): void {
    const segment = segments.get(runId);
    if (!segment) return;
    segments.delete(runId);
    segment.span.setAttribute(ATTR_TOOLWARDEN_RUN_STATUS, status);
    if (segment.usage) {
      segment.span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, segment.usage.inputTokens);
      segment.span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, segment.usage.outputTokens);
    }
    annotate?.(segment.span);
    endSpan(segment, runId);
    segment.instruments.runsActive.add(-1);
    if (segment.instruments.recording) {
      segment.instruments.runs.add(1, { [ATTR_TOOLWARDEN_RUN_STATUS]: status });
      if (latest) recordInvocation(segment, errorType);
    }
  }

  /**
   * Ends a segment's span, or, while store versions of its state changes are on their way, marks
   * when it ended and lets the last of them end it (at that time), or a timer.
   */
  function endSpan(segment: Segment, runId: string): void {
    if (!latest || !segment.recording) {
      segment.span.end();
      return;
    }
    // The step that ended the segment reports its state change right after (same call stack).
    segment.endedAt = Date.now();
    closing.set(runId, segment);
    queueMicrotask(() => {
      if (closing.get(runId) === segment) closing.delete(runId);
      if (segment.pendingStates === 0) {
        segment.span.end(segment.endedAt);
        return;
      }
      setTimeout(() => {
        if (segment.pendingStates === 0) return;
        segment.pendingStates = 0;
        segment.span.end(segment.endedAt);
      }, STATE_VERSION_WAIT_MS).unref?.();
    });
  }

  /** A `gen_ai.execution.state.changed` event on the open segment, once the store version is known. */
  function stateChanged(segment: Segment, change: RunStateChange): void {
    const at = Date.now();
    const count = change.changedKeys.length;
    segment.pendingStates += 1;
    const record = (version: number | undefined) => {
      if (segment.pendingStates === 0) return; // the timer ended the span
      const attributes: Attributes = { [ATTR_GEN_AI_EXECUTION_STATE_CHANGED_KEY_COUNT]: count };
      if (version !== undefined) attributes[ATTR_GEN_AI_EXECUTION_STATE_VERSION] = String(version);
      segment.span.addEvent(EVENT_GEN_AI_EXECUTION_STATE_CHANGED, attributes, at);
      segment.pendingStates -= 1;
      if (segment.pendingStates === 0 && segment.endedAt !== undefined) segment.span.end(segment.endedAt);
    };
    change.version().then(record, () => record(undefined));
  }

  /** `gen_ai.invoke_agent.*` of a segment that ended (latest conventions). */
  function recordInvocation(segment: Segment, errorType: string | undefined): void {
    const { genAi } = segment.instruments;
    const agent = { [ATTR_GEN_AI_AGENT_NAME]: segment.agentName };
    genAi.invokeAgentDuration.record(
      (segmentClock() - segment.openedAt) / 1000,
      errorType === undefined ? agent : { ...agent, [ATTR_ERROR_TYPE]: errorType },
    );
    genAi.invokeAgentInferenceCalls.record(segment.tally.inferenceCalls, agent);
    genAi.invokeAgentToolCalls.record(segment.toolCalls, agent);
  }

  function remember(runId: string, previous: PreviousSegment): void {
    previousSegments.delete(runId);
    previousSegments.set(runId, previous);
    if (previousSegments.size > MAX_REMEMBERED_SEGMENTS) {
      const oldest = previousSegments.keys().next().value;
      if (oldest !== undefined) previousSegments.delete(oldest);
    }
  }

  /** The tool name metrics may carry: a known tool's id, else {@link OTHER_TOOL}. */
  function metricTool(name: string, reason?: string): string {
    return descriptions.has(name) || reason !== 'tool_unavailable' ? name : OTHER_TOOL;
  }

  function recordContent(span: Span, key: string, value: unknown, info: ContentInfo): void {
    if (!capture || !span.isRecording()) return;
    let shown = value;
    if (options.redact) {
      try {
        shown = options.redact(value, info);
      } catch {
        span.setAttribute(key, REDACTION_FAILED);
        return;
      }
    }
    if (shown !== undefined) span.setAttribute(key, typeof shown === 'string' ? shown : toJson(shown));
  }

  /** Status, `error.type`, `executed` and the hint event of a finished tool span. */
  function finishTool(
    span: Span,
    result: { executed: boolean; error?: { name: string; message: string }; retryHint?: RetryHint },
    noted?: string,
  ): void {
    span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED, result.executed);
    span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME, toolCallOutcome(result));
    if (result.retryHint) span.addEvent(EVENT_TOOLWARDEN_RETRY_HINT, hintAttributes(result.retryHint));
    if (result.error) {
      span.setAttribute(ATTR_ERROR_TYPE, toolErrorType(result, { errorType: noted }) as string);
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error.message });
    }
  }

  /** An instant span for a call no `wrapToolCall` saw (rejected, denied, refused, external). */
  function toolSpanFromResult(event: Extract<RunEvent, { type: 'tool_result' }>, run: RunInfo): void {
    const segment = ensure(run);
    segment.toolCalls += 1;
    const { result } = event;
    const attempt = segment.attempts?.get(result.toolCallId);
    segment.attempts?.delete(result.toolCallId);
    if (segment.wrapped?.delete(result.toolCallId)) return;
    if (segment.instruments.recording) {
      segment.instruments.toolCalls.add(1, {
        [ATTR_GEN_AI_TOOL_NAME]: metricTool(result.name, result.retryHint?.reason),
        [ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME]: toolCallOutcome(result),
      });
    }
    if (!segment.recording) return;
    const span = tracer.startSpan(
      executeToolSpanName(result.name),
      {
        kind: SpanKind.INTERNAL,
        attributes: toolAttributes({
          tool: result.name,
          description: descriptions.get(result.name),
          runId: event.runId,
          sessionId: run.sessionId,
          turnId: event.turnId,
          toolCallId: result.toolCallId,
          providerToolCallId: result.providerToolCallId,
          attempt,
        }),
      },
      segment.context,
    );
    const info = { tool: result.name, toolCallId: result.toolCallId, runId: event.runId };
    const prior = result.retryHint?.priorInput;
    if (prior) recordContent(span, ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, prior, { kind: 'arguments', ...info });
    finishTool(span, result);
    if (result.executed && !result.error && 'result' in result) {
      recordContent(span, ATTR_GEN_AI_TOOL_CALL_RESULT, result.result, { kind: 'result', ...info });
    }
    span.end();
  }

  /** `wrapPlan` in a recorded segment: the planner runs inside a `plan` span. */
  async function tracePlan(
    segment: Segment,
    plan: PlanInvocation,
    next: (plan: PlanInvocation) => Promise<PlanResult>,
  ): Promise<PlanResult> {
    const span = tracer.startSpan(
      planSpanName(plan.run.agent.name),
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          // The latest conventions define a plan operation (gen_ai.plan.internal span).
          ...(latest
            ? {
                [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_PLAN,
                [ATTR_GEN_AI_AGENT_NAME]: plan.run.agent.name,
              }
            : {}),
          [ATTR_TOOLWARDEN_RUN_ID]: plan.run.runId,
          [ATTR_TOOLWARDEN_TURN_ID]: plan.input.turnId,
          [ATTR_TOOLWARDEN_PLAN_KIND]: plan.kind,
        },
      },
      segment.context,
    );
    try {
      // The planner (an LLM client, maybe instrumented itself) runs inside the plan span.
      const result = await context.with(trace.setSpan(segment.context, span), next, undefined, plan);
      span.setAttribute(ATTR_TOOLWARDEN_PLAN_RESULT_KIND, planResultKind(result));
      addUsage(segment, result);
      return result;
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** `wrapToolCall` when something records: the tool's metrics, and its span in a recorded segment. */
  async function traceToolCall(
    segment: Segment,
    call: ToolInvocation,
    next: (call: ToolInvocation) => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const { tool, meta } = call;
    const started = performance.now();
    // What `execute` may say about its own failure (noteToolErrorType: MCP's tool_error).
    const notes: ToolCallNotes = {};
    const count = (outcome: ToolCallOutcome, errorType: string | undefined) => {
      const durationS = (performance.now() - started) / 1000;
      const attributes = { [ATTR_GEN_AI_TOOL_NAME]: tool.id, [ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME]: outcome };
      segment.instruments.toolCalls.add(1, attributes);
      segment.instruments.toolDuration.record(durationS, attributes);
      if (!latest) return;
      const genAi: Attributes = {
        [ATTR_GEN_AI_TOOL_NAME]: tool.id,
        [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
        [ATTR_GEN_AI_AGENT_NAME]: segment.agentName,
      };
      if (errorType !== undefined) genAi[ATTR_ERROR_TYPE] = errorType;
      segment.instruments.genAi.executeToolDuration.record(durationS, genAi);
    };
    const inner = withToolCallNotes(segment.context, notes);
    if (!segment.recording) {
      let outcome: ToolCallOutcome = 'error';
      let errorType: string | undefined = '_OTHER';
      try {
        const result = await context.with(inner, next, undefined, call);
        outcome = toolCallOutcome(result);
        errorType = toolErrorType(result, notes);
        return result;
      } finally {
        count(outcome, errorType);
      }
    }
    const span = tracer.startSpan(
      executeToolSpanName(tool.id),
      {
        kind: SpanKind.INTERNAL,
        attributes: toolAttributes({
          tool: tool.id,
          description: tool.description,
          runId: meta.runId,
          sessionId: meta.sessionId,
          turnId: meta.turnId,
          toolCallId: meta.toolCallId,
          providerToolCallId: meta.providerToolCallId,
          parentToolCallId: meta.parentToolCallId,
          attempt: meta.attempt,
        }),
      },
      segment.context,
    );
    const info = { tool: tool.id, toolCallId: meta.toolCallId, runId: meta.runId };
    recordContent(span, ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, call.input, { kind: 'arguments', ...info });
    if (call.edited) {
      span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_EDITED, true);
      if (call.edited.by !== undefined)
        span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY, call.edited.by);
      recordContent(span, ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS, call.edited.original, {
        kind: 'arguments',
        ...info,
      });
    }
    let result: ToolResult;
    try {
      // `execute` (and what it calls) sees the tool span as the active span.
      result = await context.with(trace.setSpan(inner, span), next, undefined, call);
    } catch (err) {
      // An inner wrapper threw: the runtime records that as an executed call that failed.
      span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED, true);
      span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME, 'error' satisfies ToolCallOutcome);
      failSpan(span, err);
      span.end();
      count('error', err instanceof Error ? err.name || 'Error' : '_OTHER');
      throw err;
    }
    finishTool(span, result, notes.errorType);
    if (!result.error) {
      recordContent(span, ATTR_GEN_AI_TOOL_CALL_RESULT, result.result, { kind: 'result', ...info });
    }
    span.end();
    count(toolCallOutcome(result), toolErrorType(result, notes));
    return result;
  }

  return {
    name: TELEMETRY_PLUGIN_NAME,

    onRunStart(run, how) {
      // A resumed run opens its next segment when it works again: one restored while awaiting
      // has nothing to trace until its answer arrives.
      if (how !== 'start') return;
      const segment = open(run, true);
      run.traceContext = traceContextCarrier(segment.span.spanContext()) ?? run.traceContext;
      // `runtime.start` is synchronous: if it threw after this hook (a policy failing the run
      // at its start), no `run_started` came before this microtask, and the span is closed here.
      queueMicrotask(() => {
        if (segment.started || segments.get(run.runId) !== segment) return;
        close(
          run.runId,
          'failed',
          (span) => {
            span.setAttribute(ATTR_ERROR_TYPE, 'RunStartError');
            span.setStatus({ code: SpanStatusCode.ERROR, message: 'The run did not start' });
          },
          'RunStartError',
        );
      });
    },

    wrapPlan(plan, next) {
      const segment = ensure(plan.run);
      for (const tool of plan.input.tools) descriptions.set(tool.name, tool.description);
      // Nothing would see the turn (the default install with no SDK): passed straight on, no
      // closure, no promise. A synchronous throw of an inner hook is the plan port's to catch.
      if (segment.quiet) return next(plan);
      // Unrecorded, but inside the segment's context, so a sampled-out run's planner spans are
      // children of its dropped root (and dropped too), not roots of traces of their own. Not an
      // async function on this path: that would add a promise and a tick to every turn.
      if (!segment.recording) return promised(() => context.with(segment.context, next, undefined, plan));
      return tracePlan(segment, plan, next);
    },

    wrapToolCall(call, next) {
      const segment = ensure(call.run);
      descriptions.set(call.tool.id, call.tool.description);
      // As in wrapPlan. Not in `wrapped` either: its `tool_result` opens no span and counts nothing.
      if (segment.quiet) return next(call);
      segment.wrapped ??= new Set();
      segment.wrapped.add(call.meta.toolCallId);
      // Nothing records (no SDK registered): no span, no clock, no metric attributes; the call
      // still runs inside the segment's context.
      if (!segment.recording && !segment.instruments.recording) {
        return promised(() => context.with(segment.context, next, undefined, call));
      }
      return traceToolCall(segment, call, next);
    },

    // Only with the latest conventions: without the hook the runtime does no per-step work for it.
    ...(latest
      ? {
          onStateChange(change: RunStateChange, run: RunInfo) {
            // Only an open segment (or the one its step just ended) observes it: a restore opens none.
            const segment = segments.get(run.runId) ?? closing.get(run.runId);
            if (segment?.recording) stateChanged(segment, change);
          },
        }
      : {}),

    onEvent(event, run) {
      switch (event.type) {
        case 'run_started': {
          const segment = segments.get(run.runId);
          if (segment) segment.started = true;
          return;
        }
        case 'run_resumed':
          // Back from the store: the segment before is the one it kept (this process's memory of
          // the run may be stale: another process may have advanced it since).
          remember(run.runId, { state: event.state, restored: true });
          // Restored working (a crash cut its segment short): it works again at once.
          if (!event.state.startsWith('awaiting')) ensure(run);
          return;
        case 'state_changed': {
          if (event.state.startsWith('awaiting')) {
            const segment = segments.get(run.runId);
            close(run.runId, 'awaiting', (span) => {
              const kind = AWAIT_KINDS[event.state.slice('awaiting.'.length)];
              if (kind) span.setAttribute(ATTR_TOOLWARDEN_RUN_AWAITING, kind);
            });
            const ended = segment?.span.spanContext();
            if (ended && isSpanContextValid(ended)) {
              remember(run.runId, { context: ended, state: event.state, restored: false });
            }
          } else if (!FINAL_STATES.has(event.state)) {
            ensure(run);
          }
          return;
        }
        case 'tool_result':
          toolSpanFromResult(event, run);
          return;
        case 'retry_hint': {
          const segment = ensure(run);
          const { hint } = event;
          if (segment.recording) {
            segment.attempts ??= new Map();
            segment.attempts.set(hint.toolCallId, hint.attempt);
          }
          if (segment.instruments.recording) {
            segment.instruments.retryHints.add(1, {
              [ATTR_TOOLWARDEN_RETRY_HINT_REASON]: hint.reason,
              [ATTR_GEN_AI_TOOL_NAME]: metricTool(hint.tool, hint.reason),
            });
          }
          return;
        }
        case 'policy_decision': {
          const segment = ensure(run);
          const { decision } = event;
          if (!segment.recording && !segment.instruments.recording) return;
          const kind = policyDecisionKind(decision.kinds);
          segment.instruments.policyDecisions.add(1, {
            [ATTR_TOOLWARDEN_POLICY_NAME]: decision.policy,
            [ATTR_TOOLWARDEN_POLICY_DECISION_KIND]: kind,
          });
          if (!segment.recording) return;
          const attributes: Attributes = {
            [ATTR_TOOLWARDEN_POLICY_NAME]: decision.policy,
            [ATTR_TOOLWARDEN_POLICY_HOOK]: decision.hook,
            [ATTR_TOOLWARDEN_POLICY_DECISION_KIND]: kind,
            [ATTR_TOOLWARDEN_POLICY_DECISION_DETAIL]: toJson(decision.decision),
            [ATTR_TOOLWARDEN_TURN_ID]: event.turnId,
          };
          if (decision.fingerprint !== undefined)
            attributes[ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT] = decision.fingerprint;
          if (decision.toolCallId !== undefined)
            attributes[ATTR_TOOLWARDEN_TOOL_CALL_ID] = decision.toolCallId;
          if (decision.tool !== undefined) attributes[ATTR_GEN_AI_TOOL_NAME] = decision.tool;
          if (decision.note) attributes[ATTR_TOOLWARDEN_POLICY_NOTE] = decision.note;
          segment.span.addEvent(EVENT_TOOLWARDEN_POLICY_DECISION, attributes);
          return;
        }
        case 'run_completed':
          // A run canceled or ended while awaiting gets a (short) segment that says so.
          ensure(run);
          close(run.runId, 'completed', (span) => {
            if (event.finalizeReason)
              span.setAttribute(ATTR_TOOLWARDEN_RUN_FINALIZE_REASON, event.finalizeReason);
          });
          return;
        case 'run_failed':
          ensure(run);
          close(
            run.runId,
            'failed',
            (span) => {
              span.setAttribute(ATTR_ERROR_TYPE, event.error.name || 'Error');
              span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
            },
            event.error.name || 'Error',
          );
          return;
        case 'run_canceled':
          ensure(run);
          close(run.runId, 'canceled');
          return;
        default:
          return;
      }
    },
  };
}

/** How a run's last segment stopped, as this process knows it. */
interface PreviousSegment {
  /** Its span context, when this process saw it end (else the run's stored one is used). */
  context?: SpanContext;
  /** The run's state then: the await it ended in, or the state the run was restored in. */
  state: string;
  /** The run came back from its store since. */
  restored: boolean;
}

/** The link from a resumed segment to the segment before it, saying why when this process knows. */
function resumeLink(before: SpanContext, previous: PreviousSegment | undefined): Link {
  if (!previous) return { context: before };
  return {
    context: before,
    attributes: {
      [ATTR_TOOLWARDEN_RESUME_RESTORED]: previous.restored,
      [ATTR_TOOLWARDEN_RESUME_STATE]: previous.state,
    },
  };
}

/**
 * The link from a forked run's first segment to its parent's span (`runtime.fork`): the span
 * context its `toolwarden.fork.traceparent` label names, with the parent's run id and the event
 * it was forked at. `undefined` for a run that is no fork or whose parent was not traced.
 */
function forkLink(labels: Readonly<Record<string, string>>): Link | undefined {
  const traceparent = labels[FORK_TRACEPARENT_LABEL];
  const parent = traceparent ? spanContextFromCarrier({ traceparent }) : undefined;
  if (!parent) return undefined;
  const attributes: Attributes = {};
  const parentRunId = labels[FORK_PARENT_LABEL];
  if (parentRunId !== undefined) attributes[ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID] = parentRunId;
  const atEvent = Number(labels[FORK_AT_LABEL]);
  if (Number.isInteger(atEvent)) attributes[ATTR_TOOLWARDEN_FORK_AT_EVENT] = atEvent;
  return { context: parent, attributes };
}

interface ToolSpanFields {
  tool: string;
  description?: string;
  runId: string;
  sessionId?: string;
  turnId: string;
  toolCallId: string;
  providerToolCallId?: string;
  parentToolCallId?: string;
  attempt?: number;
}

/** The GenAI `execute_tool` attributes and ToolCallMeta of a tool span (docs/telemetry.md). */
function toolAttributes(fields: ToolSpanFields): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: fields.tool,
    // The model's id, as the GenAI conventions define it; the run's own id is toolwarden.tool_call.id.
    [ATTR_GEN_AI_TOOL_CALL_ID]: fields.providerToolCallId ?? fields.toolCallId,
    [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
    [ATTR_TOOLWARDEN_RUN_ID]: fields.runId,
    [ATTR_TOOLWARDEN_TURN_ID]: fields.turnId,
    [ATTR_TOOLWARDEN_TOOL_CALL_ID]: fields.toolCallId,
  };
  if (fields.description) attributes[ATTR_GEN_AI_TOOL_DESCRIPTION] = fields.description;
  if (fields.sessionId !== undefined) attributes[ATTR_TOOLWARDEN_SESSION_ID] = fields.sessionId;
  if (fields.parentToolCallId !== undefined) {
    attributes[ATTR_TOOLWARDEN_TOOL_CALL_PARENT_ID] = fields.parentToolCallId;
  }
  if (fields.attempt !== undefined) attributes[ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT] = fields.attempt;
  return attributes;
}

/**
 * `error.type` of a failed tool call: what the tool noted (`noteToolErrorType`), else the retry
 * reason, else the error's class; `undefined` for a call that did not fail.
 */
function toolErrorType(
  result: { error?: { name: string }; retryHint?: RetryHint },
  notes: ToolCallNotes,
): string | undefined {
  if (!result.error) return undefined;
  return notes.errorType ?? result.retryHint?.reason ?? (result.error.name || 'Error');
}

/**
 * Adds a planner turn's `usage` to its segment's sum, which the segment's `invoke_agent` span
 * carries as `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` when it ends (the model's
 * `chat` spans carry each call's own). Turns that report no usage add nothing.
 */
function addUsage(segment: Segment, result: PlanResult | undefined): void {
  const usage = result?.usage;
  if (!usage) return;
  segment.usage ??= { inputTokens: 0, outputTokens: 0 };
  segment.usage.inputTokens += usage.inputTokens;
  segment.usage.outputTokens += usage.outputTokens;
}

/** Attributes of a `toolwarden.retry_hint` span event. */
function hintAttributes(hint: RetryHint): Attributes {
  const attributes: Attributes = {
    [ATTR_TOOLWARDEN_RETRY_HINT_REASON]: hint.reason,
    [ATTR_GEN_AI_TOOL_NAME]: hint.tool,
    [ATTR_TOOLWARDEN_RETRY_HINT_RESTRICT_TO_TOOL]: hint.restrictToTool,
    [ATTR_TOOLWARDEN_RETRY_HINT_MISSING_FIELDS]: hint.missingFields,
    [ATTR_TOOLWARDEN_RETRY_HINT_MESSAGE]: hint.message,
  };
  if (hint.retryAfterMs !== undefined)
    attributes[ATTR_TOOLWARDEN_RETRY_HINT_RETRY_AFTER_MS] = hint.retryAfterMs;
  return attributes;
}

/** ERROR status, `error.type` (the thrown class, `_OTHER` for a non-Error) and an `exception` event. */
function failSpan(span: Span, err: unknown): void {
  if (err instanceof Error) {
    span.recordException(err as Exception);
    span.setAttribute(ATTR_ERROR_TYPE, err.name || 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  } else {
    span.setAttribute(ATTR_ERROR_TYPE, '_OTHER');
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
  }
}

/** The context of a segment's plan and tool spans: its parent with its span (and tally) set. */
function segmentContext(parent: Context, span: Span, tally: InvokeAgentTally | undefined): Context {
  const withSpan = trace.setSpan(parent, span);
  return tally ? withInvokeAgentTally(withSpan, tally) : withSpan;
}

/** A context that only {@link contextPropagates} makes active. */
const PROBE_CONTEXT = ROOT_CONTEXT.setValue(createContextKey('toolwarden.telemetry.probe'), true);

/**
 * Whether a context manager is registered: only then does `context.with(ctx, …)` make `ctx` the
 * active context (`@opentelemetry/api`'s no-op manager just calls the function).
 */
function contextPropagates(): boolean {
  return context.with(PROBE_CONTEXT, activeContext) === PROBE_CONTEXT;
}

function activeContext(): Context {
  return context.active();
}

/** `run()`'s promise, or a rejected one when it throws: what an async hook would return. */
function promised<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (err) {
    return Promise.reject(err);
  }
}

/** JSON text of a value; never throws (cycles and BigInts fall back to `String`). */
function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}
