import {
  type ActorRefFrom,
  assign,
  emit,
  enqueueActions,
  type ParameterizedObject,
  type ProvidedActor,
  sendTo,
  setup,
} from 'xstate';
import type { PolicyEffects } from '../run/policy-effects.ts';
import type { RunEvent } from '../run/run-events.ts';
import {
  elicitationAnswerRequest,
  endsElicitingCall,
  enterElicitationUpdate,
  isElicitationAnswer,
  isOpenCallElicitation,
  leaveElicitationUpdate,
  refusedElicitationRequest,
} from './elicitation-outcomes.ts';
import {
  CANCEL_GRACE_MS,
  callReturned,
  callsEnded,
  callsInDoubt,
  canceledCallOutcome,
  canceledCallsOutcome,
  enterInDoubtUpdate,
  inDoubtCallsToReview,
  inDoubtResolutionOutcome,
  inDoubtReviewOutcome,
  isInDoubtResolution,
} from './in-doubt-outcomes.ts';
import { doneOutput, parsedPlan, planOf, planOutput, planParse } from './plan-output.ts';
import { plannerTurnEvent } from './planner-turn.ts';
import { revokeApprovalOutcome } from './remembered-approvals.ts';
import {
  awaitsApproval,
  awaitsExternalCalls,
  callsToStart,
  enterPolicyClarificationUpdate,
  foldBatchUpdate,
  recordActorErrorUpdate,
  recordClarificationAnswerUpdate,
  recordClarificationRequestUpdate,
  recordConfirmationRequestUpdate,
  recordExternalToolsRequestUpdate,
  recordFinalResponseUpdate,
  recordPlannerConfirmationUpdate,
  recordPlannerErrorUpdate,
  recordToolCallsUpdate,
  requestExternalCallsUpdate,
  requestToolConfirmationUpdate,
  reviewedBatch,
  startTurnUpdate,
} from './run-actions.ts';
import { NO_CALLS, type RunContext, type RunInput, toolCallMeta } from './run-context.ts';
import { asRunMachine, type RunMachine, type RunMachineEvent } from './run-machine-types.ts';
import {
  awaitOutcome,
  externalResultsOutcome,
  notesOutcome,
  type RunOutcome,
  refuseBatchOutcome,
  refuseLargeBatchOutcome,
  scheduledOutcome,
  toolApprovalOutcome,
  toolCrashOutcome,
  toolResultOutcome,
  withUsage,
} from './run-outcomes.ts';
import type { ExecuteToolInput, PlanActorInput, ValidateBatchOutput } from './run-ports.ts';
import { runSteps, STEPS_ACTOR_ID, type StepRequest } from './run-steps.ts';
import {
  deadlineAt,
  firstOpenResult,
  now,
  reviewUpdate,
  runError,
  validationUpdate,
  withFlow,
} from './run-updates.ts';

export type { RunMachine, RunMachineEvent } from './run-machine-types.ts';

