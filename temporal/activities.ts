import type { TracerProvider } from '@opentelemetry/api';
import type { RunContext } from '../machines/run-context.ts';
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
import { createExecuteToolPort, toolTimeoutMs } from '../runtime/steps/execute-tool.ts';
import { createPlanPort } from '../runtime/steps/plan-step.ts';
import { createReviewResultsPort } from '../runtime/steps/review-results.ts';
import type { RunDeps } from '../runtime/steps/run-deps.ts';
import { createValidateBatchPort } from '../runtime/steps/validate-batch.ts';
import { MAX_CAUSE_DEPTH } from '../tools/tool-error.ts';
import { type TracedExecuteToolInput, tracedPlan, tracedToolCall } from './activity-spans.ts';
import { Payloads } from './payload-store.ts';
import { type ArchiveTranscriptInput, archiveChunk, readArchived } from './transcript-archive.ts';
import { type ReadTranscript, readRange, TranscriptCache } from './transcript-cache.ts';
import type { ArchivedTranscript, TranscriptPage, TranscriptRef } from './transcript-ref.ts';

/**
 * A planner turn's activity input on Temporal: the machine's, with the transcript as a reference
 * (`context.messages` empty) so it stays out of the workflow's history (`transcript-ref.ts`).
 * Without `transcript`, `context.messages` is the transcript.
 */
export type PlanStepInput = PlanActorInput & { transcript?: TranscriptRef };

/**
 * A planner turn's activity output: the machine's, plus the timeout of each tool it calls as
 * this worker runs it (`timeoutMs`, or the worker's default), so the workflow sizes the calls'
 * activities without the client knowing the tools.
 */
export type PlanStepOutput = PlanActorOutput & { toolTimeoutsMs?: Record<string, number> };

