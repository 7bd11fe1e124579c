import type { RunContext } from '../../machines/run-context.ts';
import type { Plugin, RunInfo } from '../../plugins/define-plugin.ts';
import type { PolicyRunner } from '../../policies/policy-runner.ts';
import type { PlanDelta, Planner } from '../../run/planner.ts';
import type { ToolProgress } from '../../tools/call-tool.ts';
import type { ParseLimits } from '../../tools/parse-arguments.ts';
import type { ToolCatalog } from '../../tools/tool-catalog.ts';
import type { ApprovalOptions } from './remembered-approvals.ts';

/** What the run's steps need from the runtime that hosts them. */
export interface RunDeps {
  catalog: ToolCatalog;
  planner: Planner;
  policies: PolicyRunner;
  plugins: Plugin[];
  /** Used for tools that declare no `timeoutMs`. */
  defaultToolTimeoutMs?: number;
  limits?: ParseLimits;
  /** Sticky approvals and mixed batches (`createRuntime({ approvals })`). */
  approvals?: ApprovalOptions;
  /**
   * Extra time the finalizing turn gets after the time budget ran out, in ms. Absent: a tenth of
   * the run's `timeBudgetMs`, between 1 s and 30 s (`finalizeGraceOf`, plan-step.ts).
   */
  finalizeGraceMs?: number | undefined;
  /** Where a streaming planner's deltas go (`PlanInput.onDelta`); absent: planners get none. */
  publishDelta?: (runId: string, turnId: string, delta: PlanDelta) => void;
  /** Where a running tool's progress goes (`reportToolProgress`); absent: nowhere. */
  publishProgress?: (
    runId: string,
    call: { turnId: string; toolCallId: string; tool: string },
    progress: ToolProgress,
  ) => void;
}

export function runInfo(context: RunContext): RunInfo {
  return {
    runId: context.runId,
    agent: context.agent,
    sessionId: context.sessionId,
    labels: context.labels,
    traceContext: context.traceContext,
  };
}

/** Tools the planner may see now: enabled and inside the current restriction (docs/architecture.md). */
export function advertisedTools(deps: RunDeps, context: RunContext) {
  const restrict = context.restrictTo ? new Set(context.restrictTo) : undefined;
  return deps.catalog.descriptors(
    (tool) => context.disabledTools[tool.id] === undefined && (!restrict || restrict.has(tool.id)),
  );
}
