import type {
  ActorRefFromLogic,
  CallbackActorLogic,
  MetaObject,
  NonReducibleUnknown,
  StateMachine,
} from 'xstate';
import type { SameType } from '../run/exact-type.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type {
  ApprovalEdit,
  InDoubtResolution,
  NotRemembered,
  RememberedApproval,
  RunContext,
  RunInput,
} from './run-context.ts';
import type { StepEvent, StepRequest, StepsInput } from './run-steps.ts';

// The run machine's type, written out (issue 28 item 4). XState infers a type from `setup()` and
// `createMachine()` that tsc prints whole into every declaration that names it (13.6 KB for
// `runMachine`): each part is named here instead, and `runMachine` is declared with it. The
// machine's declaration is checked against this type (run-machine.ts), so it cannot drift.

/**
 * Events an app (through the run handle) sends to a run actor. Answers are checked by the handle
 * before they are sent; the machine's guards check them again and ignore a mismatch.
 */
export type RunMachineEvent =
  | { type: 'provide.clarification'; id: string; answer: string }
  | { type: 'provide.toolResults'; id: string; results: ToolResultJSON[] }
  | {
      type: 'confirm';
      id: string;
      approved: boolean;
      by?: string;
      reason?: string;
      edits?: ApprovalEdit[];
      /** Approvals to remember (built by the handle from `remember`), and held calls it did not remember, why. */
      remember?: RememberedApproval[];
      notRemembered?: NotRemembered[];
    }
  // `runtime.revokeApproval`: forget a remembered approval (its calls ask again).
  | { type: 'approval.revoke'; approvalId: string; by?: string }
  | { type: 'cancel'; reason?: string }
  // `runtime.resolveInDoubt`: toolCallId → how each call in doubt was settled (checked by the handle).
  | { type: 'resolve.inDoubt'; resolutions: Record<string, InDoubtResolution> }
  // The host: the run's trace context a plugin set (the telemetry plugin's latest segment).
  | { type: 'trace.context'; traceContext: Record<string, string> }
  // Answers of the run's `steps` actor (run-steps.ts).
  | StepEvent;

/** The logic of the run's one `steps` actor (run-steps.ts), invoked as `runSteps`. */
export type RunStepsLogic = CallbackActorLogic<StepRequest, StepsInput | undefined>;

/** The run machine's actor implementations (`provide({ actors })`): only `runSteps`, invoked with the id `steps`. */
export type RunMachineActor = { src: 'runSteps'; logic: RunStepsLogic; id: 'steps' };

/** The run actor's children: the `steps` actor, while it runs. */
export type RunMachineChildren = { steps?: ActorRefFromLogic<RunStepsLogic> | undefined };

/** The names of the run machine's actions (`provide({ actions })`); `finalizeWith` is the one with params. */
export type RunMachineActionName =
  | 'answerElicitation'
  | 'applyReview'
  | 'applyToolApproval'
  | 'applyInDoubtResolution'
  | 'applyInDoubtReview'
  | 'abortToolCalls'
  | 'applyValidation'
  | 'clearEffects'
  | 'emitAwait'
  | 'emitCanceled'
  | 'emitCompleted'
  | 'emitFailed'
  | 'emitNotes'
  | 'emitPlannerTurn'
  | 'enterBackoff'
  | 'enterPolicyClarification'
  | 'failEmptyPlan'
  | 'failFinalizeTimedOut'
  | 'failFromPolicy'
  | 'failInvalidPlan'
  | 'failNoFinalResponse'
  | 'finalizeFromPolicy'
  | 'finalizeTimedOut'
  | 'finalizeDeclined'
  | 'finalizeWith'
  | 'foldBatch'
  | 'leaveElicitation'
  | 'recordActorError'
  | 'recordCallsInDoubt'
  | 'recordCanceledCall'
  | 'recordCancel'
  | 'recordClarificationAnswer'
  | 'recordClarificationRequest'
  | 'recordConfirmationRequest'
  | 'recordExternalResults'
  | 'recordExternalToolsRequest'
  | 'recordFinalResponse'
  | 'recordPlannerConfirmation'
  | 'recordPlannerError'
  | 'recordToolCalls'
  | 'recordToolCrash'
  | 'recordToolResult'
  | 'recordTraceContext'
  | 'revokeApproval'
  | 'refuseBatch'
  | 'refuseElicitation'
  | 'refuseLargeBatch'
  | 'requestElicitation'
  | 'requestExternalCalls'
  | 'requestFinalPlan'
  | 'requestCancelGrace'
  | 'requestInDoubt'
  | 'requestPlan'
  | 'requestReview'
  | 'requestSleep'
  | 'requestToolConfirmation'
  | 'requestValidation'
  | 'resumeToolCalls'
  | 'startAwaitClock'
  | 'startToolCalls'
  | 'startTurn'
  | 'stopAwaitClock'
  | 'validateCalls';

