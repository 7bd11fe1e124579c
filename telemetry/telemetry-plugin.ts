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
 * Its parts, each a module: the options (telemetry-options.ts), the segments (run-segments.ts),
 * planner turns (plan-spans.ts), tool calls (tool-spans.ts: where a tool span's attributes are set)
 * and the run events (run-event-telemetry.ts); this module wires them to the plugin hooks.
 *
 * Errors: a hook of this plugin never throws and never changes a result; a `redact` hook that
 * throws records `[redaction failed]` instead of the content.
 */

import type { Plugin, RunInfo, RunStateChange } from '../plugins/define-plugin.ts';
import { context, SpanStatusCode } from '../plugins/otel-api.ts';
import { ATTR_ERROR_TYPE } from './attributes.ts';
import { tracePlan } from './plan-spans.ts';
import { recordRunEvent } from './run-event-telemetry.ts';
import { RunSegments } from './run-segments.ts';
import { type TelemetryPluginOptions, telemetryConfig } from './telemetry-options.ts';
import { ToolSpans } from './tool-spans.ts';
import { traceContextCarrier } from './trace-context.ts';

export { planResultKind } from './plan-spans.ts';
export { policyDecisionKind } from './run-event-telemetry.ts';
export type { ContentInfo, RedactContent, TelemetryPluginOptions } from './telemetry-options.ts';
export { OTHER_TOOL, toolCallOutcome } from './tool-spans.ts';

/** The name the telemetry plugin registers under; `createRuntime` skips its default when a plugin has it. */
export const TELEMETRY_PLUGIN_NAME = 'toolwarden.telemetry';

/**
 * Creates the telemetry plugin (docs/telemetry.md). `createRuntime` installs one by default (configured by
 * its `telemetry` option); build one yourself to place it among your plugins, in which case the
 * runtime adds no other.
 */
export function telemetryPlugin(options: TelemetryPluginOptions = {}): Plugin {
  const config = telemetryConfig(options);
  const segments = new RunSegments(config);
  const tools = new ToolSpans(config, segments);
  const parts = { segments, tools };

  return {
    name: TELEMETRY_PLUGIN_NAME,

    onRunStart(run, how) {
      // A resumed run opens its next segment when it works again: one restored while awaiting
      // has nothing to trace until its answer arrives.
      if (how !== 'start') return;
      const segment = segments.open(run, true);
      run.traceContext = traceContextCarrier(segment.span.spanContext()) ?? run.traceContext;
      // `runtime.start` is synchronous: if it threw after this hook (a policy failing the run
      // at its start), no `run_started` came before this microtask, and the span is closed here.
      queueMicrotask(() => {
        if (segment.started || segments.get(run.runId) !== segment) return;
        segments.close(
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
      const segment = segments.ensure(plan.run);
      for (const tool of plan.input.tools) tools.described(tool.name, tool.description);
      // Nothing would see the turn (the default install with no SDK): passed straight on, no
      // closure, no promise. A synchronous throw of an inner hook is the plan port's to catch.
      if (segment.quiet) return next(plan);
      // Unrecorded, but inside the segment's context, so a sampled-out run's planner spans are
      // children of its dropped root (and dropped too), not roots of traces of their own. Not an
      // async function on this path: that would add a promise and a tick to every turn.
      if (!segment.recording) return promised(() => context.with(segment.context, next, undefined, plan));
      return tracePlan(config, segment, plan, next);
    },

    wrapToolCall(call, next) {
      const segment = segments.ensure(call.run);
      tools.described(call.tool.id, call.tool.description);
      // As in wrapPlan. Not in `wrapped` either: its `tool_result` opens no span and counts nothing.
      if (segment.quiet) return next(call);
      segment.wrapped ??= new Set();
      segment.wrapped.add(call.meta.toolCallId);
      // Nothing records (no SDK registered): no span, no clock, no metric attributes; the call
      // still runs inside the segment's context.
      if (!segment.recording && !segment.instruments.recording) {
        return promised(() => context.with(segment.context, next, undefined, call));
      }
      return tools.trace(segment, call, next);
    },

    // Only with the latest conventions: without the hook the runtime does no per-step work for it.
    ...(config.latest
      ? {
          onStateChange(change: RunStateChange, run: RunInfo) {
            // Only an open segment (or the one its step just ended) observes it: a restore opens none.
            const segment = segments.current(run.runId);
            if (segment?.recording) segments.stateChanged(segment, change);
          },
        }
      : {}),

    onEvent(event, run) {
      recordRunEvent(parts, event, run);
    },
  };
}

/** `run()`'s promise, or a rejected one when it throws: what an async hook would return. */
function promised<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (err) {
    return Promise.reject(err);
  }
}
