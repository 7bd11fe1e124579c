/**
 * Tool calls in telemetry (docs/telemetry.md §Spans): the `execute_tool {tool}` span and the
 * tool metrics of each call. The span carries the GenAI `execute_tool` attributes and the call's
 * ToolCallMeta (`toolAttributes`), its content when capture is on (redacted), and its outcome.
 *
 * | call | when | span |
 * |---|---|---|
 * | `trace(segment, call, next)` | `wrapToolCall`, something records | around `execute` (its active span) |
 * | `fromResult(event, run)` | a `tool_result` no `wrapToolCall` saw: rejected in validation, denied, refused, external | instant |
 *
 * @module
 */

import type { Attributes, Span } from '@opentelemetry/api';
import type { RunInfo, ToolInvocation } from '../plugins/define-plugin.ts';
import { context, SpanKind, SpanStatusCode, trace } from '../plugins/otel-api.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { RetryHint } from '../tools/retry-hint.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_TOOLWARDEN_APPROVAL_APPROVED_BY,
  ATTR_TOOLWARDEN_APPROVAL_PERMISSIONS,
  ATTR_TOOLWARDEN_APPROVAL_RISK,
  ATTR_TOOLWARDEN_APPROVAL_SUMMARY,
  ATTR_TOOLWARDEN_RETRY_HINT_MESSAGE,
  ATTR_TOOLWARDEN_RETRY_HINT_MISSING_FIELDS,
  ATTR_TOOLWARDEN_RETRY_HINT_REASON,
  ATTR_TOOLWARDEN_RETRY_HINT_RESTRICT_TO_TOOL,
  ATTR_TOOLWARDEN_RETRY_HINT_RETRY_AFTER_MS,
  ATTR_TOOLWARDEN_RUN_ID,
  ATTR_TOOLWARDEN_SESSION_ID,
  ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT,
  ATTR_TOOLWARDEN_TOOL_CALL_EDITED,
  ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY,
  ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED,
  ATTR_TOOLWARDEN_TOOL_CALL_ID,
  ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS,
  ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME,
  ATTR_TOOLWARDEN_TOOL_CALL_PARENT_ID,
  ATTR_TOOLWARDEN_TURN_ID,
  EVENT_TOOLWARDEN_RETRY_HINT,
  executeToolSpanName,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
  type ToolCallOutcome,
} from './attributes.ts';
import type { RunSegments, Segment } from './run-segments.ts';
import type { ToolCallNotes } from './span-notes.ts';
import { withToolCallNotes } from './span-notes.ts';
import { failSpan, toJson } from './span-values.ts';
import type { ContentInfo, TelemetryConfig } from './telemetry-options.ts';

/**
 * The value of `gen_ai.tool.name` on metrics for a tool id the runtime never advertised nor ran
 * (a model's invented name): metric attributes must stay low-cardinality. Spans keep the name.
 */
export const OTHER_TOOL = '_OTHER';

const REDACTION_FAILED = '[redaction failed]';

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

/** One plugin's tool spans and metrics, and the tools it has seen. */
export class ToolSpans {
  /** Tool id → description, from advertised tools and executed calls; also "known tool ids". */
  private readonly descriptions = new Map<string, string>();

  constructor(
    private readonly config: TelemetryConfig,
    private readonly segments: RunSegments,
  ) {}

  /** A tool advertised to a planner, or called: its description goes on its spans. */
  described(id: string, description: string): void {
    this.descriptions.set(id, description);
  }

  /** The tool name metrics may carry: a known tool's id, else {@link OTHER_TOOL}. */
  metricTool(name: string, reason?: string): string {
    return this.descriptions.has(name) || reason !== 'tool_unavailable' ? name : OTHER_TOOL;
  }

