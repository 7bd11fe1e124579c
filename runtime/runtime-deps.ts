/**
 * Step 2 of `createRuntime` (deps): what the run's steps need ({@link RunDeps}), the run machine
 * with those steps provided, and the inspection observer every actor gets.
 *
 * @module
 */

import type { InspectionEvent } from 'xstate';
import { inDoubtCallsToReview } from '../machines/in-doubt-outcomes.ts';
import type { RunContext } from '../machines/run-context.ts';
import { type RunMachine, runMachine, validateCallsAction } from '../machines/run-machine.ts';
import type { RunPorts } from '../machines/run-ports.ts';
import { runSteps } from '../machines/run-steps.ts';
import type { Plugin, RunInfo } from '../plugins/define-plugin.ts';
import { defaultPolicies } from '../policies/default-policies.ts';
import { createPolicyEngine, type PolicyEngine } from '../policies/policy-engine.ts';
import { noPolicies, type PolicyRunner } from '../policies/policy-runner.ts';
import { NO_EFFECTS } from '../run/policy-effects.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import type { RunHandle } from './run-handle.ts';
import type {
  InspectObserver,
  OnRuntimeError,
  CoreRuntimeOptions as RuntimeOptions,
  RuntimeSettings,
} from './runtime-options.ts';
import { createExecuteToolPort } from './steps/execute-tool.ts';
import { createPlanPort } from './steps/plan-step.ts';
import { createReviewResultsPort } from './steps/review-results.ts';
import type { RunDeps } from './steps/run-deps.ts';
import { createValidateBatchPort, SYNC_VALIDATION_MAX_CALLS, validateCalls } from './steps/validate-batch.ts';

/** The live runs of one runtime, by run id. */
export type LiveRuns = Map<string, RunHandle>;

/**
 * The run steps' dependencies: planner, policies, plugins, limits, and where streamed deltas go.
 *
 * @throws TypeError when both `policies` (or plugin policies) and `policyRunner` are given.
 */
export function createRunDeps(options: RuntimeOptions, settings: RuntimeSettings, live: LiveRuns): RunDeps {
  const { catalog, plugins } = settings;
  return {
    catalog,
    planner: options.planner,
    policies: policyRunnerOf(options, plugins, catalog),
    plugins,
    defaultToolTimeoutMs: options.defaultToolTimeoutMs,
    limits: options.limits,
    ...(options.approvals === undefined ? {} : { approvals: options.approvals }),
    finalizeGraceMs: options.finalizeGraceMs,
    // Deltas go to the run's events$ only, live: they are many, and only a UI watching wants them.
    publishDelta: (runId, turnId, delta) =>
      live.get(runId)?.publishLive({ ...delta, runId, turnId, at: Date.now() }),
    // Progress of a running tool (an MCP server's notifications/progress, a task's status): live only too.
    publishProgress: (runId, call, progress) =>
      live.get(runId)?.publishLive({
        type: 'tool_progress',
        ...call,
        ...(typeof progress.progress === 'number' ? { progress: progress.progress } : {}),
        ...(typeof progress.total === 'number' ? { total: progress.total } : {}),
        ...(typeof progress.message === 'string' ? { message: progress.message.slice(0, 1_000) } : {}),
        runId,
        at: Date.now(),
      }),
  };
}

/**
 * The run machine with this runtime's steps provided. `toolGate` is the innermost plugin around
 * tool execution: a tool executes only once its call is in the store (write-ahead).
 */
export function provideRunMachine(
  deps: RunDeps,
  toolGate: Plugin,
  settings: RuntimeSettings,
  live: LiveRuns,
  /** Wraps the steps' ports (a fork's recorded replay, run-fork.ts). */
  wrapPorts?: (ports: Partial<RunPorts>) => Partial<RunPorts>,
): RunMachine {
  const { agent, plugins } = settings;
  const consults = consultationsOf(deps.policies, deps.catalog);
  const infoOf = (runId: string): RunInfo => {
    const context = live.get(runId)?.context;
    return {
      runId,
      agent,
      sessionId: context?.sessionId,
      labels: context?.labels ?? {},
      traceContext: context?.traceContext ?? null,
    };
  };
  const ports: Partial<RunPorts> = {
    plan: createPlanPort(deps),
    validateBatch: createValidateBatchPort(deps),
    executeTool: createExecuteToolPort({ ...deps, plugins: [...plugins, toolGate] }, infoOf),
    reviewResults: createReviewResultsPort(deps),
  };
  return runMachine.provide({
    actors: { runSteps: runSteps(wrapPorts ? wrapPorts(ports) : ports) },
    actions: { validateCalls: validateCallsAction((context) => validateCalls(deps, context, NO_EFFECTS)) },
    // Without policies (with the hook), validating and resuming request nothing of `steps` (see
    // run-ports.ts); a large batch is still validated by the port, in slices.
    guards: {
      consultsPolicies: ({ context }) =>
        consults.batch(context) || context.batch.pending.length > SYNC_VALIDATION_MAX_CALLS,
      reviewsResults: ({ context }) => consults.review(context),
      inDoubtToReview: ({ context }) => consults.inDoubt && inDoubtCallsToReview(context).length > 0,
    },
  });
}

