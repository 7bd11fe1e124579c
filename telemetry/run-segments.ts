/**
 * A run's segments (docs/telemetry.md §Spans): the `invoke_agent` span of each stretch of work,
 * from the run's start (or its working again) to its next await or its end, with the parent and
 * links that keep the run one trace.
 *
 * | call | does |
 * |---|---|
 * | `open(run, first)` | the segment's span: segment 1 under the caller's span (a fork links its parent's), later ones under segment 1 (stored context), linking the segment before |
 * | `ensure(run)` | the open segment, or a new later one |
 * | `close(runId, status, …)` | `toolwarden.run.status`, tokens, the end (with the opt-in: once its state changes' store versions are in), the run metrics |
 * | `stateChanged(segment, change)` | `gen_ai.execution.state.changed` once the change's store version is known (opt-in) |
 * | `remember(runId, previous)` | how the run's last segment stopped, for the next one's link |
 *
 * @module
 */

import type { Attributes, Context, Link, Span, SpanContext } from '@opentelemetry/api';
import {
  ATTR_TOOLWARDEN_COST_CURRENCY,
  ATTR_TOOLWARDEN_COST_LIMIT,
  ATTR_TOOLWARDEN_COST_SPENT,
} from '../plugins/cost-budget.ts';
import type { RunInfo, RunStateChange } from '../plugins/define-plugin.ts';
import {
  context,
  createContextKey,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  trace,
} from '../plugins/otel-api.ts';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_EXECUTION_STATE_CHANGED_KEY_COUNT,
  ATTR_GEN_AI_EXECUTION_STATE_VERSION,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_TOOLWARDEN_AGENT_ID,
  ATTR_TOOLWARDEN_FORK_AT_EVENT,
  ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID,
  ATTR_TOOLWARDEN_RESUME_RESTORED,
  ATTR_TOOLWARDEN_RESUME_STATE,
  ATTR_TOOLWARDEN_RUN_ID,
  ATTR_TOOLWARDEN_RUN_STATUS,
  EVENT_GEN_AI_EXECUTION_STATE_CHANGED,
  FORK_AT_LABEL,
  FORK_PARENT_LABEL,
  FORK_TRACEPARENT_LABEL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  invokeAgentSpanName,
  type RunSegmentStatus,
} from './attributes.ts';
import type { ToolwardenInstruments } from './metrics.ts';
import { type InvokeAgentTally, withInvokeAgentTally } from './span-notes.ts';
import type { TelemetryConfig } from './telemetry-options.ts';
import { latestSegmentOf, spanContextFromCarrier, withLatestSegment } from './trace-context.ts';

/** One open segment of a run: its root span and what the hooks of that segment share. */
export interface Segment {
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
  /** The last priced turn's `PlanResult.cost` (costBudget): the run's spend so far, its limit and currency. */
  cost?: { currency: string; spent?: number; limit?: number };
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

/** How a run's last segment stopped, as this process knows it. */
export interface PreviousSegment {
  /** Its span context, when this process saw it end (else the run's stored one is used). */
  context?: SpanContext;
  /** The run's state then: the await it ended in, or the state the run was restored in. */
  state: string;
  /** The run came back from its store since. */
  restored: boolean;
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

/** The open segments of one plugin's runs, and how each run's last one stopped. */
export class RunSegments {
  private readonly open$ = new Map<string, Segment>();
  /** runId → how its last segment stopped (ended awaiting here, or the run was restored): the next one links it. */
  private readonly previous = new Map<string, PreviousSegment>();
  /** Segments ended in the current step, until its state change is reported (a microtask). */
  private readonly closing = new Map<string, Segment>();

  constructor(private readonly config: TelemetryConfig) {}

  /** The run's open segment, if any. */
  get(runId: string): Segment | undefined {
    return this.open$.get(runId);
  }

  /** The run's open segment, or the one its current step just ended. */
  current(runId: string): Segment | undefined {
    return this.open$.get(runId) ?? this.closing.get(runId);
  }

  ensure(run: RunInfo): Segment {
    return this.open$.get(run.runId) ?? this.open(run, false);
  }

