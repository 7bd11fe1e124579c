import { type ActorRefFrom, assign, type DoneActorEvent, emit, enqueueActions, setup } from 'xstate';
import type { PolicyEffects } from '../policies/policy-effects.ts';
import { tightenCaps } from '../runtime/caps.ts';
import type { Message } from '../runtime/message.ts';
import { AwaitClarificationSchema, PlanResultSchema } from '../runtime/planner.ts';
import type { RunEvent } from '../runtime/run-events.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolErrorJSON } from '../tools/tool-error.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import {
  type ExecuteToolOutput,
  type PlanActorOutput,
  runActors,
  type ValidateBatchOutput,
} from './run-actors.ts';
import { type PendingCall, type RunContext, type RunInput, type ToolStats, turnId } from './run-context.ts';

/**
 * Events an app (through the run handle) sends to a run actor. Answers are checked by the handle
 * before they are sent; the machine's guards check them again and ignore a mismatch.
 */
export type RunMachineEvent =
  | { type: 'provide.clarification'; id: string; answer: string }
  | { type: 'provide.toolResults'; id: string; results: ToolResultJSON[] }
  | { type: 'confirm'; id: string; approved: boolean; by?: string; reason?: string }
  | { type: 'cancel'; reason?: string }
  // Completions of the per-call child actors spawned in `executing` (ids `tool.<toolCallId>`).
  | { type: `xstate.done.actor.tool.${string}`; output: ExecuteToolOutput; actorId: string }
  | { type: `xstate.error.actor.tool.${string}`; error: unknown; actorId: string };

type AnyDone = DoneActorEvent<unknown, string>;

const now = () => Date.now();

function fail(message: string, name = 'RunError'): ToolErrorJSON {
  return { name, message, recoverable: false };
}

function planOutput(event: unknown): PlanActorOutput {
  return (event as DoneActorEvent<PlanActorOutput>).output;
}

function parsedPlan(event: unknown) {
  const parsed = PlanResultSchema.safeParse(planOutput(event).result ?? {});
  return parsed.success ? parsed.data : undefined;
}

function deadlineAt(context: RunContext): number {
  return context.startedAt + context.caps.timeBudgetMs;
}

/** Updates counters, stats and the transcript with one finished batch, in call order. */
function foldResults(context: RunContext, results: ToolResultJSON[]): Partial<RunContext> {
  const messages: Message[] = [...context.messages];
  const toolStats: Record<string, ToolStats> = { ...context.toolStats };
  let consecutiveFailures = context.consecutiveFailures;
  for (const result of results) {
    messages.push({
      role: 'tool',
      toolCallId: result.toolCallId,
      toolName: result.name,
      content: result.error ? { error: result.error, retryHint: result.retryHint } : (result.result ?? null),
    });
    const stats = { ...(toolStats[result.name] ?? { calls: 0, failures: 0, consecutiveFailures: 0 }) };
    stats.calls += 1;
    if (result.error) {
      stats.failures += 1;
      stats.consecutiveFailures += 1;
      consecutiveFailures += 1;
    } else {
      stats.consecutiveFailures = 0;
      consecutiveFailures = 0;
    }
    const hint = [...context.newHints].reverse().find((h) => h.toolCallId === result.toolCallId);
    if (hint) stats.lastHint = hint;
    toolStats[result.name] = stats;
  }
  return { messages, toolStats, consecutiveFailures, lastResults: results, pending: [], results: [] };
}

/** Applies merged policy effects to the context (SPEC §5: caps only tighten, never above ceilings). */
function applyEffects(context: RunContext, effects: PolicyEffects): Partial<RunContext> {
  const caps = tightenCaps(context.caps, effects.caps);
  return {
    caps,
    disabledTools: effects.disabledTools
      ? { ...effects.disabledTools, ...appDisabled(context) }
      : context.disabledTools,
    restrictTo: effects.restrictTo ?? context.restrictTo,
    labels: effects.labels ? { ...context.labels, ...effects.labels } : context.labels,
    policyState: effects.policyState === undefined ? context.policyState : effects.policyState,
    effects: {
      fail: effects.fail,
      finalize: effects.finalize,
      awaitClarification: effects.awaitClarification,
      backoffUntil: effects.backoffMs && effects.backoffMs > 0 ? now() + effects.backoffMs : undefined,
    },
  };
}