/** The run machine as this runtime provides it (for diagrams and inspectors). */
export type ProvidedRunMachine = RunMachine;

/**
 * One inspection observer fanning out to the app's (`inspect`) and the plugins'; a throwing
 * observer is reported (`onError`) and the others still see the event. `undefined` when there is none.
 */
export function inspectionObserver(
  inspect: InspectObserver | undefined,
  plugins: Plugin[],
  onError: OnRuntimeError,
): ((event: InspectionEvent) => void) | undefined {
  const inspectors = [inspect, ...plugins.map((plugin) => plugin.inspect)].filter(
    (observer): observer is InspectObserver => observer !== undefined,
  );
  if (inspectors.length === 0) return undefined;
  return (event: InspectionEvent) => {
    for (const observer of inspectors) {
      try {
        if (typeof observer === 'function') observer(event);
        else observer.next?.(event);
      } catch (err) {
        onError(err, 'inspection observer');
      }
    }
  };
}

/**
 * When the run needs its policy steps: a batch is checked by `onToolBatch` policies or a tool's
 * conditional `requiresConfirmation` (`validating`),
 * a folded batch reviewed when a policy has a hook for what it brought (`resuming`). A runner of
 * the app's own is always consulted. Runs of a runtime whose policies have no hook for a step skip
 * it (the `steps` round trip and its state), as a runtime without policies does: the default
 * policies (`onRetryHint` only) cost a review only for a batch with hints.
 */
function consultationsOf(
  runner: PolicyRunner,
  catalog: ToolCatalog,
): {
  batch: (context: RunContext) => boolean;
  review: (context: RunContext) => boolean;
  /** Whether calls in doubt are put to policies (`onInDoubt`) before the run waits for a person. */
  inDoubt: boolean;
} {
  // A conditional requiresConfirmation is asked asynchronously, in the validateBatch port.
  const conditional = catalog.list().some((tool) => typeof tool.requiresConfirmation === 'function');
  if (runner === noPolicies) return { batch: () => conditional, review: () => false, inDoubt: false };
  const engine = runner as Partial<PolicyEngine>;
  const policies = engine.policies;
  const inDoubt = typeof runner.onInDoubt === 'function' && (runner.consultsInDoubt?.() ?? true);
  if (!Array.isArray(policies)) return { batch: () => true, review: () => true, inDoubt };
  const has = (hook: 'onToolBatch' | 'onToolResult' | 'onRetryHint') =>
    policies.some((policy) => typeof policy[hook] === 'function');
  const onBatch = has('onToolBatch');
  const onResult = has('onToolResult');
  const onHint = has('onRetryHint');
  // Policies whose every `onToolBatch` is gated (`consultBatchWhen`) are asked per batch, from the run's state.
  const gated = onBatch && policies.every((policy) => !policy.onToolBatch || policy.consultBatchWhen);
  const batch =
    conditional || (onBatch && !gated)
      ? () => true
      : onBatch && engine.consultsBatch
        ? (context: RunContext) => engine.consultsBatch!(context)
        : () => false;
  // Ungated `onToolBatch` policies may have deferred something to the review (a backoff, a
  // question); a gated one that was asked says so in the run's policy state (`carry`).
  const carries = onBatch && !gated;
  const reviews = engine.reviewsResults;
  return {
    batch,
    inDoubt,
    review: (context) => {
      if (carries || (context.policyState as { carry?: unknown } | null)?.carry !== undefined) return true;
      if (reviews) return reviews(context);
      const { newResults, newHints } = context.batch;
      return (onResult && newResults.length > 0) || (onHint && newHints.length > 0);
    },
  };
}

/**
 * The runtime's policy port: its own runner, or the engine over its and its plugins' policies.
 * No `policies` (and no runner): {@link defaultPolicies}.
 */
function policyRunnerOf(options: RuntimeOptions, plugins: Plugin[], catalog: ToolCatalog): PolicyRunner {
  const own = options.policies ?? (options.policyRunner ? [] : defaultPolicies());
  const policies = [...own, ...plugins.flatMap((plugin) => plugin.policies ?? [])];
  if (options.policyRunner) {
    if (policies.length > 0)
      throw new TypeError(
        'Give createRuntime either `policies` (and plugin policies) or `policyRunner`, not both',
      );
    return options.policyRunner;
  }
  return policies.length > 0 ? createPolicyEngine({ policies, tools: catalog }) : noPolicies;
}