const machine = setup({
  types: {
    context: {} as RunContext,
    input: {} as RunInput,
    events: {} as RunMachineEvent,
    emitted: {} as RunEvent,
  },
  actors: { runSteps: runSteps() },
  guards: {
    /** Whether the host has batch policies to consult (`validating`); the runtime provides it (default: consult). */
    consultsPolicies: () => true,
    /**
     * Whether the batch just folded (or an answer) needs the policies' review (`resuming`); the
     * runtime provides it from the hooks its policies have (default: review).
     */
    reviewsResults: () => true,
    planTimedOut: ({ event }) => planOutput(event).timedOut === true,
    /** A `wrapPlan` hook declined the turn (`PlanResult.declined`: costBudget's `budget_exhausted`). */
    planDeclined: ({ event }) => parsedPlan(event)?.declined !== undefined,
    planInvalid: ({ event }) => parsedPlan(event) === undefined,
    planHasToolCalls: ({ event }) => (parsedPlan(event)?.toolCalls?.length ?? 0) > 0,
    planAwaitsClarification: ({ event }) => parsedPlan(event)?.await?.clarification !== undefined,
    planAwaitsExternalTools: ({ event }) => parsedPlan(event)?.await?.externalTools !== undefined,
    planAwaitsConfirmation: ({ event }) => parsedPlan(event)?.await?.confirmation !== undefined,
    planHasFinalResponse: ({ event }) => parsedPlan(event)?.finalResponse !== undefined,
    batchExceedsToolCap: ({ context }) =>
      context.toolCalls + context.batch.pending.length > context.caps.maxToolCalls,
    batchTooLarge: ({ context, event }) =>
      (parsedPlan(event)?.toolCalls?.length ?? 0) >
      (context.caps.maxCallsPerBatch ?? Number.POSITIVE_INFINITY),
    timeBudgetSpent: ({ context }) => now() >= deadlineAt(context),
    policyFailed: ({ context }) => context.flow.effects?.fail !== undefined,
    policyFinalized: ({ context }) => context.flow.effects?.finalize !== undefined,
    policyAwaitsClarification: ({ context }) => context.flow.effects?.awaitClarification !== undefined,
    policyBacksOff: ({ context }) => context.flow.effects?.backoffUntil !== undefined,
    needsConfirmation: ({ context }) => context.batch.pending.some((call) => call.status === 'confirm'),
    /** Some calls wait for approval and some run first (docs/policies.md §Mixed batches). */
    runsAheadOfApproval: ({ context }) =>
      context.batch.pending.some((call) => call.runAhead === true && call.status === 'admitted') &&
      context.batch.pending.some((call) => call.status === 'confirm'),
    awaitsApproval: ({ context }) => awaitsApproval(context.batch),
    hasAdmittedCalls: ({ context }) => context.batch.pending.some((call) => call.status === 'admitted'),
    batchComplete: ({ context }) =>
      context.batch.results.length > 0 &&
      firstOpenResult(context.batch.results) === context.batch.results.length,
    awaitsExternalCalls: ({ context }) => awaitsExternalCalls(context.batch),
    callsInDoubt: ({ context }) => callsInDoubt(context.batch),
    callReturned: ({ event }) => callReturned(event),
    callsEnded: ({ context }) => callsEnded(context.batch),
    /**
     * Calls in doubt no policy has decided on; the runtime provides it (false when no policy has
     * `onInDoubt`); by default (Temporal's workflow) the worker's policies are asked.
     */
    inDoubtToReview: ({ context }) => inDoubtCallsToReview(context).length > 0,
    isInDoubtResolution: ({ context, event }) => isInDoubtResolution(context, event),
    isOpenCallElicitation: ({ context, event }) => isOpenCallElicitation(context, event),
    isElicitationAnswer: ({ context, event }) => isElicitationAnswer(context, event),
    endsElicitingCall: ({ context, event }) => endsElicitingCall(context, event),
    failureCapReached: ({ context }) =>
      context.consecutiveFailures >= context.caps.maxConsecutiveFailedToolCalls,
    toolCapReached: ({ context }) => context.toolCalls >= context.caps.maxToolCalls,
    turnCapReached: ({ context }) => context.turn >= (context.caps.maxTurns ?? Number.POSITIVE_INFINITY),
    awaitCapReached: ({ context }) =>
      (context.flow.awaits ?? 0) >= (context.caps.maxAwaits ?? Number.POSITIVE_INFINITY),
    tokenCapReached: ({ context }) => {
      const { usage } = context.flow;
      const cap = context.caps.maxTotalTokens;
      // `usage` is absent in snapshots stored before it existed.
      return cap !== undefined && usage !== undefined && usage.inputTokens + usage.outputTokens >= cap;
    },
    isClarificationAnswer: ({ context, event }) =>
      event.type === 'provide.clarification' &&
      context.flow.awaiting?.kind === 'clarification' &&
      context.flow.awaiting.clarification.id === event.id,
    isExternalResults: ({ context, event }) =>
      event.type === 'provide.toolResults' &&
      context.flow.awaiting?.kind === 'external_tools' &&
      context.flow.awaiting.externalTools.id === event.id,
    isToolApproval: ({ context, event }) =>
      event.type === 'confirm' &&
      context.flow.awaiting?.kind === 'confirmation' &&
      context.flow.awaiting.confirmation.id === event.id &&
      context.flow.awaiting.toolCallIds !== undefined,
    isPlannerConfirmation: ({ context, event }) =>
      event.type === 'confirm' &&
      context.flow.awaiting?.kind === 'confirmation' &&
      context.flow.awaiting.confirmation.id === event.id &&
      context.flow.awaiting.toolCallIds === undefined,
  },
  actions: {
    /**
     * The next planner turn, on the way into `planning` (the first is the context's own), in the
     * transition's one assign with what that way clears: each assign clones XState's snapshot.
     */
    startTurn: assign(({ context }) => startTurnUpdate(context)),
    /** The turn's `planner_turn` event (planner-turn.ts), first on every way out of a planner turn. */
    emitPlannerTurn: emit(({ context, event }) => plannerTurnEvent(context, event)),
    emitNotes: enqueueActions(({ context, event, enqueue }) => apply(enqueue, notesOutcome(context, event))),
    /**
     * The run names each call `<turnId>:c<n>` (docs/tool-boundary.md §Vocabulary: unique across runs, stable across a crash,
     * the idempotency key). A planner's own id (a provider's `call_0`, reused in every turn and
     * run) is kept as `providerToolCallId` for the transcript, so a model sees its ids paired.
     */
    // Every `plan.done` transition records the turn's usage in its one assign (withUsage).
    recordToolCalls: assign(({ context, event }) => withUsage(context, event, recordToolCallsUpdate)),
    recordClarificationRequest: assign(({ context, event }) =>
      withUsage(context, event, recordClarificationRequestUpdate),
    ),
    recordExternalToolsRequest: assign(({ context, event }) =>
      withUsage(context, event, recordExternalToolsRequestUpdate),
    ),
    recordConfirmationRequest: assign(({ context, event }) =>
      withUsage(context, event, recordConfirmationRequestUpdate),
    ),
    recordFinalResponse: assign(({ context, event }) => withUsage(context, event, recordFinalResponseUpdate)),
    failInvalidPlan: assign(({ context, event }) =>
      withUsage(context, event, (used) =>
        withFlow(used, {
          error: runError(
            `Planner returned an invalid PlanResult: ${planParse(event).error}`,
            'PlannerError',
          ),
        }),
      ),
    ),
    failEmptyPlan: assign(({ context, event }) =>
      withUsage(context, event, (used) =>
        withFlow(used, {
          error: runError('Planner returned no tool calls, no await and no final response', 'PlannerError'),
        }),
      ),
    ),
    failNoFinalResponse: assign(({ context, event }) =>
      withUsage(context, event, (used) =>
        withFlow(used, {
          error: runError(
            `Planner gave no final response while finalizing (reason: ${used.flow.finalize?.reason ?? 'unknown'})`,
            'PlannerError',
          ),
        }),
      ),
    ),
    failFinalizeTimedOut: assign(({ context, event }) =>
      withUsage(context, event, (used) =>
        withFlow(used, {
          error: runError(
            'The time budget ran out and the planner gave no final response in time',
            'TimeBudgetError',
          ),
        }),
      ),
    ),
    recordPlannerError: assign(({ context, event }) => recordPlannerErrorUpdate(context, event)),
    recordActorError: assign(({ context, event }) => recordActorErrorUpdate(context, event)),
    /**
     * From `routing`. Not given the turn's usage: `routing` can follow a `plan.done` in the same
     * macrostep (a batch refused whole), whose usage its own transition recorded.
     */
    finalizeWith: assign(({ context }, params: { reason: string }) => ({
      batch: reviewedBatch(context.batch),
      flow: withFlow(context, { finalize: { reason: params.reason, at: now() } }).flow,
    })),
    /** `planning`'s turn ran out of the time budget: the run finalizes (`time_budget`). */
    finalizeTimedOut: assign(({ context, event }) =>
      withUsage(context, event, (used) => withFlow(used, { finalize: { reason: 'time_budget', at: now() } })),
    ),
    /** `planning`'s turn was declined (`PlanResult.declined`): the run finalizes with its reason. */
    finalizeDeclined: assign(({ context, event }) =>
      withUsage(context, event, (used) => {
        const { reason, note } = planOf(event).declined!;
        return withFlow(used, { finalize: { reason, ...(note === undefined ? {} : { note }), at: now() } });
      }),
    ),
    finalizeFromPolicy: assign(({ context }) =>
      withFlow(context, {
        finalize: { reason: 'policy', ...context.flow.effects?.finalize, at: now() },
      }),
    ),
    failFromPolicy: assign(({ context }) =>
      withFlow(context, {
        error: runError(
          `A policy failed the run: ${context.flow.effects?.fail?.reason ?? 'unknown'}`,
          'PolicyError',
        ),
      }),
    ),
    /** A refused batch is answered with results, so the transcript pairs every tool call. */
    refuseBatch: enqueueActions(({ context, enqueue }) => apply(enqueue, refuseBatchOutcome(context))),
    refuseLargeBatch: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, refuseLargeBatchOutcome(context, event)),
    ),
    applyValidation: enqueueActions(({ context, event, enqueue }) => {
      const { update, events } = validationUpdate(context, doneOutput<ValidateBatchOutput>(event));
      enqueue.assign(update);
      for (const e of events) enqueue.emit(e);
    }),
    /** Placeholder: the runtime provides it with {@link validateCallsAction}. */
    validateCalls: enqueueActions(() => {
      throw new Error(
        'The run machine\'s "validateCalls" action was not provided; use machine.provide({ actions }) or consult policies',
      );
    }),
    requestToolConfirmation: assign(({ context }) => requestToolConfirmationUpdate(context)),
    /** Approval admits the waiting calls; a denial answers each with a result the planner sees. */
    applyToolApproval: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, toolApprovalOutcome(context, event)),
    ),
    /** `runtime.revokeApproval`: a remembered approval forgotten (its calls ask again), in any state. */
    revokeApproval: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, revokeApprovalOutcome(context, event)),
    ),
    /** Asks `steps` to run the admitted calls without a result, announcing each (`tool_call_scheduled`). */
    startToolCalls: enqueueActions(({ context, enqueue }) => {
      // Back from a call's question (awaiting.elicitation): the calls run already.
      if (context.flow.callsRunning) {
        const { callsRunning: _, ...flow } = context.flow;
        enqueue.assign({ flow });
        return;
      }
      const calls = callsToRun(context);
      if (calls.length === 0) return;
      apply(enqueue, scheduledOutcome(context, calls));
      enqueue.sendTo(STEPS_ACTOR_ID, { type: 'tools', calls } satisfies StepRequest);
    }),
    /**
     * After a restore: the calls that had no result are asked for again, under the same
     * `toolCallId`s (announced before), marked `restored`: a tool that may not run twice is
     * reconciled or comes back in doubt (tools/call-in-doubt.ts), never run again blindly.
     */
    resumeToolCalls: enqueueActions(({ context, enqueue }) => {
      const restored = {
        cause: 'restored' as const,
        ...(context.flow.callsStartedAt === undefined ? {} : { startedAt: context.flow.callsStartedAt }),
      };
      const calls = callsToRun(context).map((call) =>
        call.call.restoreAs === 'rerun' ? call : { ...call, restored },
      );
      if (calls.length > 0) enqueue.sendTo(STEPS_ACTOR_ID, { type: 'tools', calls } satisfies StepRequest);
    }),
    /** A running call asks a person (elicitation-outcomes.ts): the run awaits the answer. */
    requestElicitation: assign(({ context, event }) => enterElicitationUpdate(context, event)),
    /** The answer goes to the asking call, not to the planner. */
    answerElicitation: enqueueActions(({ context, event, enqueue }) => {
      enqueue.sendTo(STEPS_ACTOR_ID, elicitationAnswerRequest(context, event));
      enqueue.assign(leaveElicitationUpdate(context));
    }),
    leaveElicitation: assign(({ context }) => leaveElicitationUpdate(context)),
    refuseElicitation: sendTo(STEPS_ACTOR_ID, ({ event }) => refusedElicitationRequest(event)),
    /** `settling`'s answer: each call in doubt as the policies decided (in-doubt-outcomes.ts). */
    applyInDoubtReview: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, inDoubtReviewOutcome(context, doneOutput<PolicyEffects>(event))),
    ),
    /** Every call is settled, some in doubt: the run waits for them to be resolved. */
    requestInDoubt: assign(({ context }) => enterInDoubtUpdate(context)),
    applyInDoubtResolution: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, inDoubtResolutionOutcome(context, event)),
    ),
    /** A cancel while calls run: each unfinished one is recorded in doubt, never as nothing. */
    recordCallsInDoubt: enqueueActions(({ context, enqueue }) =>
      apply(enqueue, canceledCallsOutcome(context)),
    ),
    /** A call that ended with an error after the cancel (in-doubt-outcomes.ts). */
    recordCanceledCall: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, canceledCallOutcome(context, event)),
    ),
    /** `canceling`: the running calls are told to stop, and the run waits for them a bounded while. */
    abortToolCalls: sendTo(STEPS_ACTOR_ID, { type: 'abortTools' } satisfies StepRequest),
    requestCancelGrace: sendTo(
      STEPS_ACTOR_ID,
      (): StepRequest => ({ type: 'sleep', input: { until: now() + CANCEL_GRACE_MS } }),
    ),
    requestPlan: sendTo(
      STEPS_ACTOR_ID,
      ({ context }): StepRequest => ({
        type: 'plan',
        input: planRequest(context, context.turn === 1 ? 'start' : 'resume'),
      }),
    ),
    requestFinalPlan: sendTo(
      STEPS_ACTOR_ID,
      ({ context }): StepRequest => ({ type: 'plan', input: planRequest(context, 'finalize') }),
    ),
    requestValidation: sendTo(
      STEPS_ACTOR_ID,
      ({ context }): StepRequest => ({ type: 'validate', input: { context } }),
    ),
    requestReview: sendTo(
      STEPS_ACTOR_ID,
      ({ context }): StepRequest => ({ type: 'review', input: { context } }),
    ),
    requestSleep: sendTo(
      STEPS_ACTOR_ID,
      ({ context }): StepRequest => ({
        type: 'sleep',
        // A backoff past the time budget ends with it: the next turn then finalizes (time_budget).
        input: {
          until: Math.min(
            context.flow.awaiting?.kind === 'backoff' ? context.flow.awaiting.until : now(),
            deadlineAt(context),
          ),
        },
      }),
    ),
    recordToolResult: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, toolResultOutcome(context, event)),
    ),
    /** `executeTool` never rejects by contract; a rejection (a bug in a wrapper) is kept as a result. */
    recordToolCrash: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, toolCrashOutcome(context, event)),
    ),
    recordExternalResults: enqueueActions(({ context, event, enqueue }) =>
      apply(enqueue, externalResultsOutcome(context, event)),
    ),
    /**
     * Folds the batch in flight into the transcript and counters. Calls left unrun (a policy
     * abandoned the batch) are answered, so every call pairs a result. Resuming from an answer
     * folds nothing: the last batch's results stay for the next `planResume`.
     */
    foldBatch: assign(({ context }) => foldBatchUpdate(context)),
    recordClarificationAnswer: assign(({ context, event }) =>
      recordClarificationAnswerUpdate(context, event),
    ),
    recordPlannerConfirmation: assign(({ context, event }) =>
      recordPlannerConfirmationUpdate(context, event),
    ),
    applyReview: enqueueActions(({ context, event, enqueue }) => {
      const { update, events } = reviewUpdate(context, doneOutput<PolicyEffects>(event));
      enqueue.assign(update);
      for (const e of events) enqueue.emit(e);
    }),
    enterPolicyClarification: assign(({ context }) => enterPolicyClarificationUpdate(context)),
    requestExternalCalls: assign(({ context }) => requestExternalCallsUpdate(context)),
    enterBackoff: assign(({ context }) => ({
      batch: reviewedBatch(context.batch),
      flow: withFlow(context, { awaiting: { kind: 'backoff', until: context.flow.effects!.backoffUntil! } })
        .flow,
    })),
    /** Only when there are effects: an assign that changes nothing still clones the snapshot. */
    clearEffects: enqueueActions(({ context, enqueue }) => {
      if (context.flow.effects !== null) enqueue.assign(withFlow(context, { effects: null }));
    }),
    emitAwait: enqueueActions(({ context, enqueue }) => apply(enqueue, awaitOutcome(context))),
    /**
     * Starts the clock of a wait for an answer: that time is not the run's budget (`deadlineAt`).
     * Counts the wait against `caps.maxAwaits`.
     */
    startAwaitClock: assign(({ context }) =>
      withFlow(context, { awaitingSince: now(), awaits: (context.flow.awaits ?? 0) + 1 }),
    ),
    /** Adds the wait that ends to `flow.awaitedMs`. */
    stopAwaitClock: assign(({ context }) => {
      const since = context.flow.awaitingSince;
      if (typeof since !== 'number') return {};
      const awaitedMs = (context.flow.awaitedMs ?? 0) + Math.max(0, now() - since);
      return withFlow(context, { awaitedMs, awaitingSince: null });
    }),
    recordTraceContext: assign(({ context, event }) => ({
      traceContext: event.type === 'trace.context' ? event.traceContext : context.traceContext,
    })),
    recordCancel: assign(({ context, event }) =>
      withFlow(context, { cancelReason: event.type === 'cancel' ? (event.reason ?? null) : null }),
    ),
    emitCompleted: emit(({ context }) => ({
      type: 'run_completed' as const,
      runId: context.runId,
      at: now(),
      finalResponse: context.flow.finalResponse ?? { text: '' },
      finalizeReason: context.flow.finalize?.reason,
    })),
    emitFailed: emit(({ context }) => ({
      type: 'run_failed' as const,
      runId: context.runId,
      at: now(),
      error: context.flow.error ?? runError('Run failed'),
    })),
    emitCanceled: emit(({ context }) => ({
      type: 'run_canceled' as const,
      runId: context.runId,
      at: now(),
      reason: context.flow.cancelReason ?? undefined,
    })),
  },
}).createMachine({
  id: 'run',
  // Nineteen keys at most: see RunContext.
  context: ({ input }) => ({
    runId: input.runId,
    agent: { id: input.agent.id, name: input.agent.name ?? input.agent.id },
    sessionId: input.sessionId,
    labels: input.labels ?? {},
    startedAt: input.startedAt ?? now(),
    // The app's messages are copied: the run freezes its transcript's messages (see the plan step).
    messages: structuredClone(input.messages),
    // The first turn; the next ones start on the transitions into `planning` (startTurn).
    turn: 1,
    ceilings: input.caps,
    caps: input.caps,
    toolCalls: 0,
    consecutiveFailures: 0,
    toolStats: {},
    disabledTools: input.disabledTools ?? {},
    restrictTo: null,
    hints: [],
    policyState: null,
    traceContext: input.traceContext ?? null,
    batch: {
      pending: NO_CALLS,
      results: NO_CALLS,
      lastResults: NO_CALLS,
      newResults: NO_CALLS,
      newHints: NO_CALLS,
    },
    flow: {
      awaiting: null,
      answer: null,
      finalize: null,
      effects: null,
      finalResponse: null,
      error: null,
      cancelReason: null,
      usage: { inputTokens: 0, outputTokens: 0 },
      awaitedMs: 0,
      awaitingSince: null,
      awaits: 0,
      ...(input.grants === undefined ? {} : { grants: [...input.grants] }),
      ...(input.approvals === undefined || input.approvals.length === 0
        ? {}
        : { approvals: structuredClone(input.approvals) }),
    },
  }),
  initial: 'planning',
  // The step's asynchronous work, for the whole run (run-steps.ts).
  invoke: { id: STEPS_ACTOR_ID, src: 'runSteps' },
  on: {
    cancel: { target: '.canceled', actions: 'recordCancel' },
    'trace.context': { actions: 'recordTraceContext' },
    // A call's question where the run cannot wait on it (its call ended first): `cancel`.
    'call.elicit': { actions: 'refuseElicitation' },
    'approval.revoke': { actions: 'revokeApproval' },
  },
  states: {
    planning: {
      entry: 'requestPlan',
      on: {
        'steps.restored': { actions: 'requestPlan' },
        'plan.done': [
          { guard: 'planTimedOut', target: 'finalizing', actions: ['emitPlannerTurn', 'finalizeTimedOut'] },
          { guard: 'planInvalid', target: 'failed', actions: ['emitPlannerTurn', 'failInvalidPlan'] },
          // Not taken (a budget it cannot fit): the run answers in a finalizing turn instead.
          { guard: 'planDeclined', target: 'finalizing', actions: ['emitPlannerTurn', 'finalizeDeclined'] },
          // Refused before its calls become the batch (maxCallsPerBatch): nothing to fold, the
          // hint reviewed by policies as any, then the run plans again.
          {
            guard: 'batchTooLarge',
            target: 'resuming',
            actions: ['emitPlannerTurn', 'emitNotes', 'refuseLargeBatch'],
          },
          {
            guard: 'planHasToolCalls',
            target: 'validating',
            actions: ['emitPlannerTurn', 'emitNotes', 'recordToolCalls'],
          },
          {
            guard: 'planAwaitsClarification',
            target: 'awaiting.clarification',
            actions: ['emitPlannerTurn', 'emitNotes', 'recordClarificationRequest'],
          },
          {
            guard: 'planAwaitsExternalTools',
            target: 'awaiting.externalTools',
            actions: ['emitPlannerTurn', 'emitNotes', 'recordExternalToolsRequest'],
          },
          {
            guard: 'planAwaitsConfirmation',
            target: 'awaiting.confirmation',
            actions: ['emitPlannerTurn', 'emitNotes', 'recordConfirmationRequest'],
          },
          {
            guard: 'planHasFinalResponse',
            target: 'completed',
            actions: ['emitPlannerTurn', 'emitNotes', 'recordFinalResponse'],
          },
          { target: 'failed', actions: ['emitPlannerTurn', 'failEmptyPlan'] },
        ],
        'plan.error': { target: 'failed', actions: ['emitPlannerTurn', 'recordPlannerError'] },
      },
    },
    /**
     * Checks the proposed batch (one within `maxCallsPerBatch`: a larger one was refused at
     * `plan.done`): the tool cap first (a batch that would pass it is refused whole and the run
     * finalizes), then `onToolBatch` policies and the tool boundary (`validateBatch`), or, with
     * no policies and a small batch, the boundary alone, synchronously (`validateCalls`).
     */
    validating: {
      initial: 'checking',
      states: {
        /** Transient. */
        checking: {
          always: [
            { guard: 'batchExceedsToolCap', target: '#run.finalizing', actions: 'refuseBatch' },
            { guard: 'consultsPolicies', target: 'policies' },
            { target: '#run.admitting', actions: 'validateCalls' },
          ],
        },
        policies: {
          entry: 'requestValidation',
          on: {
            'steps.restored': { actions: 'requestValidation' },
            'validate.done': { target: '#run.admitting', actions: 'applyValidation' },
            'validate.error': { target: '#run.failed', actions: 'recordActorError' },
          },
        },
      },
    },
    /** Routes a validated batch; transient (only `always` transitions). */
    admitting: {
      always: [
        { guard: 'policyFailed', target: 'failed', actions: 'failFromPolicy' },
        { guard: 'policyFinalized', target: 'finalizing', actions: ['foldBatch', 'finalizeFromPolicy'] },
        // Mixed batches: the calls that need no approval run first, then the run asks for the rest.
        { guard: 'runsAheadOfApproval', target: 'executing' },
        { guard: 'needsConfirmation', target: 'awaiting.confirmation', actions: 'requestToolConfirmation' },
        { guard: 'hasAdmittedCalls', target: 'executing' },
        { target: 'resuming' },
      ],
    },
    executing: {
      entry: 'startToolCalls',
      always: [
        // First: a call in doubt is never folded into the transcript as if it were a result.
        { guard: 'inDoubtToReview', target: 'settling' },
        { guard: 'callsInDoubt', target: 'awaiting.inDoubt', actions: 'requestInDoubt' },
        { guard: 'batchComplete', target: 'resuming' },
        // Calls of tools without `execute` are the app's: awaited once the others are done.
        { guard: 'awaitsExternalCalls', target: 'awaiting.externalTools', actions: 'requestExternalCalls' },
        // The calls that ran ahead of the batch's approval are done: the rest wait for it.
        { guard: 'awaitsApproval', target: 'awaiting.confirmation', actions: 'requestToolConfirmation' },
      ],
      on: {
        cancel: { target: 'canceling', actions: 'recordCancel' },
        'steps.restored': { actions: 'resumeToolCalls' },
        'tool.done': { actions: 'recordToolResult' },
        'tool.error': { actions: 'recordToolCrash' },
        'call.elicit': [
          { guard: 'isOpenCallElicitation', target: 'awaiting.elicitation', actions: 'requestElicitation' },
          { actions: 'refuseElicitation' },
        ],
      },
    },
    /**
     * A cancel while calls run (docs/durability.md §Effects): each is told to stop (its signal
     * aborts) and the run waits for them, up to `CANCEL_GRACE_MS`: a call that returns is recorded
     * with its result; one that ends with an error, or has not ended when the wait is over (or the
     * run is restored meanwhile, or canceled again), is recorded in doubt; one that never started,
     * as not run. Never as nothing.
     */
    canceling: {
      entry: ['abortToolCalls', 'requestCancelGrace'],
      always: { guard: 'callsEnded', target: 'canceled' },
      on: {
        'tool.done': [
          { guard: 'callReturned', actions: 'recordToolResult' },
          { actions: 'recordCanceledCall' },
        ],
        'tool.error': { actions: 'recordCanceledCall' },
        'call.elicit': { actions: 'refuseElicitation' },
        'sleep.done': { target: 'canceled', actions: 'recordCallsInDoubt' },
        'steps.restored': { target: 'canceled', actions: 'recordCallsInDoubt' },
        cancel: { target: 'canceled', actions: 'recordCallsInDoubt' },
      },
    },
    /**
     * Calls in doubt, before the run waits for a person (docs/durability.md §Effects): `onInDoubt`
     * policies decide for each whether a person is asked (`awaiting.inDoubt`), it runs again, or
     * the planner is told its outcome is unknown; or they finish or fail the run.
     */
    settling: {
      initial: 'policies',
      states: {
        policies: {
          entry: 'requestReview',
          on: {
            'steps.restored': { actions: 'requestReview' },
            'review.done': { target: 'routing', actions: 'applyInDoubtReview' },
            'review.error': { target: '#run.failed', actions: 'recordActorError' },
          },
        },
        /** Transient. Calls to run again run in `executing`; the ones left in doubt then wait there. */
        routing: {
          always: [
            { guard: 'policyFailed', target: '#run.failed', actions: 'failFromPolicy' },
            {
              guard: 'policyFinalized',
              target: '#run.finalizing',
              actions: ['foldBatch', 'finalizeFromPolicy'],
            },
            { target: '#run.executing' },
          ],
        },
      },
    },
    awaiting: {
      entry: 'clearEffects',
      // Every transition into `awaiting` names its substate; XState requires an initial one.
      initial: 'clarification',
      states: {
        clarification: {
          entry: ['emitAwait', 'startAwaitClock'],
          exit: 'stopAwaitClock',
          on: {
            'provide.clarification': {
              guard: 'isClarificationAnswer',
              target: '#run.resuming',
              actions: 'recordClarificationAnswer',
            },
          },
        },
        externalTools: {
          entry: ['emitAwait', 'startAwaitClock'],
          exit: 'stopAwaitClock',
          on: {
            'provide.toolResults': {
              guard: 'isExternalResults',
              target: '#run.resuming',
              actions: 'recordExternalResults',
            },
          },
        },
        confirmation: {
          entry: ['emitAwait', 'startAwaitClock'],
          exit: 'stopAwaitClock',
          on: {
            confirm: [
              { guard: 'isToolApproval', target: 'approved', actions: 'applyToolApproval' },
              {
                guard: 'isPlannerConfirmation',
                target: '#run.resuming',
                actions: 'recordPlannerConfirmation',
              },
            ],
          },
        },
        /**
         * Calls whose outcome is unknown after a restore (docs/durability.md §Effects): resolved
         * together; `not_done` ones run again in `executing`, the rest are their results.
         */
        inDoubt: {
          entry: ['emitAwait', 'startAwaitClock'],
          exit: 'stopAwaitClock',
          on: {
            'resolve.inDoubt': {
              guard: 'isInDoubtResolution',
              target: '#run.executing',
              actions: 'applyInDoubtResolution',
            },
          },
        },
        /**
         * A running call asks a person (MCP elicitation; elicitation-outcomes.ts): put as a
         * clarification or confirmation, the batch still running in `steps`. The answer, or the
         * call's end, takes the run back to `executing`, which starts nothing again.
         */
        elicitation: {
          entry: ['emitAwait', 'startAwaitClock'],
          exit: 'stopAwaitClock',
          on: {
            'provide.clarification': {
              guard: 'isElicitationAnswer',
              target: '#run.executing',
              actions: 'answerElicitation',
            },
            confirm: { guard: 'isElicitationAnswer', target: '#run.executing', actions: 'answerElicitation' },
            'tool.done': [
              {
                guard: 'endsElicitingCall',
                target: '#run.executing',
                actions: ['recordToolResult', 'leaveElicitation'],
              },
              { actions: 'recordToolResult' },
            ],
            'tool.error': [
              {
                guard: 'endsElicitingCall',
                target: '#run.executing',
                actions: ['recordToolCrash', 'leaveElicitation'],
              },
              { actions: 'recordToolCrash' },
            ],
            // The batch is running: its calls end as a cancel in `executing` ends them.
            cancel: { target: '#run.canceling', actions: 'recordCancel' },
            // The process died while it waited: the question went with it; the calls are asked
            // for again as after any restore (re-run or in doubt per their effects).
            'steps.restored': { target: '#run.executing', actions: ['leaveElicitation', 'resumeToolCalls'] },
          },
        },
        /** Transient: after approval or denial, run what is admitted. */
        approved: {
          always: [{ guard: 'hasAdmittedCalls', target: '#run.executing' }, { target: '#run.resuming' }],
        },
        backoff: {
          entry: 'requestSleep',
          on: {
            'steps.restored': { actions: 'requestSleep' },
            'sleep.done': { target: '#run.planning', actions: 'startTurn' },
          },
        },
      },
    },
    /** Folds the batch into the transcript, then has policies review it (when there are any). */
    resuming: {
      entry: 'foldBatch',
      initial: 'checking',
      states: {
        /** Transient. */
        checking: {
          always: [
            { guard: 'reviewsResults', target: 'policies' },
            // Unreviewed, the batch's newResults and newHints are cleared on the way out of routing.
            { target: '#run.routing' },
          ],
        },
        policies: {
          entry: 'requestReview',
          on: {
            'steps.restored': { actions: 'requestReview' },
            'review.done': { target: '#run.routing', actions: 'applyReview' },
            'review.error': { target: '#run.failed', actions: 'recordActorError' },
          },
        },
      },
    },
    /** Decides where a resumed run goes; transient. Order is precedence (docs/policies.md). */
    routing: {
      always: [
        { guard: 'policyFailed', target: 'failed', actions: 'failFromPolicy' },
        { guard: 'policyFinalized', target: 'finalizing', actions: 'finalizeFromPolicy' },
        {
          guard: 'failureCapReached',
          target: 'finalizing',
          actions: { type: 'finalizeWith', params: { reason: 'failure_cap' } },
        },
        {
          guard: 'timeBudgetSpent',
          target: 'finalizing',
          actions: { type: 'finalizeWith', params: { reason: 'time_budget' } },
        },
        {
          guard: 'toolCapReached',
          target: 'finalizing',
          actions: { type: 'finalizeWith', params: { reason: 'tool_cap' } },
        },
        {
          guard: 'tokenCapReached',
          target: 'finalizing',
          actions: { type: 'finalizeWith', params: { reason: 'token_cap' } },
        },
        {
          guard: 'turnCapReached',
          target: 'finalizing',
          actions: { type: 'finalizeWith', params: { reason: 'turn_cap' } },
        },
        {
          guard: 'awaitCapReached',
          target: 'finalizing',
          actions: { type: 'finalizeWith', params: { reason: 'await_cap' } },
        },
        {
          guard: 'policyAwaitsClarification',
          target: 'awaiting.clarification',
          actions: 'enterPolicyClarification',
        },
        { guard: 'policyBacksOff', target: 'awaiting.backoff', actions: 'enterBackoff' },
        { target: 'planning', actions: 'startTurn' },
      ],
    },
    finalizing: {
      entry: ['clearEffects', 'requestFinalPlan'],
      on: {
        'steps.restored': { actions: 'requestFinalPlan' },
        'plan.done': [
          { guard: 'planTimedOut', target: 'failed', actions: ['emitPlannerTurn', 'failFinalizeTimedOut'] },
          {
            guard: 'planHasFinalResponse',
            target: 'completed',
            actions: ['emitPlannerTurn', 'emitNotes', 'recordFinalResponse'],
          },
          { target: 'failed', actions: ['emitPlannerTurn', 'failNoFinalResponse'] },
        ],
        'plan.error': { target: 'failed', actions: ['emitPlannerTurn', 'recordPlannerError'] },
      },
    },
    completed: { type: 'final', entry: 'emitCompleted' },
    failed: { type: 'final', entry: 'emitFailed' },
    canceled: { type: 'final', entry: 'emitCanceled' },
  },
});

