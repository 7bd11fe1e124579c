/**
 * The run's step as a pure function (issue 38 item 1), beside the actor, as XState core exports
 * `transition(logic, snapshot, event) → [nextSnapshot, actions]` and `initialTransition(logic,
 * input)` (xstate 5.33, `transition.ts`): given a run's persisted snapshot and an event, the next
 * persisted snapshot and the effects the step asks for, executing none of them. No planner is
 * asked, no tool runs, nothing is written or emitted; the caller decides what to do with each
 * effect and answers with the event it would have got (`plan.done`, `tool.done`, …).
 *
 * | effect            | asked for when the run enters (or is restored in)     | answered with                   |
 * |-------------------|-------------------------------------------------------|---------------------------------|
 * | `plan`            | `planning`, `finalizing`                              | `plan.done` / `plan.error`      |
 * | `validate`        | `validating.policies`                                 | `validate.done` / `validate.error` |
 * | `execute_tools`   | `executing` (the admitted calls without a result)     | one `tool.done` / `tool.error` per call |
 * | `review`          | `resuming.policies`, `settling.policies`              | `review.done` / `review.error`  |
 * | `sleep`           | `awaiting.backoff`, `canceling` (the cancel's grace)  | `sleep.done`                    |
 * | `abort_tools`     | `canceling` (a cancel while calls run)                | the calls' `tool.done` / `tool.error` as they end |
 * | `await`           | `awaiting.clarification`, `.externalTools`, `.confirmation`, `.elicitation` | `provide.clarification`, `provide.toolResults`, `confirm` |
 * | `elicited`        | an answer to a running call's question (`awaiting.elicitation`) | (nothing: the call is handed the answer) |
 * | `emit`            | any step that reports something (`tool_result`, `run_completed`, …) | (nothing: a `RunEvent` the actor would emit) |
 *
 * The effects are in the order the actor would carry them out. Give the machine as the runtime
 * provides it (`runtime.machine`): its guards say whether policies are consulted, so whether a
 * step asks for `validate` and `review` at all. The step reads the clock as the actor does (the
 * time-budget guard, the timestamps it stores); everything else is a function of its arguments.
 *
 * Used by `runtime.forkPreview` (runtime/run-fork.ts) to tell which calls a fork would execute
 * before it runs, and by tests that walk a run without an actor.
 *
 * @module
 */

import { createActor, initialTransition, transition } from 'xstate';
import type { RunEvent } from '../run/run-events.ts';
import { type RunContext, type RunInput, turnId } from './run-context.ts';
import type { RunMachine, RunMachineEvent } from './run-machine-types.ts';
import type { StepRequest } from './run-steps.ts';

/** A run's persisted snapshot (`actor.getPersistedSnapshot()`, what a store keeps): JSON. */
export interface PersistedRunSnapshot {
  status: 'active' | 'done' | 'error' | 'stopped';
  value: unknown;
  context: RunContext;
  children: Record<string, unknown>;
  [member: string]: unknown;
}

/** One tool call a step asks to execute: the validated input it would run with. */
export interface EffectCall {
  toolCallId: string;
  name: string;
  /** The validated input (`preparedInput`), what `execute` would be given. */
  input: Record<string, unknown>;
  /** Its position in the batch (0-based): `tool.done`'s `output.index`. */
  index: number;
}

/** What a step asks for (see the module's table). */
export type RunEffect =
  | { type: 'plan'; kind: 'start' | 'resume' | 'finalize'; turnId: string }
  | { type: 'validate'; turnId: string }
  | { type: 'execute_tools'; turnId: string; calls: EffectCall[] }
  | { type: 'review'; turnId: string }
  /** Until epoch ms (a backoff; the run's time budget bounds it). */
  | { type: 'sleep'; until: number }
  | { type: 'await'; kind: 'clarification' | 'external_tools' | 'confirmation'; id: string }
  /** The answer a running call's question got (`awaiting.elicitation`), handed to the call. */
  | { type: 'elicited'; id: string; action: 'accept' | 'decline' | 'cancel' }
  /** A cancel while calls run (`canceling`): the running calls are told to stop. */
  | { type: 'abort_tools' }
  | { type: 'emit'; event: RunEvent };

