import type { PlanResult } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { waitUntil } from '../run/wait-until.ts';
import type { RestoredCall } from '../tools/call-in-doubt.ts';
import type { ElicitationAnswer, ElicitationRequest } from '../tools/elicitation.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { PendingCall, RunContext } from './run-context.ts';

/**
 * The run machine's ports: the asynchronous work of a step, by name. The machine hands each
 * request to one long-lived child actor per run, `steps` (run-steps.ts), which calls the port and
 * sends the outcome back as an event; the runtime supplies the ports with
 * `machine.provide({ actors: { runSteps: runSteps(ports) } })` (docs/architecture.md), so the same
 * definition serves the runtime, diagrams and other engines (Temporal's workflow supplies
 * activities).
 *
 * | port            | requested in         | does                                                 | answered with |
 * |-----------------|----------------------|------------------------------------------------------|---------------|
 * | `plan`          | planning, finalizing | asks the planner, bounded by the time budget         | `plan.done` / `plan.error` |
 * | `validateBatch` | validating.policies  | `onToolBatch`, then the checks of `validateCalls`    | `validate.done` / `validate.error` |
 * | `executeTool`   | executing            | one admitted call: `execute` with its timeout        | `tool.done` / `tool.error` |
 * | `reviewResults` | resuming.policies    | `onToolResult` / `onRetryHint` on `batch.newResults`, `batch.newHints` | `review.done` / `review.error` |
 * | `sleepUntil`    | awaiting.backoff     | waits until a stored deadline (restorable)           | `sleep.done` |
 *
 * Three more ports are not asynchronous. The guard `consultsPolicies` says whether the runtime has
 * batch policies (`onToolBatch`); when it has none, `validating` requests nothing and the action
 * `validateCalls` checks the batch synchronously instead. The guard `reviewsResults` says whether
 * the batch just folded needs the policies' review; when not, `resuming` requests nothing. Both
 * paths give the same results; only the states a snapshot can be taken in differ.
 */
export interface PlanActorInput {
  kind: 'start' | 'resume' | 'finalize';
  context: RunContext;
}
export interface PlanActorOutput {
  result?: PlanResult;
  /** The time budget ran out before the planner answered. */
  timedOut?: boolean;
  /**
   * Time the host lost to a failure of its own before this answer, ms (a Temporal activity retried
   * after its worker died): added to `flow.awaitedMs`, so it is not the run's budget to spend.
   */
  hostLostMs?: number;
  /** When the planner was asked (epoch ms) and how long it took (ms): the `planner_turn` event's. */
  startedAt?: number;
  durationMs?: number;
  /** The tool ids the turn advertised to the planner. */
  tools?: string[];
  /** The parent run's turn whose recorded result this is (a fork's recorded replay, runtime/run-fork.ts). */
  replayedFrom?: string;
  /**
   * Call index → the `__proto__`/`constructor`/`prototype` keys (dotted paths in the input) a
   * code planner's object input had: the JSON copy of the result leaves them out, so the tool
   * boundary is told, and refuses them as it refuses a model's (`forbidden_key`).
   */
  forbiddenKeys?: Record<number, string[]>;
}

export interface ValidateBatchInput {
  context: RunContext;
}
export interface ValidateBatchOutput {
  pending: PendingCall[];
  results: (ToolResultJSON | null)[];
  hints: PolicyRetryHint[];
  effects: PolicyEffects;
}

export interface ExecuteToolInput {
  call: PendingCall;
  meta: ToolCallMeta;
  labels: Record<string, string>;
  index: number;
  /**
   * When the run's time budget ends (epoch ms): the call (its `wrapToolCall` hooks included) is
   * stopped then, whatever its own timeout. Absent in requests built before it existed: no bound.
   */
  deadlineAt?: number;
  /**
   * The call was started before and its end never recorded: asked again after a restore (the
   * machine's `resumeToolCalls`) or in a retried Temporal activity. A tool that may not run twice
   * is reconciled or left in doubt (tools/call-in-doubt.ts).
   */
  restored?: RestoredCall;
}
export interface ExecuteToolOutput {
  index: number;
  result: ToolResultJSON;
  hint?: PolicyRetryHint;
  /** As `PlanActorOutput.hostLostMs`: time a retried call lost, added to `flow.awaitedMs`. */
  hostLostMs?: number;
}

/** The batch to review is `context.batch.newResults`, its hints `context.batch.newHints`. */
export interface ReviewResultsInput {
  context: RunContext;
}

export interface SleepUntilInput {
  /** Epoch ms. */
  until: number;
}

/** What a port is called with. */
export interface TaskArgs<TInput> {
  input: TInput;
  /**
   * Aborted when the run's `steps` actor stops (a cancel, the run stopped or finished). The port
   * may abort it itself (a deadline), so what it hands on (a planner's `signal`) needs no
   * controller of its own. Created on first read: a port that never reads it costs none.
   */
  readonly controller: AbortController;
  /**
   * Calls `listener` when the run's `steps` actor stops while the request is in flight (before
   * the controller, if one was read, aborts): a port that needs to know of a stop but hands no
   * signal on (a planner that never reads its `signal`) need not make a controller for it.
   * Optional: a caller without it (Temporal's activities) has the port listen to the controller.
   */
  onStop?(listener: () => void): void;
  /**
   * Calls `listener` when the run is canceled while the request runs (`canceling`): the run
   * waits a bounded while for it to end (`CANCEL_GRACE_MS`), and records what it returns. Without
   * a listener (or without this, Temporal's activities), a cancel stops the request as a stop does.
   */
  onCancel?(listener: () => void): void;
  /**
   * A running tool call asks a person (`elicit()`, tools/call-tool.ts): the run awaits the answer in
   * `awaiting.elicitation` and `reply` is called once with it. Only `executeTool`'s requests
   * have it, and only in a host whose run can await during a call (absent: Temporal's
   * activities, where the call cannot ask).
   */
  elicit?(request: ElicitationRequest, reply: (answer: ElicitationAnswer) => void): void;
}

/** One port: its output, or a promise of it. A rejection is answered with the port's error event. */
export type RunPort<TInput, TOutput> = (args: TaskArgs<TInput>) => PromiseLike<TOutput> | TOutput;

/** The run machine's asynchronous ports (see the table above). */
export interface RunPorts {
  plan: RunPort<PlanActorInput, PlanActorOutput>;
  validateBatch: RunPort<ValidateBatchInput, ValidateBatchOutput>;
  executeTool: RunPort<ExecuteToolInput, ExecuteToolOutput>;
  reviewResults: RunPort<ReviewResultsInput, PolicyEffects>;
  sleepUntil: RunPort<SleepUntilInput, void>;
}

const notProvided =
  (name: string): RunPort<unknown, never> =>
  () => {
    throw new Error(
      `The run machine's "${name}" port was not provided; use machine.provide({ actors: { runSteps: runSteps(ports) } })`,
    );
  };

/** Waits until `input.until` (epoch ms), or until the run's steps stop. */
export const sleepUntilPort: RunPort<SleepUntilInput, void> = ({ input, controller }) =>
  new Promise<void>((resolve) => {
    const stop = waitUntil(input.until, resolve);
    controller.signal.addEventListener('abort', () => {
      stop();
      resolve();
    });
  });

/** The ports the machine declares: each throws "not provided" but `sleepUntil`, which needs nothing. */
export const placeholderPorts: RunPorts = {
  plan: notProvided('plan'),
  validateBatch: notProvided('validateBatch'),
  executeTool: notProvided('executeTool'),
  reviewResults: notProvided('reviewResults'),
  sleepUntil: sleepUntilPort,
};