/**
 * The run machine (docs/architecture.md): one XState v5 actor per agent run.
 *
 * ```
 * planning ─▶ validating ─▶ admitting ─▶ executing ─▶ resuming ─▶ routing ─▶ planning … ─▶ completed
 *    │            │             │    (in doubt) └─▶ settling ─▶ awaiting.inDoubt ─▶ executing
 *    │            │             └──▶ awaiting.confirmation ─▶ awaiting.approved ─┘   │
 *    ├──▶ awaiting.{clarification, externalTools, confirmation} ─▶ resuming          ├──▶ awaiting.backoff ─▶ planning
 *    └──────────────────────────────────────────▶ finalizing ◀───────────────────────┘
 *                        (caps, time budget, policy) ─▶ completed | failed        any ─cancel─▶ canceled
 * ```
 *
 * While calls run, one may ask a person (`elicit()`): `executing ─▶ awaiting.elicitation ─▶
 * executing` on the answer or the asking call's end, the batch running on in `steps` throughout.
 *
 * `admitting`, `routing`, `settling.routing`, `awaiting.approved` and the `checking` substates are transient (only
 * `always` transitions). With no policies (guard `consultsPolicies` false) `validating` and
 * `resuming` request nothing and a step is planning → executing → planning: two requests to
 * `steps` and their two answers, no actor created.
 *
 * The work is done by the run's one `steps` actor (run-steps.ts, docs/architecture.md §Steps)
 * over the ports of run-ports.ts, supplied with `provide()`: each working state requests its work
 * on entry and again on `steps.restored`, and moves on the answer. Context is JSON; deadlines are
 * timestamps and every wait is a request computed from them, so a restored snapshot resumes its
 * waits (no `after` timers: statelyai/xstate#5331).
 */
