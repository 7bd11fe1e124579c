/**
 * The run's trace on Temporal (issue 14 item 3; docs/temporal.md §Telemetry). `temporalRuntime`'s
 * `start` opens the run's `invoke_agent` span and hands its W3C trace context to the workflow as
 * the run's `traceContext` (in the machine's context, so it is in every step's input and survives
 * continue-as-new); each planner turn and tool call then runs in its activity under a `plan` or
 * `execute_tool` span whose parent is that context, whichever worker runs it. What the planner or
 * the tool traces itself (a model's `chat` span, an MCP call) nests under its step's span. The
 * workflow itself makes no spans: its code is replayed, and a span per replay would repeat.
 *
 * Why not `@temporalio/interceptors-opentelemetry`: its spans are Temporal's (`RunWorkflow:…`,
 * `StartActivity:…`), per workflow task and replay-aware; the run's own GenAI spans are what
 * users query in Jaeger, and they need only the run's context, which the machine already carries.
 *
 * @module
 */
import {
  type Attributes,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { turnId } from '../machines/run-context.ts';
import type {
  ExecuteToolInput,
  ExecuteToolOutput,
  PlanActorInput,
  PlanActorOutput,
} from '../machines/run-ports.ts';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_TOOLWARDEN_PLAN_KIND,
  ATTR_TOOLWARDEN_RUN_ID,
  ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT,
  ATTR_TOOLWARDEN_TOOL_CALL_ID,
  ATTR_TOOLWARDEN_TURN_ID,
  executeToolSpanName,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  INSTRUMENTATION_SCOPE,
  planSpanName,
} from '../telemetry/attributes.ts';
import { spanContextFromCarrier } from '../telemetry/trace-context.ts';

/** A tool call's activity input on Temporal: the machine's, plus the run's trace context. */
export type TracedExecuteToolInput = ExecuteToolInput & { traceContext?: Record<string, string> | null };

/** Runs `work` in a span named `name`, a child of the run's stored trace context. */
async function inSpan<T>(
  provider: TracerProvider | undefined,
  name: string,
  carrier: Record<string, string> | null | undefined,
  attributes: Attributes,
  work: () => Promise<T>,
  settle: (span: Span, output: T) => void = () => {},
): Promise<T> {
  const tracer = (provider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE);
  const parent = spanContextFromCarrier(carrier);
  const base = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : context.active();
  const span = tracer.startSpan(name, { attributes }, base);
  try {
    const output = await context.with(trace.setSpan(base, span), work);
    settle(span, output);
    return output;
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : '_OTHER');
    throw error;
  } finally {
    span.end();
  }
}

/** The `plan {agent}` span of a planner turn's activity. */
export function tracedPlan(
  provider: TracerProvider | undefined,
  input: PlanActorInput,
  work: () => Promise<PlanActorOutput>,
): Promise<PlanActorOutput> {
  const { context: run } = input;
  return inSpan(
    provider,
    planSpanName(run.agent.name),
    run.traceContext,
    {
      [ATTR_GEN_AI_AGENT_ID]: run.agent.id,
      [ATTR_GEN_AI_AGENT_NAME]: run.agent.name,
      [ATTR_TOOLWARDEN_RUN_ID]: run.runId,
      [ATTR_TOOLWARDEN_TURN_ID]: turnId(run),
      [ATTR_TOOLWARDEN_PLAN_KIND]: input.kind,
    },
    work,
  );
}

/** The `execute_tool {tool}` span of a tool call's activity; a failed call is an ERROR span. */
export function tracedToolCall(
  provider: TracerProvider | undefined,
  input: TracedExecuteToolInput,
  work: () => Promise<ExecuteToolOutput>,
): Promise<ExecuteToolOutput> {
  return inSpan(
    provider,
    executeToolSpanName(input.call.name),
    input.traceContext,
    {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: input.call.name,
      [ATTR_GEN_AI_TOOL_CALL_ID]: input.call.toolCallId,
      [ATTR_TOOLWARDEN_TOOL_CALL_ID]: input.call.toolCallId,
      [ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT]: input.call.attempt,
      [ATTR_TOOLWARDEN_RUN_ID]: input.meta.runId,
      [ATTR_TOOLWARDEN_TURN_ID]: input.meta.turnId,
    },
    work,
    (span, output) => {
      const error = output.result.error;
      if (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        span.setAttribute(ATTR_ERROR_TYPE, error.name);
      }
    },
  );
}
