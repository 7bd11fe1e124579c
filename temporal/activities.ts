import type { TracerProvider } from '@opentelemetry/api';
import type {
  ExecuteToolOutput,
  PlanActorInput,
  PlanActorOutput,
  ReviewResultsInput,
  RunPort,
  ValidateBatchInput,
  ValidateBatchOutput,
} from '../machines/run-ports.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { createExecuteToolPort } from '../runtime/steps/execute-tool.ts';
import { createPlanPort } from '../runtime/steps/plan-step.ts';
import { createReviewResultsPort } from '../runtime/steps/review-results.ts';
import type { RunDeps } from '../runtime/steps/run-deps.ts';
import { createValidateBatchPort } from '../runtime/steps/validate-batch.ts';
import { type TracedExecuteToolInput, tracedPlan, tracedToolCall } from './activity-spans.ts';
import { type ReadTranscript, TranscriptCache } from './transcript-cache.ts';
import type { TranscriptPage, TranscriptRef } from './transcript-ref.ts';

/**
 * A planner turn's activity input on Temporal: the machine's, with the transcript as a reference
 * (`context.messages` empty) so it stays out of the workflow's history (`transcript-ref.ts`).
 * Without `transcript`, `context.messages` is the transcript.
 */
export type PlanStepInput = PlanActorInput & { transcript?: TranscriptRef };

/** The activities a toolwarden worker registers: the run machine's steps (docs/temporal.md §Activities). */
export interface ToolwardenActivities {
  plan(input: PlanStepInput): Promise<PlanActorOutput>;
  validateBatch(input: ValidateBatchInput): Promise<ValidateBatchOutput>;
  executeTool(input: TracedExecuteToolInput): Promise<ExecuteToolOutput>;
  reviewResults(input: ReviewResultsInput): Promise<PolicyEffects>;
}

/**
 * The run machine's steps as Temporal activities: each runs the very step logic the in-process
 * runtime invokes (the planner turn with its time budget, the boundary and `onToolBatch`
 * policies, the tool with its timeout and the plugins' `wrapToolCall`, the policy review), so a
 * run keeps every promise of the runtime. Planner turns and tool calls are `plan` and
 * `execute_tool` spans in the run's trace (`activity-spans.ts`), on `tracerProvider` (default:
 * the global one). Canceling the activity (the workflow left the state, or
 * was canceled) stops the step, which aborts the tool's or planner's signal.
 */
export function createActivities(
  deps: RunDeps,
  tracerProvider?: TracerProvider,
  transcripts = new TranscriptCache(),
): ToolwardenActivities {
  const plan = createPlanPort(deps);
  /** The planner turn's input with its transcript: from the cache, or read from the workflow. */
  const withTranscript = async (input: PlanStepInput): Promise<PlanActorInput> => {
    const { transcript, ...machineInput } = input;
    if (!transcript) return machineInput;
    const runId = input.context.runId;
    const messages = await transcripts.resolve(runId, transcript, await transcriptReader(runId));
    if (input.kind === 'finalize') transcripts.forget(runId);
    return { ...machineInput, context: { ...machineInput.context, messages } };
  };
  const validateBatch = createValidateBatchPort(deps);
  // What plugins' wrapToolCall hooks see of the run, from the call's own ToolCallMeta and labels.
  const infos = new Map<string, RunInfo>();
  const executeTool = createExecuteToolPort(
    deps,
    (runId) =>
      infos.get(runId) ?? {
        runId,
        agent: { id: 'unknown', name: 'unknown' },
        labels: {},
        traceContext: null,
      },
  );
  const reviewResults = createReviewResultsPort(deps);
  return {
    plan: async (input) => {
      const full = await withTranscript(input);
      return tracedPlan(tracerProvider, full, () => step(plan, full));
    },
    validateBatch: (input) => step(validateBatch, input),
    executeTool: (input: TracedExecuteToolInput) => {
      infos.set(input.meta.runId, {
        runId: input.meta.runId,
        agent: { id: input.meta.agentId, name: input.meta.agentId },
        ...(input.meta.sessionId === undefined ? {} : { sessionId: input.meta.sessionId }),
        labels: input.labels,
        traceContext: input.traceContext ?? null,
      });
      const { traceContext: _trace, ...machineInput } = input;
      return tracedToolCall(tracerProvider, input, () => step(executeTool, machineInput));
    },
    reviewResults: (input) => step(reviewResults, input),
  };
}

let activityModule: Promise<typeof import('@temporalio/activity')> | undefined;

/**
 * Reads a run's transcript with the workflow's `transcript` query, through the worker's client
 * (the workflow id is the run id). A query writes nothing to the history.
 */
async function transcriptReader(runId: string): Promise<ReadTranscript> {
  activityModule ??= import('@temporalio/activity');
  const { Context } = await activityModule;
  return (from, to) =>
    Context.current()
      .client.workflow.getHandle(runId)
      .query<TranscriptPage, [number, number]>('transcript', from, to);
}

/** Runs one port to its output; the activity's cancellation aborts the port's controller. */
async function step<I, O>(port: RunPort<I, O>, input: I): Promise<O> {
  // Loaded on first use: importing toolwarden/temporal needs no Temporal package.
  activityModule ??= import('@temporalio/activity');
  const { Context } = await activityModule;
  let signal: AbortSignal | undefined;
  try {
    signal = Context.current().cancellationSignal;
  } catch {
    // Not inside an activity (a unit test): nothing cancels it.
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal?.addEventListener('abort', stop);
  try {
    return await port({ input, controller });
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