export const runMachine: RunMachine = asRunMachine(machine);

/** Where an action's outcome goes: the part of `enqueueActions`' `enqueue` it uses. */
interface OutcomeSink {
  assign(update: Partial<RunContext>): void;
  emit(event: RunEvent): void;
}

/** Assigns an outcome's update, then emits its events in order (run-outcomes.ts). */
function apply(sink: OutcomeSink, outcome: RunOutcome): void {
  if (outcome.update) sink.assign(outcome.update);
  for (const event of outcome.events) sink.emit(event);
}

/** The `steps` requests for the admitted calls of the batch that have no result, in the planner's order. */
function callsToRun(context: RunContext): ExecuteToolInput[] {
  return callsToStart(context.batch).map(({ call, index }) => ({
    call,
    index,
    labels: context.labels,
    meta: toolCallMeta(context, call),
    deadlineAt: deadlineAt(context),
  }));
}

/** A planner turn's request: `kind` and the context it plans from. */
const planRequest = (context: RunContext, kind: PlanActorInput['kind']): PlanActorInput => ({
  kind,
  context,
});

/** A run's XState actor (`run.actor`). */
export type RunActorRef = ActorRefFrom<RunMachine>;

type ValidateCallsAction = NonNullable<
  NonNullable<Parameters<RunMachine['provide']>[0]['actions']>['validateCalls']
>;

/**
 * The `validateCalls` action: checks the batch with `validate` (no policies consulted) and
 * records the outcome as `validateBatch`'s output would be. The runtime provides it with its tool
 * catalog; the machine's own placeholder throws, as the placeholder actors do.
 */
export function validateCallsAction(
  validate: (context: RunContext) => ValidateBatchOutput,
): ValidateCallsAction {
  const action = enqueueActions<
    RunContext,
    RunMachineEvent,
    undefined,
    RunMachineEvent,
    ProvidedActor,
    ParameterizedObject,
    ParameterizedObject,
    never,
    RunEvent
  >(({ context, enqueue }) => {
    const { update, events } = validationUpdate(context, validate(context));
    enqueue.assign(update);
    for (const event of events) enqueue.emit(event);
  });
  // The same action the machine declares, built outside `setup()`, whose inferred actor and
  // action unions it cannot name.
  return action as unknown as ValidateCallsAction;
}