/** Tools the app disabled stay disabled whatever a policy says (SPEC §5). */
function appDisabled(context: RunContext): Record<string, string> {
  return Object.fromEntries(Object.entries(context.disabledTools).filter(([, by]) => by === 'app'));
}

function decisionEvents(context: RunContext, effects: PolicyEffects): RunEvent[] {
  return effects.decisions.map((decision) => ({
    type: 'policy_decision',
    runId: context.runId,
    at: now(),
    turnId: turnId(context),
    decision,
  }));
}

function hintEvents(context: RunContext, hints: PolicyRetryHint[]): RunEvent[] {
  return hints.map((hint) => ({ type: 'retry_hint', runId: context.runId, at: hint.at, hint }));
}

/**
 * The run machine (SPEC §4): one XState v5 actor per agent run.
 *
 * ```
 * planning ─▶ validating ─▶ executing ─▶ resuming ─▶ planning … ─▶ completed
 *    │            │  └──────────▶ awaiting.confirmation ─┘   │
 *    ├──▶ awaiting.{clarification, externalTools, confirmation, backoff} ─▶ resuming / planning
 *    └──▶ finalizing (caps, time budget, policy) ─▶ completed | failed      any ─cancel─▶ canceled
 * ```
 *
 * The work is done by the named actors of {@link runActors}, supplied with `provide()`. Context is
 * JSON; deadlines are timestamps and every wait is an invoked actor computed from them, so a
 * restored snapshot resumes its waits (no `after` timers: statelyai/xstate#5331).
 */
