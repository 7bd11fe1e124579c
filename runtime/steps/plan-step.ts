import { fromPromise } from 'xstate';
import type { PlanActorInput, PlanActorOutput } from '../../machines/run-actors.ts';
import { type RunContext, turnId } from '../../machines/run-context.ts';
import { composeWrappers, type PlanInvocation } from '../../plugins/define-plugin.ts';
import { toolResultFromJSON } from '../../tools/tool-result.ts';
import type { CapsState } from '../caps.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../planner.ts';
import { advertisedTools, type RunDeps, runInfo } from './run-deps.ts';

/**
 * The `plan` actor: builds the planner's input from the run context, asks the planner through
 * the plugins' `wrapPlan` hooks, and bounds the call by the time budget (SPEC §4: the budget
 * "also bounds a planner call in flight"). The deadline is recomputed from the stored
 * timestamp, so a restored run waits only for what is left.
 */
export function createPlanActor(deps: RunDeps) {
  const invoke = composeWrappers(
    deps.plugins.flatMap((plugin) => (plugin.wrapPlan ? [plugin.wrapPlan.bind(plugin)] : [])),
    async (plan: PlanInvocation): Promise<PlanResult> =>
      plan.kind === 'start'
        ? deps.planner.planStart(plan.input)
        : deps.planner.planResume(plan.input as PlanResumeInput),
  );
  return fromPromise<PlanActorOutput, PlanActorInput>(async ({ input, signal }) => {
    const { context, kind } = input;
    const deadline =
      context.startedAt + context.caps.timeBudgetMs + (kind === 'finalize' ? deps.finalizeGraceMs : 0);
    const remaining = deadline - Date.now();
    if (remaining <= 0) return { timedOut: true };
    const controller = new AbortController();
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    const planInput = buildPlanInput(deps, context, kind, controller.signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<PlanActorOutput>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error('Time budget exhausted'));
        resolve({ timedOut: true });
      }, remaining);
    });
    try {
      const planned = invoke({ kind, input: planInput, run: runInfo(context) }).then((result) => ({
        result,
      }));
      return await Promise.race([planned, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  });
}

export function capsState(context: RunContext): CapsState {
  return {
    ...context.caps,
    toolCalls: context.toolCalls,
    remainingToolCalls: Math.max(0, context.caps.maxToolCalls - context.toolCalls),
    consecutiveFailedToolCalls: context.consecutiveFailures,
    deadlineAt: context.startedAt + context.caps.timeBudgetMs,
  };
}

function buildPlanInput(
  deps: RunDeps,
  context: RunContext,
  kind: PlanActorInput['kind'],
  signal: AbortSignal,
): PlanInput | PlanResumeInput {
  const base: PlanInput = {
    runId: context.runId,
    turnId: turnId(context),
    agentId: context.agent.id,
    sessionId: context.sessionId,
    messages: structuredClone(context.messages),
    tools: kind === 'finalize' ? [] : advertisedTools(deps, context),
    caps: capsState(context),
    labels: { ...context.labels },
    signal,
  };
  if (kind === 'start') return base;
  return {
    ...base,
    toolResults: context.lastResults.map(toolResultFromJSON),
    clarification: context.answer?.clarification,
    confirmation: context.answer?.confirmation,
    finalize: kind === 'finalize' ? { reason: context.finalize?.reason ?? 'policy' } : undefined,
  };
}