  /** An instant span for a call no `wrapToolCall` saw (rejected, denied, refused, external). */
  fromResult(event: Extract<RunEvent, { type: 'tool_result' }>, run: RunInfo): void {
    const segment = this.segments.ensure(run);
    segment.toolCalls += 1;
    const { result } = event;
    const attempt = segment.attempts?.get(result.toolCallId);
    segment.attempts?.delete(result.toolCallId);
    if (segment.wrapped?.delete(result.toolCallId)) return;
    if (segment.instruments.recording) {
      segment.instruments.toolCalls.add(1, {
        [ATTR_GEN_AI_TOOL_NAME]: this.metricTool(result.name, result.retryHint?.reason),
        [ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME]: toolCallOutcome(result),
      });
    }
    if (!segment.recording) return;
    const span = this.config.tracer.startSpan(
      executeToolSpanName(result.name),
      {
        kind: SpanKind.INTERNAL,
        attributes: toolAttributes({
          tool: result.name,
          description: this.descriptions.get(result.name),
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
    if (prior)
      this.recordContent(span, ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, prior, { kind: 'arguments', ...info });
    finishTool(span, result);
    if (result.executed && !result.error && 'result' in result) {
      this.recordContent(span, ATTR_GEN_AI_TOOL_CALL_RESULT, result.result, { kind: 'result', ...info });
    }
    span.end();
  }

  /** `wrapToolCall` when something records: the tool's metrics, and its span in a recorded segment. */
  async trace(
    segment: Segment,
    call: ToolInvocation,
    next: (call: ToolInvocation) => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const started = performance.now();
    // What `execute` may say about its own failure (noteToolErrorType: MCP's tool_error).
    const notes: ToolCallNotes = {};
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
        this.count(segment, call, started, outcome, errorType);
      }
    }
    const span = this.startCallSpan(segment, call);
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
      this.count(segment, call, started, 'error', err instanceof Error ? err.name || 'Error' : '_OTHER');
      throw err;
    }
    finishTool(span, result, notes.errorType);
    if (!result.error) {
      this.recordContent(span, ATTR_GEN_AI_TOOL_CALL_RESULT, result.result, {
        kind: 'result',
        tool: call.tool.id,
        toolCallId: call.meta.toolCallId,
        runId: call.meta.runId,
      });
    }
    span.end();
    this.count(segment, call, started, toolCallOutcome(result), toolErrorType(result, notes));
    return result;
  }

  /** The call's `execute_tool` span with its ToolCallMeta, arguments and edit (docs/telemetry.md). */
  private startCallSpan(segment: Segment, call: ToolInvocation): Span {
    const { tool, meta } = call;
    const span = this.config.tracer.startSpan(
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
    this.recordContent(span, ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, call.input, { kind: 'arguments', ...info });
    if (call.edited) {
      span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_EDITED, true);
      if (call.edited.by !== undefined)
        span.setAttribute(ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY, call.edited.by);
      this.recordContent(span, ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS, call.edited.original, {
        kind: 'arguments',
        ...info,
      });
    }
    if (call.approval) setApprovalAttributes(span, call.approval);
    return span;
  }

  /** `toolwarden.tool.calls` and `.duration` of a call; `gen_ai.execute_tool.duration` with the opt-in. */
  private count(
    segment: Segment,
    call: ToolInvocation,
    started: number,
    outcome: ToolCallOutcome,
    errorType: string | undefined,
  ): void {
    const { tool } = call;
    const durationS = (performance.now() - started) / 1000;
    const attributes = { [ATTR_GEN_AI_TOOL_NAME]: tool.id, [ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME]: outcome };
    segment.instruments.toolCalls.add(1, attributes);
    segment.instruments.toolDuration.record(durationS, attributes);
    if (!this.config.latest) return;
    const genAi: Attributes = {
      [ATTR_GEN_AI_TOOL_NAME]: tool.id,
      [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
      [ATTR_GEN_AI_AGENT_NAME]: segment.agentName,
    };
    if (errorType !== undefined) genAi[ATTR_ERROR_TYPE] = errorType;
    segment.instruments.genAi.executeToolDuration.record(durationS, genAi);
  }

  /** A tool's arguments or result on its span, when capture is on (through `redact`, never throwing). */
  private recordContent(span: Span, key: string, value: unknown, info: ContentInfo): void {
    const { capture, redact } = this.config;
    if (!capture || !span.isRecording()) return;
    let shown = value;
    if (redact) {
      try {
        shown = redact(value, info);
      } catch {
        span.setAttribute(key, REDACTION_FAILED);
        return;
      }
    }
    if (shown !== undefined) span.setAttribute(key, typeof shown === 'string' ? shown : toJson(shown));
  }
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

/** `toolwarden.approval.*` of a call's approval descriptor (docs/telemetry.md). */
function setApprovalAttributes(span: Span, approval: NonNullable<ToolInvocation['approval']>): void {
  if (approval.risk !== undefined) span.setAttribute(ATTR_TOOLWARDEN_APPROVAL_RISK, approval.risk);
  if (approval.permissions !== undefined)
    span.setAttribute(ATTR_TOOLWARDEN_APPROVAL_PERMISSIONS, approval.permissions);
  if (approval.summary !== undefined) span.setAttribute(ATTR_TOOLWARDEN_APPROVAL_SUMMARY, approval.summary);
  if (approval.approvedBy !== undefined)
    span.setAttribute(ATTR_TOOLWARDEN_APPROVAL_APPROVED_BY, approval.approvedBy);
}