/** `[nextSnapshot, effects]`, the shape of XState's `transition`. */
export type RunStep = [next: PersistedRunSnapshot, effects: RunEffect[]];

/**
 * The step of a run in `snapshot` on `event`: the next persisted snapshot and the effects asked
 * for (see the module's table). Pure: nothing is executed, `snapshot` is not changed. An event the
 * state does not take leaves the snapshot as it was, with no effects (as the actor ignores it).
 *
 * @throws Error when `snapshot` is not a run machine's persisted snapshot (XState cannot restore it).
 */
export function runTransition(
  machine: RunMachine,
  snapshot: PersistedRunSnapshot,
  event: RunMachineEvent,
): RunStep {
  const [next, actions] = transition(machine, restored(machine, snapshot), event);
  return [persisted(machine, next), effectsOf(actions)];
}

/**
 * The first step of a run started with `input`: its first snapshot (in `planning`) and the
 * first planner turn it asks for (`initialTransition`).
 */
export function initialRunTransition(machine: RunMachine, input: RunInput): RunStep {
  const [first, actions] = initialTransition(machine, input);
  return [persisted(machine, first), effectsOf(actions)];
}

/**
 * The effects a restored run asks for again (what a restored `steps` actor's `steps.restored`
 * makes its working state request): the step of `steps.restored` on `snapshot`.
 */
export function restoredRunEffects(machine: RunMachine, snapshot: PersistedRunSnapshot): RunEffect[] {
  return runTransition(machine, snapshot, { type: 'steps.restored' })[1];
}

/**
 * The machine snapshot of a persisted one, its `steps` child restored but never started: the
 * actor's own restore (`createActor` with `snapshot`), which starts nothing until `start()`.
 */
function restored(machine: RunMachine, snapshot: PersistedRunSnapshot) {
  return createActor(machine, { snapshot: snapshot as never, input: undefined as never }).getSnapshot();
}

interface ExecutableAction {
  type: string;
  params: unknown;
}

function effectsOf(actions: readonly ExecutableAction[]): RunEffect[] {
  const effects: RunEffect[] = [];
  for (const action of actions) {
    if (action.type === 'xstate.emit') {
      const event = (action.params as { event: RunEvent }).event;
      effects.push({ type: 'emit', event });
      const awaited = awaitOf(event);
      if (awaited) effects.push(awaited);
    } else if (action.type === 'xstate.sendTo') {
      const request = (action.params as { event: StepRequest }).event;
      effects.push(requestEffect(request));
    }
    // `xstate.spawnChild` (the `steps` actor) and the rest are the actor's own plumbing.
  }
  return effects;
}

function requestEffect(request: StepRequest): RunEffect {
  switch (request.type) {
    case 'plan':
      return { type: 'plan', kind: request.input.kind, turnId: turnId(request.input.context) };
    case 'validate':
      return { type: 'validate', turnId: turnId(request.input.context) };
    case 'review':
      return { type: 'review', turnId: turnId(request.input.context) };
    case 'sleep':
      return { type: 'sleep', until: request.input.until };
    case 'elicited':
      return { type: 'elicited', id: request.id, action: request.answer.action };
    case 'abortTools':
      return { type: 'abort_tools' };
    case 'tools':
      return {
        type: 'execute_tools',
        turnId: request.calls[0]?.meta.turnId ?? '',
        calls: request.calls.map(({ call, index }) => ({
          toolCallId: call.toolCallId,
          name: call.name,
          input: call.preparedInput ?? {},
          index,
        })),
      };
  }
}

function awaitOf(event: RunEvent): RunEffect | undefined {
  switch (event.type) {
    case 'await_clarification':
      return { type: 'await', kind: 'clarification', id: event.clarification.id };
    case 'await_external_tools':
      return { type: 'await', kind: 'external_tools', id: event.externalTools.id };
    case 'await_confirmation':
      return { type: 'await', kind: 'confirmation', id: event.confirmation.id };
    default:
      return undefined;
  }
}

/** XState's persisted form of a machine snapshot, which for a run is a {@link PersistedRunSnapshot}. */
function persisted(machine: RunMachine, snapshot: Parameters<RunMachine['getPersistedSnapshot']>[0]) {
  return machine.getPersistedSnapshot(snapshot) as unknown as PersistedRunSnapshot;
}
