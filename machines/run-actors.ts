import { fromPromise } from 'xstate';
import type { PlanResult } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { waitUntil } from '../run/wait-until.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { PendingCall, RunContext } from './run-context.ts';

/**
 * The run machine's ports: the actor logic it invokes, by name. The machine declares them with
 * these placeholder implementations; the runtime supplies real ones with `machine.provide()`
 * (docs/architecture.md), so the same definition serves the runtime, diagrams and other engines.
 *
 * | actor           | state                | does                                                 |
 * |-----------------|----------------------|------------------------------------------------------|
 * | `plan`          | planning, finalizing | asks the planner, bounded by the time budget         |
 * | `validateBatch` | validating.policies  | `onToolBatch`, then the checks of `validateCalls`    |
 * | `executeTool`   | executing            | one child per admitted call: `execute` with its timeout |
 * | `reviewResults` | resuming.policies    | `onToolResult` / `onRetryHint` on `batch.newResults`, `batch.newHints` |
 * | `sleepUntil`    | awaiting.backoff     | waits until a stored deadline (restorable)           |
 *
 * Two more ports are not actors. The guard `consultsPolicies` says whether the runtime has
 * policies; when it has none, `validating` and `resuming` invoke nothing (an actor per step costs
 * ~13 µs in XState 5.33) and the action `validateCalls` checks the batch synchronously instead.
 * Both paths give the same results; only the states a snapshot can be taken in differ.
 */
export interface PlanActorInput {
  kind: 'start' | 'resume' | 'finalize';
  context: RunContext;
}
export interface PlanActorOutput {
  result?: PlanResult;
  /** The time budget ran out before the planner answered. */
  timedOut?: boolean;
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
}
export interface ExecuteToolOutput {
  index: number;
  result: ToolResultJSON;
  hint?: PolicyRetryHint;
}

/** The batch to review is `context.batch.newResults`, its hints `context.batch.newHints`. */
export interface ReviewResultsInput {
  context: RunContext;
}

export interface SleepUntilInput {
  /** Epoch ms. */
  until: number;
}

const notProvided = (name: string) => async (): Promise<never> => {
  throw new Error(`The run machine's "${name}" actor was not provided; use machine.provide({ actors })`);
};

export const runActors = {
  plan: fromPromise<PlanActorOutput, PlanActorInput>(notProvided('plan')),
  validateBatch: fromPromise<ValidateBatchOutput, ValidateBatchInput>(notProvided('validateBatch')),
  executeTool: fromPromise<ExecuteToolOutput, ExecuteToolInput>(notProvided('executeTool')),
  reviewResults: fromPromise<PolicyEffects, ReviewResultsInput>(notProvided('reviewResults')),
  sleepUntil: fromPromise<void, SleepUntilInput>(
    ({ input, signal }) =>
      new Promise<void>((resolve) => {
        const stop = waitUntil(input.until, resolve);
        signal.addEventListener('abort', () => {
          stop();
          resolve();
        });
      }),
  ),
};
