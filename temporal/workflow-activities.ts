/**
 * The run workflow's activities as the workflow calls them (docs/temporal.md §Activities): their
 * options (timeouts, heartbeats, retries), and each run in a cancellation scope the machine's
 * state controls. Workflow code: Temporal's sandbox, no Node built-ins.
 *
 * @module
 */
import {
  ActivityFailure,
  type ActivityOptions,
  ApplicationFailure,
  CancellationScope,
  proxyActivities,
  proxyLocalActivities,
  TemporalFailure,
} from '@temporalio/workflow';
import type { ExecuteToolInput } from '../machines/run-ports.ts';
import { MAX_CAUSE_DEPTH } from '../tools/tool-error.ts';
import type { ToolwardenActivities } from './activities.ts';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS, type RunWorkflowInput } from './workflow-types.ts';

/** The activities of one workflow execution, with the options each is called with. */
export class WorkflowActivities {
  /** Heartbeat timeout of every activity, ms. */
  readonly heartbeatTimeout: number;
  /** The planner turn's options (a `summary` is added per turn). */
  readonly planOptions: ActivityOptions;
  /** Planner turns, tool calls and the transcript's archive: activities on the task queue. */
  readonly steps: ReturnType<typeof proxyActivities<ToolwardenActivities>>;
  /**
   * The boundary check and the policy review are short, CPU-only steps: local activities, run by
   * the worker that runs the workflow task, recorded as markers, no round trip to the server.
   */
  readonly checks: ReturnType<typeof proxyLocalActivities<ToolwardenActivities>>;
  /**
   * Each tool's timeout as the worker that planned the call reported it (activities.ts), else as
   * the client gave it, ms. Carried across continue-as-new (one entry a tool).
   */
  readonly workerTimeouts: Record<string, number>;

  constructor(private readonly input: RunWorkflowInput) {
    // Every activity heartbeats (activities.ts): a lost worker is noticed at the heartbeat timeout,
    // seconds, and a cancel reaches the running step. The start-to-close timeouts are backstops.
    this.heartbeatTimeout = input.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
    // Only infrastructure failures retry here (a lost worker): tool failures, hints and
    // validation come back as results for the planner to repair, never as activity errors.
    const retry = { maximumAttempts: 5, initialInterval: '1 second' };
    this.planOptions = {
      // The plan step bounds itself by the run's time budget; this is a backstop.
      startToCloseTimeout: input.run.caps.timeBudgetMs + 60_000,
      heartbeatTimeout: this.heartbeatTimeout,
      retry,
    };
    this.steps = proxyActivities<ToolwardenActivities>(this.planOptions);
    this.checks = proxyLocalActivities<ToolwardenActivities>({ startToCloseTimeout: 60_000, retry });
    this.workerTimeouts = { ...input.continued?.toolTimeoutsMs };
  }

  /** A tool call's activity options: its tool's timeout (+5 s), and the summary the Web UI shows. */
  toolOptions(step: ExecuteToolInput): ActivityOptions {
    const { input } = this;
    return {
      startToCloseTimeout:
        (this.workerTimeouts[step.call.name] ??
          input.toolTimeoutsMs?.[step.call.name] ??
          input.defaultToolTimeoutMs ??
          60_000) + 5_000,
      heartbeatTimeout: this.heartbeatTimeout,
      retry: this.planOptions.retry,
      // What the Web UI and `temporal workflow show` name the activity with.
      summary: `${step.call.name} · ${step.meta.toolCallId.slice(input.run.runId.length + 1)}`,
    };
  }
}

/**
 * An activity run in its own cancellation scope, canceled when the machine leaves the state. A
 * failed activity (its retries spent) rejects with its cause, named as thrown in the worker, so
 * the run records why (`Planner failed: the model server is down`), not Temporal's wrapper
 * (`Activity task failed`), and with that error's own causes (see {@link thrownInWorker}).
 */
export async function cancellable<T>(signal: AbortSignal, run: () => Promise<T>): Promise<T> {
  const scope = new CancellationScope();
  signal.addEventListener('abort', () => scope.cancel());
  try {
    return await scope.run(run);
  } catch (error) {
    if (!(error instanceof ActivityFailure) || !error.cause) throw error;
    throw thrownInWorker(error.cause);
  }
}

/**
 * The error a worker threw, rebuilt from the failure Temporal carried (each `Error.cause` of it a
 * failure's `cause`): an Error per link, named by the failure's type (the class name the worker's
 * converter recorded), so the run keeps the chain as the in-process runtime does (a provider error
 * over `connect ECONNREFUSED`; machines/run-actions.ts `plannerErrorOf`). At most
 * MAX_CAUSE_DEPTH + 1 links are rebuilt: `ToolError.from` cuts the chain at MAX_CAUSE_DEPTH with
 * its truncation marker, as for an error thrown in process.
 */
function thrownInWorker(failure: Error): Error {
  const links: Error[] = [];
  for (let at: unknown = failure; at instanceof Error && links.length <= MAX_CAUSE_DEPTH; at = at.cause) {
    links.push(at);
  }
  let cause: Error | undefined;
  for (const link of links.reverse()) {
    const error = new Error(link.message, cause === undefined ? undefined : { cause });
    error.name = failureName(link);
    cause = error;
  }
  return cause as Error;
}

/**
 * The class name a failure stands for: an ApplicationFailure's type (the worker converts what an
 * activity throws into one typed by the error's class), else, for a bare TemporalFailure, `Error`:
 * Temporal's converter keeps only the message and stack of an error's causes, not their classes.
 */
function failureName(failure: Error): string {
  if (failure instanceof ApplicationFailure && failure.type) return failure.type;
  return failure.constructor === TemporalFailure ? 'Error' : failure.name;
}
