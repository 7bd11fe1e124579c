/**
 * Planner turns in telemetry (docs/telemetry.md): the `plan {agent}` span around a turn in a
 * recorded segment, its result kind, and the turn's token usage summed on the segment.
 *
 * @module
 */

import type { PlanInvocation } from '../plugins/define-plugin.ts';
import { context, SpanKind, trace } from '../plugins/otel-api.ts';
import type { PlanResult } from '../run/planner.ts';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_TOOLWARDEN_PLAN_KIND,
  ATTR_TOOLWARDEN_PLAN_RESULT_KIND,
  ATTR_TOOLWARDEN_RUN_ID,
  ATTR_TOOLWARDEN_TURN_ID,
  GEN_AI_OPERATION_NAME_VALUE_PLAN,
  type PlanResultKind,
  planSpanName,
} from './attributes.ts';
import type { Segment } from './run-segments.ts';
import { failSpan } from './span-values.ts';
import type { TelemetryConfig } from './telemetry-options.ts';

/** `toolwarden.plan.result_kind` of what a planner returned, by the run machine's precedence. */
export function planResultKind(result: PlanResult | undefined): PlanResultKind {
  if (Array.isArray(result?.toolCalls) && result.toolCalls.length > 0) return 'tool_calls';
  const waits = result?.await;
  if (waits && (waits.clarification || waits.externalTools || waits.confirmation)) return 'await';
  if (result?.finalResponse) return 'final_response';
  return 'none';
}

/** `wrapPlan` in a recorded segment: the planner runs inside a `plan` span. */
export async function tracePlan(
  config: TelemetryConfig,
  segment: Segment,
  plan: PlanInvocation,
  next: (plan: PlanInvocation) => Promise<PlanResult>,
): Promise<PlanResult> {
  const span = config.tracer.startSpan(
    planSpanName(plan.run.agent.name),
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        // The latest conventions define a plan operation (gen_ai.plan.internal span).
        ...(config.latest
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

/**
 * Adds a planner turn's `usage` to its segment's sum, which the segment's `invoke_agent` span
 * carries as `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` when it ends (the model's
 * `chat` spans carry each call's own). Turns that report no usage add nothing. A turn's `cost`
 * (docs/policies.md §Money) is kept as the segment's `cost`: `toolwarden.cost.*` on that span.
 */
function addUsage(segment: Segment, result: PlanResult | undefined): void {
  // A priced turn (costBudget) carries the run's spend so far: the segment's span ends with the latest.
  if (result?.cost) segment.cost = result.cost;
  const usage = result?.usage;
  if (!usage) return;
  segment.usage ??= { inputTokens: 0, outputTokens: 0 };
  segment.usage.inputTokens += usage.inputTokens;
  segment.usage.outputTokens += usage.outputTokens;
}