/** The run machine's actions as XState types them: a name and its params. */
export type RunMachineAction =
  | {
      [K in Exclude<RunMachineActionName, 'finalizeWith'>]: { type: K; params: NonReducibleUnknown };
    }[Exclude<RunMachineActionName, 'finalizeWith'>]
  | { type: 'finalizeWith'; params: { reason: string } };

/**
 * The names of the run machine's guards (`provide({ guards })`). `consultsPolicies`,
 * `reviewsResults` and `inDoubtToReview` are the ones the runtime provides (from the policies it has).
 */
export type RunMachineGuardName =
  | 'awaitCapReached'
  | 'awaitsApproval'
  | 'awaitsExternalCalls'
  | 'batchComplete'
  | 'batchExceedsToolCap'
  | 'batchTooLarge'
  | 'callsInDoubt'
  | 'consultsPolicies'
  | 'endsElicitingCall'
  | 'failureCapReached'
  | 'hasAdmittedCalls'
  | 'inDoubtToReview'
  | 'callReturned'
  | 'callsEnded'
  | 'isClarificationAnswer'
  | 'isElicitationAnswer'
  | 'isExternalResults'
  | 'isInDoubtResolution'
  | 'isOpenCallElicitation'
  | 'isPlannerConfirmation'
  | 'isToolApproval'
  | 'needsConfirmation'
  | 'planAwaitsClarification'
  | 'planAwaitsConfirmation'
  | 'planAwaitsExternalTools'
  | 'planHasFinalResponse'
  | 'planHasToolCalls'
  | 'planInvalid'
  | 'planTimedOut'
  | 'planDeclined'
  | 'policyAwaitsClarification'
  | 'policyBacksOff'
  | 'policyFailed'
  | 'policyFinalized'
  | 'reviewsResults'
  | 'runsAheadOfApproval'
  | 'timeBudgetSpent'
  | 'tokenCapReached'
  | 'toolCapReached'
  | 'turnCapReached';

/** The run machine's guards as XState types them. */
export type RunMachineGuard = {
  [K in RunMachineGuardName]: { type: K; params: unknown };
}[RunMachineGuardName];

/** A run actor's state value (`snapshot.value`, `snapshot.matches(...)`): docs/architecture.md. */
export type RunStateValue =
  | 'admitting'
  | 'canceled'
  | 'canceling'
  | 'completed'
  | 'executing'
  | 'failed'
  | 'finalizing'
  | 'planning'
  | 'routing'
  | {
      awaiting:
        | 'approved'
        | 'backoff'
        | 'clarification'
        | 'confirmation'
        | 'elicitation'
        | 'externalTools'
        | 'inDoubt';
    }
  | { resuming: 'checking' | 'policies' }
  | { settling: 'policies' | 'routing' }
  | { validating: 'checking' | 'policies' };

/** The run machine's states, nested as its config nests them. */
export type RunStateSchema = {
  id: 'run';
  states: {
    readonly planning: {};
    readonly validating: { states: { readonly checking: {}; readonly policies: {} } };
    readonly admitting: {};
    readonly executing: {};
    readonly canceling: {};
    readonly settling: { states: { readonly policies: {}; readonly routing: {} } };
    readonly awaiting: {
      states: {
        readonly clarification: {};
        readonly externalTools: {};
        readonly confirmation: {};
        readonly approved: {};
        readonly backoff: {};
        readonly inDoubt: {};
        readonly elicitation: {};
      };
    };
    readonly resuming: { states: { readonly checking: {}; readonly policies: {} } };
    readonly routing: {};
    readonly finalizing: {};
    readonly completed: {};
    readonly failed: {};
    readonly canceled: {};
  };
};

/**
 * The type of {@link runMachine}: an XState `StateMachine` over the run's context, events and
 * input, emitting {@link RunEvent}s, with its actions, guards, state values and states named
 * above. `createActor(runMachine, { input })`, `provide()`, `SnapshotFrom<RunMachine>` and
 * `inspect` are typed as XState types them.
 */
export type RunMachine = StateMachine<
  RunContext,
  RunMachineEvent,
  RunMachineChildren,
  RunMachineActor,
  RunMachineAction,
  RunMachineGuard,
  never,
  RunStateValue,
  string,
  RunInput,
  NonReducibleUnknown,
  RunEvent,
  MetaObject,
  RunStateSchema
>;

/**
 * The machine `setup().createMachine()` built, typed as {@link RunMachine}, once tsc has checked
 * that its inferred type is exactly `RunMachine`: a change to the machine's actions, guards,
 * states, events or context that this file does not follow fails to compile here.
 */
export function asRunMachine<M>(
  machine: M &
    (SameType<M, RunMachine> extends true
      ? unknown
      : 'The run machine no longer has the type RunMachine: update machines/run-machine-types.ts'),
): RunMachine {
  return machine as unknown as RunMachine;
}