/** The activities a toolwarden worker registers: the run machine's steps (docs/temporal.md §Activities). */
export interface ToolwardenActivities {
  plan(input: PlanStepInput): Promise<PlanStepOutput>;
  validateBatch(input: ValidateBatchInput): Promise<ValidateBatchOutput>;
  executeTool(input: TracedExecuteToolInput): Promise<ExecuteToolOutput>;
  reviewResults(input: ReviewResultsInput): Promise<PolicyEffects>;
  /**
   * Writes the transcript's messages `from … to − 1` to the payload store when the workflow
   * continues as new (`transcript-archive.ts`); null when the worker has no store (the next
   * execution then carries them).
   */
  archiveTranscript(input: ArchiveTranscriptInput): Promise<ArchivedTranscript | null>;
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
  payloads = new Payloads(),
): ToolwardenActivities {
  const plan = createPlanPort(deps);
  /** The planner turn's input with its transcript: from the cache, or read from the workflow. */
  const withTranscript = async (input: PlanStepInput): Promise<PlanActorInput> => {
    const { transcript, ...machineInput } = input;
    if (!transcript) return machineInput;
    const runId = input.context.runId;
    const messages = await transcripts.resolve(runId, transcript, await transcriptReader(runId), (archived) =>
      readArchived(payloads.store, archived),
    );
    if (input.kind === 'finalize') transcripts.forget(runId);
    return { ...machineInput, context: { ...machineInput.context, messages } };
  };
  /** The context with the results it holds by reference read back (payload-store.ts): what the planner and policies see. */
  const withPayloads = async <C extends RunContext>(context: C): Promise<C> => {
    const { batch } = context;
    return {
      ...context,
      messages: await payloads.messages(context.messages),
      batch: {
        ...batch,
        lastResults: await payloads.results(batch.lastResults),
        newResults: await payloads.results(batch.newResults),
      },
    };
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
  return withNamedCauses({
    plan: (input) =>
      heartbeating(async (lostMs) => {
        const full = await withTranscript(input);
        full.context = await withPayloads(full.context);
        // A retried turn gets its deadline moved by the time lost; the workflow then books it.
        if (lostMs > 0) full.context = lostTimeCredited(full.context, lostMs);
        const output: PlanStepOutput = await tracedPlan(tracerProvider, full, () => step(plan, full));
        if (lostMs > 0) output.hostLostMs = lostMs;
        // The worker knows its tools' timeouts; the workflow sizes each call's activity by them.
        const calls = output.result?.toolCalls ?? [];
        if (calls.length > 0) {
          output.toolTimeoutsMs = Object.fromEntries(
            calls.map((call) => [
              call.name,
              toolTimeoutMs(deps.catalog.get(call.name)?.timeoutMs, deps.defaultToolTimeoutMs),
            ]),
          );
        }
        return output;
      }),
    validateBatch: (input) => step(validateBatch, input),
    executeTool: (input: TracedExecuteToolInput) =>
      heartbeating(async (lostMs) => {
        infos.set(input.meta.runId, {
          runId: input.meta.runId,
          agent: { id: input.meta.agentId, name: input.meta.agentId },
          ...(input.meta.sessionId === undefined ? {} : { sessionId: input.meta.sessionId }),
          labels: input.labels,
          traceContext: input.traceContext ?? null,
        });
        const { traceContext: _trace, ...machineInput } = input;
        // A retried call gets its deadline moved by the time lost, as a retried turn does.
        if (lostMs > 0 && machineInput.deadlineAt !== undefined) machineInput.deadlineAt += lostMs;
        // A retried call was started by an attempt whose end Temporal never heard (a lost
        // worker, a timeout): a tool that may not run twice is reconciled or left in doubt.
        if (lostMs > 0) machineInput.restored = { cause: 'retried' };
        const output = await tracedToolCall(tracerProvider, input, () => step(executeTool, machineInput));
        // A large result leaves by reference (payload-store.ts): history holds the reference.
        const result = await payloads.outgoing(output.result);
        return { ...output, result, ...(lostMs > 0 ? { hostLostMs: lostMs } : {}) };
      }),
    reviewResults: async (input) =>
      step(reviewResults, { ...input, context: await withPayloads(input.context) }),
    archiveTranscript: (input) =>
      heartbeating(async () => {
        const store = payloads.store;
        if (!store) return null;
        // The worker that took the run's last turn holds the messages; another reads them by query.
        const messages =
          transcripts.held(input.runId, input.from, input.to, input.digest) ??
          (await readRange(await transcriptReader(input.runId), input.from, input.to));
        return archiveChunk(store, input, messages);
      }),
  });
}

/**
 * The activities, each rethrowing what it throws as {@link namedFailure} does: Temporal's failure
 * converter records the class of an activity's error but only the message of each of its causes,
 * so a planner error over `TypeError: fetch failed` would reach the workflow's run as a chain of
 * unnamed causes (the workflow rebuilds the chain: workflow-activities.ts).
 */
function withNamedCauses(activities: ToolwardenActivities): ToolwardenActivities {
  const named = Object.entries(activities).map(([name, activity]) => [
    name,
    (input: never) =>
      (activity as (input: never) => Promise<unknown>)(input).catch(async (error: unknown) => {
        throw await namedFailure(error);
      }),
  ]);
  return Object.fromEntries(named) as unknown as ToolwardenActivities;
}

/**
 * An Error with causes as an ApplicationFailure chain, each link typed by its error's class name
 * (at most MAX_CAUSE_DEPTH + 1 links; a cycle ends at its first repeat), so the names cross to
 * the workflow as the messages do. Anything else (no cause, not an Error, already a Temporal
 * failure such as a cancellation) is returned as it is.
 */
async function namedFailure(error: unknown): Promise<unknown> {
  if (!(error instanceof Error) || !(error.cause instanceof Error)) return error;
  activityModule ??= import('@temporalio/activity');
  const { ApplicationFailure, CancelledFailure } = await activityModule;
  if (error instanceof ApplicationFailure || error instanceof CancelledFailure) return error;
  const links: Error[] = [];
  for (
    let at: unknown = error;
    at instanceof Error && !links.includes(at) && links.length <= MAX_CAUSE_DEPTH;
    at = at.cause
  ) {
    links.push(at);
  }
  let cause: Error | undefined;
  for (const link of links.reverse()) {
    const failure = ApplicationFailure.create({
      message: link.message,
      type: link.name || 'Error',
      ...(cause === undefined ? {} : { cause }),
    });
    failure.stack = link.stack;
    cause = failure;
  }
  return cause;
}

/** The context with `lostMs` more of `flow.awaitedMs` (not the run's time: `deadlineAt`). */
function lostTimeCredited(context: RunContext, lostMs: number): RunContext {
  return { ...context, flow: { ...context.flow, awaitedMs: (context.flow.awaitedMs ?? 0) + lostMs } };
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

/**
 * How often a running activity heartbeats, ms. The worker sends at most one heartbeat per
 * throttle interval (`createTemporalWorker` sets `maxHeartbeatThrottleInterval` to 1 s), and a
 * cancel reaches the activity with the answer to a heartbeat: the tool's or planner's signal
 * aborts within about a second of the workflow's cancel (docs/temporal.md §Crashes and cancel).
 */
export const HEARTBEAT_INTERVAL_MS = 500;

async function activityContext() {
  // Loaded on first use: importing toolwarden/temporal needs no Temporal package.
  activityModule ??= import('@temporalio/activity');
  const { Context } = await activityModule;
  try {
    return Context.current();
  } catch {
    return undefined; // Not inside an activity (a unit test): nothing heartbeats or cancels it.
  }
}

/**
 * Runs an activity's work while it heartbeats every {@link HEARTBEAT_INTERVAL_MS}: a worker that
 * dies is noticed by the server at the heartbeat timeout (seconds), not at the start-to-close
 * backstop, and a cancel is delivered. `work` gets the time this attempt's retries lost: from the
 * first attempt's schedule to this attempt's start (0 on a first attempt).
 */
async function heartbeating<T>(work: (lostMs: number) => Promise<T>): Promise<T> {
  const context = await activityContext();
  if (!context || context.info.isLocal) return work(0);
  const { info } = context;
  const lostMs = info.attempt > 1 ? Math.max(0, Date.now() - info.scheduledTimestampMs) : 0;
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    return await work(lostMs);
  } finally {
    clearInterval(timer);
  }
}

/** Runs one port to its output; the activity's cancellation aborts the port's controller. */
async function step<I, O>(port: RunPort<I, O>, input: I): Promise<O> {
  const signal = (await activityContext())?.cancellationSignal;
  const controller = new AbortController();
  const stop = () => controller.abort();
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop);
  try {
    return await port({ input, controller });
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