export const runMachine = setup({
  types: {
    context: {} as RunContext,
    input: {} as RunInput,
    events: {} as RunMachineEvent,
    emitted: {} as RunEvent,
  },
  actors: runActors,
  guards: {
    planTimedOut: ({ event }) => planOutput(event).timedOut === true,
    planInvalid: ({ event }) => parsedPlan(event) === undefined,
    planHasToolCalls: ({ event }) => (parsedPlan(event)?.toolCalls?.length ?? 0) > 0,
    planAwaitsClarification: ({ event }) => parsedPlan(event)?.await?.clarification !== undefined,
    planAwaitsExternalTools: ({ event }) => parsedPlan(event)?.await?.externalTools !== undefined,
    planAwaitsConfirmation: ({ event }) => parsedPlan(event)?.await?.confirmation !== undefined,
    planHasFinalResponse: ({ event }) => parsedPlan(event)?.finalResponse !== undefined,
    batchExceedsToolCap: ({ context }) =>
      context.toolCalls + context.pending.length > context.caps.maxToolCalls,
    timeBudgetSpent: ({ context }) => now() >= deadlineAt(context),
    policyFailed: ({ context }) => context.effects?.fail !== undefined,
    policyFinalized: ({ context }) => context.effects?.finalize !== undefined,
    policyAwaitsClarification: ({ context }) => context.effects?.awaitClarification !== undefined,
    policyBacksOff: ({ context }) => context.effects?.backoffUntil !== undefined,
    needsConfirmation: ({ context }) => context.pending.some((call) => call.status === 'confirm'),
    hasAdmittedCalls: ({ context }) => context.pending.some((call) => call.status === 'admitted'),
    batchComplete: ({ context }) => context.results.length > 0 && context.results.every((r) => r !== null),
    failureCapReached: ({ context }) =>
      context.consecutiveFailures >= context.caps.maxConsecutiveFailedToolCalls,
    toolCapReached: ({ context }) => context.toolCalls >= context.caps.maxToolCalls,
    isClarificationAnswer: ({ context, event }) =>
      event.type === 'provide.clarification' &&
      context.awaiting?.kind === 'clarification' &&
      context.awaiting.clarification.id === event.id,
    isExternalResults: ({ context, event }) =>
      event.type === 'provide.toolResults' &&
      context.awaiting?.kind === 'external_tools' &&
      context.awaiting.externalTools.id === event.id,
    isToolApproval: ({ context, event }) =>
      event.type === 'confirm' &&
      context.awaiting?.kind === 'confirmation' &&
      context.awaiting.confirmation.id === event.id &&
      context.awaiting.toolCallIds !== undefined,
    isPlannerConfirmation: ({ context, event }) =>
      event.type === 'confirm' &&
      context.awaiting?.kind === 'confirmation' &&
      context.awaiting.confirmation.id === event.id &&
      context.awaiting.toolCallIds === undefined,
  },
  actions: {
    startTurn: assign({ turn: ({ context }) => context.turn + 1 }),
    emitNotes: enqueueActions(({ context, event, enqueue }) => {
      for (const note of parsedPlan(event)?.notes ?? []) {
        enqueue.emit({
          type: 'planner_note',
          runId: context.runId,
          at: now(),
          turnId: turnId(context),
          note,
        });
      }
    }),
    /** The planner turn consumed what was handed to it. */
    clearTurnInputs: assign({ lastResults: [], answer: null, restrictTo: null }),
    recordToolCalls: assign(({ context, event }) => {
      const plan = parsedPlan(event)!;
      const calls = plan.toolCalls ?? [];
      const pending: PendingCall[] = calls.map((call, index) => ({
        toolCallId: call.toolCallId ?? `${turnId(context)}:c${index + 1}`,
        name: call.name,
        input: call.input,
        attempt: (context.toolStats[call.name]?.consecutiveFailures ?? 0) + 1,
        status: 'proposed',
      }));
      const message: Message = {
        role: 'assistant',
        content: plan.finalResponse?.text,
        toolCalls: pending.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.name,
          input: call.input,
        })),
      };
      return { pending, results: pending.map(() => null), messages: [...context.messages, message] };
    }),
    recordClarificationRequest: assign(({ context, event }) => {
      const clarification = AwaitClarificationSchema.parse(parsedPlan(event)!.await!.clarification);
      return {
        awaiting: { kind: 'clarification' as const, clarification },
        messages: [...context.messages, { role: 'assistant' as const, content: clarification.question }],
      };
    }),
    recordExternalToolsRequest: assign(({ context, event }) => {
      const externalTools = parsedPlan(event)!.await!.externalTools!;
      const pending: PendingCall[] = externalTools.calls.map((call) => ({
        ...call,
        attempt: (context.toolStats[call.name]?.consecutiveFailures ?? 0) + 1,
        status: 'admitted',
      }));
      return {
        awaiting: { kind: 'external_tools' as const, externalTools },
        pending,
        results: pending.map(() => null),
        messages: [
          ...context.messages,
          {
            role: 'assistant' as const,
            toolCalls: pending.map((call) => ({
              toolCallId: call.toolCallId,
              toolName: call.name,
              input: call.input,
            })),
          },
        ],
      };
    }),
    recordConfirmationRequest: assign(({ context, event }) => {
      const confirmation = parsedPlan(event)!.await!.confirmation!;
      return {
        awaiting: { kind: 'confirmation' as const, confirmation },
        messages: [...context.messages, { role: 'assistant' as const, content: confirmation.prompt }],
      };
    }),
    recordFinalResponse: assign(({ context, event }) => {
      const finalResponse = parsedPlan(event)!.finalResponse!;
      return {
        finalResponse,
        messages: [...context.messages, { role: 'assistant' as const, content: finalResponse.text }],
      };
    }),
    failInvalidPlan: assign({
      error: ({ event }) => {
        const parsed = PlanResultSchema.safeParse(planOutput(event).result ?? {});
        return fail(
          `Planner returned an invalid PlanResult: ${parsed.error?.message ?? 'unknown'}`,
          'PlannerError',
        );
      },
    }),
    failEmptyPlan: assign({
      error: () => fail('Planner returned no tool calls, no await and no final response', 'PlannerError'),
    }),
    failNoFinalResponse: assign({
      error: ({ context }) =>
        fail(
          `Planner gave no final response while finalizing (reason: ${context.finalize?.reason ?? 'unknown'})`,
          'PlannerError',
        ),
    }),
    failFinalizeTimedOut: assign({
      error: () =>
        fail('The time budget ran out and the planner gave no final response in time', 'TimeBudgetError'),
    }),
    recordPlannerError: assign({
      error: ({ event }) => {
        const err = (event as { error?: unknown }).error;
        const name = err instanceof Error ? err.name : 'PlannerError';
        const message = err instanceof Error ? err.message : String(err);
        return { name, message: `Planner failed: ${message}`, recoverable: false };
      },
    }),
    recordActorError: assign({
      error: ({ event }) => {
        const err = (event as { error?: unknown }).error;
        return fail(`Run step failed: ${err instanceof Error ? err.message : String(err)}`, 'RunStepError');
      },
    }),
    finalizeWith: assign({
      finalize: (_, params: { reason: string }) => ({ reason: params.reason }),
    }),
    finalizeFromPolicy: assign({
      finalize: ({ context }) => ({ reason: context.effects?.finalize?.reason ?? 'policy' }),
    }),
    failFromPolicy: assign({
      error: ({ context }) =>
        fail(`A policy failed the run: ${context.effects?.fail?.reason ?? 'unknown'}`, 'PolicyError'),
    }),
    /** A refused batch is answered with results, so the transcript pairs every tool call. */
    refuseBatch: assign(({ context }) => {
      const results: ToolResultJSON[] = context.pending.map((call) => ({
        name: call.name,
        toolCallId: call.toolCallId,
        executed: false,
        error: {
          name: 'ToolError',
          message: `Batch refused: ${context.pending.length} more calls would pass maxToolCalls (${context.caps.maxToolCalls}; ${context.toolCalls} used)`,
          recoverable: false,
        },
      }));
      return { ...foldResults(context, results), finalize: { reason: 'tool_cap' } };
    }),
    applyValidation: enqueueActions(({ context, event, enqueue }) => {
      const output = (event as unknown as DoneActorEvent<ValidateBatchOutput>).output;
      const updated = { ...context, ...applyEffects(context, output.effects) };
      enqueue.assign({
        ...applyEffects(context, output.effects),
        pending: output.pending,
        results: output.results,
        toolCalls: context.toolCalls + output.pending.length,
        newHints: [...context.newHints, ...output.hints],
        hints: [...context.hints, ...output.hints],
      });
      for (const e of hintEvents(context, output.hints)) enqueue.emit(e);
      for (const e of decisionEvents(updated, output.effects)) enqueue.emit(e);
      output.results.forEach((result) => {
        if (result)
          enqueue.emit({
            type: 'tool_result',
            runId: context.runId,
            at: now(),
            turnId: turnId(context),
            result,
          });
      });
    }),
    requestToolConfirmation: assign(({ context }) => {
      const toolCallIds = context.pending
        .filter((call) => call.status === 'confirm')
        .map((call) => call.toolCallId);
      const names = context.pending.filter((call) => call.status === 'confirm').map((call) => call.name);
      return {
        awaiting: {
          kind: 'confirmation' as const,
          toolCallIds,
          confirmation: {
            id: `${turnId(context)}:confirm`,
            prompt: `Approve ${toolCallIds.length === 1 ? 'the call' : `${toolCallIds.length} calls`} to ${[...new Set(names)].join(', ')}?`,
            details: context.pending
              .filter((call) => call.status === 'confirm')
              .map((call) => ({ toolCallId: call.toolCallId, tool: call.name, input: call.preparedInput })),
          },
        },
      };
    }),
    applyToolApproval: assign(({ context, event }) => {
      if (event.type !== 'confirm') return {};
      const ids = new Set(context.awaiting?.kind === 'confirmation' ? context.awaiting.toolCallIds : []);
      const pending = context.pending.map((call) =>
        ids.has(call.toolCallId) && call.status === 'confirm'
          ? { ...call, status: event.approved ? ('admitted' as const) : ('rejected' as const) }
          : call,
      );
      const results = context.results.map((result, index) => {
        const call = context.pending[index]!;
        if (event.approved || !ids.has(call.toolCallId)) return result;
        return {
          name: call.name,
          toolCallId: call.toolCallId,
          executed: false,
          error: {
            name: 'ToolConfirmationDenied',
            message: `The call to ${call.name} was not approved${event.by ? ` by ${event.by}` : ''}${event.reason ? `: ${event.reason}` : ''}`,
            recoverable: true,
          },
        } satisfies ToolResultJSON;
      });
      return { pending, results, awaiting: null };
    }),
    emitDenials: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'confirm' || event.approved) return;
      context.results.forEach((result, index) => {
        if (
          result &&
          context.pending[index]?.status === 'rejected' &&
          result.error?.name === 'ToolConfirmationDenied'
        ) {
          enqueue.emit({
            type: 'tool_result',
            runId: context.runId,
            at: now(),
            turnId: turnId(context),
            result,
          });
        }
      });
    }),
    spawnToolCalls: enqueueActions(({ context, enqueue }) => {
      context.pending.forEach((call, index) => {
        if (call.status !== 'admitted' || context.results[index] !== null) return;
        enqueue.emit({
          type: 'tool_call_scheduled',
          runId: context.runId,
          at: now(),
          turnId: turnId(context),
          toolCallId: call.toolCallId,
          tool: call.name,
          attempt: call.attempt,
        });
        enqueue.spawnChild('executeTool', {
          id: `tool.${call.toolCallId}`,
          input: {
            call,
            index,
            labels: context.labels,
            meta: {
              runId: context.runId,
              sessionId: context.sessionId,
              turnId: turnId(context),
              toolCallId: call.toolCallId,
              agentId: context.agent.id,
              attempt: call.attempt,
            },
          },
        });
      });
    }),
    recordToolResult: enqueueActions(({ context, event, enqueue }) => {
      const output = (event as unknown as AnyDone).output as ExecuteToolOutput;
      const results = [...context.results];
      results[output.index] = output.result;
      const hints = output.hint ? [output.hint] : [];
      enqueue.assign({
        results,
        newHints: [...context.newHints, ...hints],
        hints: [...context.hints, ...hints],
      });
      enqueue.emit({
        type: 'tool_result',
        runId: context.runId,
        at: now(),
        turnId: turnId(context),
        result: output.result,
      });
      for (const e of hintEvents(context, hints)) enqueue.emit(e);
    }),
    recordToolCrash: assign(({ context, event }) => {
      // executeTool never rejects by contract; a rejection is a bug in a wrapper, kept as a result.
      const id = (event as { type: string }).type.replace('xstate.error.actor.tool.', '');
      const index = context.pending.findIndex((call) => call.toolCallId === id);
      if (index < 0) return {};
      const err = (event as { error?: unknown }).error;
      const results = [...context.results];
      results[index] = {
        name: context.pending[index]!.name,
        toolCallId: id,
        executed: true,
        error: {
          name: 'ToolError',
          message: err instanceof Error ? err.message : String(err),
          recoverable: false,
        },
      };
      return { results };
    }),
    recordExternalResults: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'provide.toolResults') return;
      const byId = new Map(event.results.map((result) => [result.toolCallId, result]));
      const results = context.pending.map((call) => byId.get(call.toolCallId) ?? null);
      enqueue.assign({ results, awaiting: null });
      for (const result of results) {
        if (result)
          enqueue.emit({
            type: 'tool_result',
            runId: context.runId,
            at: now(),
            turnId: turnId(context),
            result,
          });
      }
    }),
    /** Calls left unrun (the batch was abandoned by a policy) are answered so every call pairs a result. */
    foldBatch: assign(({ context }) =>
      foldResults(
        context,
        context.results.map(
          (result, index): ToolResultJSON =>
            result ?? {
              name: context.pending[index]!.name,
              toolCallId: context.pending[index]!.toolCallId,
              executed: false,
              error: {
                name: 'ToolError',
                message: 'Not executed: the run stopped this batch',
                recoverable: false,
              },
            },
        ),
      ),
    ),
    recordClarificationAnswer: assign(({ context, event }) => {
      if (event.type !== 'provide.clarification') return {};
      return {
        answer: { ...context.answer, clarification: { id: event.id, answer: event.answer } },
        messages: [...context.messages, { role: 'user' as const, content: event.answer }],
        awaiting: null,
      };
    }),
    recordPlannerConfirmation: assign(({ context, event }) => {
      if (event.type !== 'confirm') return {};
      const { id, approved, by, reason } = event;
      return {
        answer: { ...context.answer, confirmation: { id, approved, by, reason } },
        messages: [
          ...context.messages,
          {
            role: 'user' as const,
            content: approved ? `Approved${by ? ` by ${by}` : ''}.` : `Denied${reason ? `: ${reason}` : ''}.`,
          },
        ],
        awaiting: null,
      };
    }),
    applyReview: enqueueActions(({ context, event, enqueue }) => {
      const effects = (event as unknown as DoneActorEvent<PolicyEffects>).output;
      enqueue.assign({ ...applyEffects(context, effects), newHints: [] });
      for (const e of decisionEvents(context, effects)) enqueue.emit(e);
    }),
    enterPolicyClarification: assign(({ context }) => {
      const clarification = AwaitClarificationSchema.parse(context.effects!.awaitClarification);
      return {
        awaiting: { kind: 'clarification' as const, clarification },
        messages: [...context.messages, { role: 'assistant' as const, content: clarification.question }],
      };
    }),
    enterBackoff: assign({
      awaiting: ({ context }) => ({ kind: 'backoff' as const, until: context.effects!.backoffUntil! }),
    }),
    clearEffects: assign({ effects: null }),
    clearAwaiting: assign({ awaiting: null }),
    emitAwait: enqueueActions(({ context, enqueue }) => {
      const awaiting = context.awaiting;
      const base = { runId: context.runId, at: now() };
      if (awaiting?.kind === 'clarification') {
        enqueue.emit({ type: 'await_clarification', ...base, clarification: awaiting.clarification });
      } else if (awaiting?.kind === 'external_tools') {
        enqueue.emit({ type: 'await_external_tools', ...base, externalTools: awaiting.externalTools });
      } else if (awaiting?.kind === 'confirmation') {
        enqueue.emit({
          type: 'await_confirmation',
          ...base,
          confirmation: { ...awaiting.confirmation, toolCallIds: awaiting.toolCallIds },
        });
      }
    }),
    recordCancel: assign({
      cancelReason: ({ event }) => (event.type === 'cancel' ? (event.reason ?? null) : null),
    }),
    emitCompleted: emit(({ context }) => ({
      type: 'run_completed' as const,
      runId: context.runId,
      at: now(),
      finalResponse: context.finalResponse ?? { text: '' },
      finalizeReason: context.finalize?.reason,
    })),
    emitFailed: emit(({ context }) => ({
      type: 'run_failed' as const,
      runId: context.runId,
      at: now(),
      error: context.error ?? fail('Run failed'),
    })),
    emitCanceled: emit(({ context }) => ({
      type: 'run_canceled' as const,
      runId: context.runId,
      at: now(),
      reason: context.cancelReason ?? undefined,
    })),
  },
}).createMachine({
  id: 'run',
  context: ({ input }) => ({
    runId: input.runId,
    agent: { id: input.agent.id, name: input.agent.name ?? input.agent.id },
    sessionId: input.sessionId,
    labels: input.labels ?? {},
    startedAt: input.startedAt ?? now(),
    messages: input.messages,
    turn: 0,
    ceilings: input.caps,
    caps: input.caps,
    toolCalls: 0,
    consecutiveFailures: 0,
    toolStats: {},
    disabledTools: input.disabledTools ?? {},
    restrictTo: null,
    pending: [],
    results: [],
    lastResults: [],
    newHints: [],
    hints: [],
    awaiting: null,
    answer: null,
    finalize: null,
    effects: null,
    finalResponse: null,
    error: null,
    cancelReason: null,
    policyState: null,
    traceContext: input.traceContext ?? null,
  }),
  initial: 'planning',
  on: {
    cancel: { target: '.canceled', actions: 'recordCancel' },
  },
  states: {
    planning: {
      entry: 'startTurn',
      invoke: {
        src: 'plan',
        input: ({ context }) => ({ kind: context.turn === 1 ? 'start' : 'resume', context }),
        onDone: [
          {
            guard: 'planTimedOut',
            target: 'finalizing',
            actions: { type: 'finalizeWith', params: { reason: 'time_budget' } },
          },
          { guard: 'planInvalid', target: 'failed', actions: 'failInvalidPlan' },
          {
            guard: 'planHasToolCalls',
            target: 'validating',
            actions: ['emitNotes', 'clearTurnInputs', 'recordToolCalls'],
          },
          {
            guard: 'planAwaitsClarification',
            target: 'awaiting.clarification',
            actions: ['emitNotes', 'clearTurnInputs', 'recordClarificationRequest'],
          },
          {
            guard: 'planAwaitsExternalTools',
            target: 'awaiting.externalTools',
            actions: ['emitNotes', 'clearTurnInputs', 'recordExternalToolsRequest'],
          },
          {
            guard: 'planAwaitsConfirmation',
            target: 'awaiting.confirmation',
            actions: ['emitNotes', 'clearTurnInputs', 'recordConfirmationRequest'],
          },
          {
            guard: 'planHasFinalResponse',
            target: 'completed',
            actions: ['emitNotes', 'recordFinalResponse'],
          },
          { target: 'failed', actions: 'failEmptyPlan' },
        ],
        onError: { target: 'failed', actions: 'recordPlannerError' },
      },
    },
    validating: {
      always: { guard: 'batchExceedsToolCap', target: 'finalizing', actions: 'refuseBatch' },
      invoke: {
        src: 'validateBatch',
        input: ({ context }) => ({ context }),
        onDone: { target: 'admitting', actions: 'applyValidation' },
        onError: { target: 'failed', actions: 'recordActorError' },
      },
    },
    /** Routes a validated batch; transient (only `always` transitions). */
    admitting: {
      always: [
        { guard: 'policyFailed', target: 'failed', actions: 'failFromPolicy' },
        { guard: 'policyFinalized', target: 'finalizing', actions: ['foldBatch', 'finalizeFromPolicy'] },
        { guard: 'needsConfirmation', target: 'awaiting.confirmation', actions: 'requestToolConfirmation' },
        { guard: 'hasAdmittedCalls', target: 'executing' },
        { target: 'resuming' },
      ],
    },
    executing: {
      entry: 'spawnToolCalls',
      always: { guard: 'batchComplete', target: 'resuming' },
      on: {
        'xstate.done.actor.tool.*': { actions: 'recordToolResult' },
        'xstate.error.actor.tool.*': { actions: 'recordToolCrash' },
      },
    },
    awaiting: {
      entry: 'clearEffects',
      // Every transition into `awaiting` names its substate; XState requires an initial one.
      initial: 'clarification',
      states: {
        clarification: {
          entry: 'emitAwait',
          on: {
            'provide.clarification': {
              guard: 'isClarificationAnswer',
              target: '#run.resuming',
              actions: 'recordClarificationAnswer',
            },
          },
        },
        externalTools: {
          entry: 'emitAwait',
          on: {
            'provide.toolResults': {
              guard: 'isExternalResults',
              target: '#run.resuming',
              actions: 'recordExternalResults',
            },
          },
        },
        confirmation: {
          entry: 'emitAwait',
          on: {
            confirm: [
              {
                guard: 'isToolApproval',
                target: '#run.awaiting.approved',
                actions: ['applyToolApproval', 'emitDenials'],
              },
              {
                guard: 'isPlannerConfirmation',
                target: '#run.resuming',
                actions: 'recordPlannerConfirmation',
              },
            ],
          },
        },
        /** Transient: after approval or denial, run what is admitted. */
        approved: {
          always: [{ guard: 'hasAdmittedCalls', target: '#run.executing' }, { target: '#run.resuming' }],
        },
        backoff: {
          invoke: {
            src: 'sleepUntil',
            input: ({ context }) => ({
              until: context.awaiting?.kind === 'backoff' ? context.awaiting.until : now(),
            }),
            onDone: { target: '#run.planning', actions: 'clearAwaiting' },
          },
        },
      },
    },
    resuming: {
      entry: 'foldBatch',
      invoke: {
        src: 'reviewResults',
        input: ({ context }) => ({ context }),
        onDone: { target: 'routing', actions: 'applyReview' },
        onError: { target: 'failed', actions: 'recordActorError' },
      },
    },
    /** Decides where a resumed run goes; transient. Order is precedence (SPEC §5). */
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
          guard: 'policyAwaitsClarification',
          target: 'awaiting.clarification',
          actions: 'enterPolicyClarification',
        },
        { guard: 'policyBacksOff', target: 'awaiting.backoff', actions: 'enterBackoff' },
        { target: 'planning', actions: 'clearEffects' },
      ],
    },
    finalizing: {
      entry: 'clearEffects',
      invoke: {
        src: 'plan',
        input: ({ context }) => ({ kind: 'finalize', context }),
        onDone: [
          { guard: 'planTimedOut', target: 'failed', actions: 'failFinalizeTimedOut' },
          {
            guard: 'planHasFinalResponse',
            target: 'completed',
            actions: ['emitNotes', 'recordFinalResponse'],
          },
          { target: 'failed', actions: 'failNoFinalResponse' },
        ],
        onError: { target: 'failed', actions: 'recordPlannerError' },
      },
    },
    completed: { type: 'final', entry: 'emitCompleted' },
    failed: { type: 'final', entry: 'emitFailed' },
    canceled: { type: 'final', entry: 'emitCanceled' },
  },
});

export type RunMachine = typeof runMachine;
export type RunActorRef = ActorRefFrom<RunMachine>;