  /** Opens the run's segment: `first` for segment 1 (`onRunStart('start')`), else a later one. */
  open(run: RunInfo, first: boolean): Segment {
    const { tracer, latest } = this.config;
    const active = context.active();
    const stored = first ? undefined : spanContextFromCarrier(run.traceContext);
    let parent = active;
    const links: Link[] = [];
    const previous = this.previous.get(run.runId);
    this.previous.delete(run.runId);
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
    const span = tracer.startSpan(
      invokeAgentSpanName(run.agent.name),
      {
        kind: SpanKind.INTERNAL,
        attributes: segmentAttributes(run, latest),
        links: links.length > 0 ? links : undefined,
      },
      parent,
    );
    // The run keeps its latest segment (the host stores a trace context set in `onEvent` with the
    // run's next write), so a segment after a restart or an eviction links this one.
    const recording = span.isRecording();
    if (stored && recording) run.traceContext = withLatestSegment(run.traceContext!, span.spanContext());
    const instruments = this.config.instruments();
    const quiet = !recording && !instruments.recording && !contextPropagates();
    const tally: InvokeAgentTally = { inferenceCalls: 0 };
    const segment: Segment = {
      span,
      // Read only by spans, metrics and context.with, none of which a quiet segment has.
      context: quiet ? parent : segmentContext(parent, span, latest ? tally : undefined),
      recording,
      quiet,
      instruments,
      started: !first,
      agentName: run.agent.name,
      openedAt: segmentClock(),
      toolCalls: 0,
      tally,
      pendingStates: 0,
    };
    segment.instruments.runsActive.add(1);
    this.open$.set(run.runId, segment);
    return segment;
  }

  /** Ends the run's open segment with `status` (`annotate` adds to its span; `errorType` to its metrics). */
  close(runId: string, status: RunSegmentStatus, annotate?: (span: Span) => void, errorType?: string): void {
    const segment = this.open$.get(runId);
    if (!segment) return;
    this.open$.delete(runId);
    segment.span.setAttribute(ATTR_TOOLWARDEN_RUN_STATUS, status);
    if (segment.usage) {
      segment.span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, segment.usage.inputTokens);
      segment.span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, segment.usage.outputTokens);
    }
    if (segment.cost) {
      const { currency, spent, limit } = segment.cost;
      segment.span.setAttribute(ATTR_TOOLWARDEN_COST_CURRENCY, currency);
      if (spent !== undefined) segment.span.setAttribute(ATTR_TOOLWARDEN_COST_SPENT, spent);
      if (limit !== undefined) segment.span.setAttribute(ATTR_TOOLWARDEN_COST_LIMIT, limit);
    }
    annotate?.(segment.span);
    this.endSpan(segment, runId);
    segment.instruments.runsActive.add(-1);
    if (segment.instruments.recording) {
      segment.instruments.runs.add(1, { [ATTR_TOOLWARDEN_RUN_STATUS]: status });
      if (this.config.latest) recordInvocation(segment, errorType);
    }
  }

  /** A `gen_ai.execution.state.changed` event on the open segment, once the store version is known. */
  stateChanged(segment: Segment, change: RunStateChange): void {
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

  /** Keeps how the run's last segment stopped (the newest {@link MAX_REMEMBERED_SEGMENTS} runs). */
  remember(runId: string, previous: PreviousSegment): void {
    this.previous.delete(runId);
    this.previous.set(runId, previous);
    if (this.previous.size > MAX_REMEMBERED_SEGMENTS) {
      const oldest = this.previous.keys().next().value;
      if (oldest !== undefined) this.previous.delete(oldest);
    }
  }

  /**
   * Ends a segment's span, or, while store versions of its state changes are on their way, marks
   * when it ended and lets the last of them end it (at that time), or a timer.
   */
  private endSpan(segment: Segment, runId: string): void {
    if (!this.config.latest || !segment.recording) {
      segment.span.end();
      return;
    }
    // The step that ended the segment reports its state change right after (same call stack).
    segment.endedAt = Date.now();
    this.closing.set(runId, segment);
    queueMicrotask(() => {
      if (this.closing.get(runId) === segment) this.closing.delete(runId);
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
}

/** The `invoke_agent` span's attributes: the GenAI operation and agent, the run and its session. */
function segmentAttributes(run: RunInfo, latest: boolean): Attributes {
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
  return attributes;
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

/** The context of a segment's plan and tool spans: its parent with its span (and tally) set. */
function segmentContext(parent: Context, span: Span, tally: InvokeAgentTally | undefined): Context {
  const withSpan = trace.setSpan(parent, span);
  return tally ? withInvokeAgentTally(withSpan, tally) : withSpan;
}

/** A context that only {@link contextPropagates} makes active (made on first use, with the API). */
let probeContext: Context | undefined;

/**
 * Whether a context manager is registered: only then does `context.with(ctx, …)` make `ctx` the
 * active context (`@opentelemetry/api`'s no-op manager just calls the function).
 */
function contextPropagates(): boolean {
  probeContext ??= ROOT_CONTEXT.setValue(createContextKey('toolwarden.telemetry.probe'), true);
  return context.with(probeContext, activeContext) === probeContext;
}

function activeContext(): Context {
  return context.active();
}
