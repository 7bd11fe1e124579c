import { type CallbackActorLogic, type CallbackSnapshot, fromCallback, type Snapshot } from 'xstate';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { MAX_PARALLEL_TOOL_CALLS } from './run-actions.ts';
import {
  type ExecuteToolInput,
  type ExecuteToolOutput,
  type PlanActorInput,
  type PlanActorOutput,
  placeholderPorts,
  type ReviewResultsInput,
  type RunPort,
  type RunPorts,
  type SleepUntilInput,
  type TaskArgs,
  type ValidateBatchInput,
  type ValidateBatchOutput,
} from './run-ports.ts';

/**
 * The run's `steps` actor: one child per run, invoked at the machine's root, that does a step's
 * asynchronous work (run-ports.ts) on request and answers with an event.
 *
 * Why one long-lived actor instead of an invoked actor per planner turn and per tool call (the
 * first design: "each call a child actor"): creating, starting and stopping an XState actor is most of what a step cost
 * (a machine that invokes two actors a step ran at 70 µs a step on the development machine, the
 * same machine answered by one long-lived actor at 20; issue 17). What the per-call actors were
 * for stays:
 *
 * - parallel calls: a batch runs in a window of {@link MAX_PARALLEL_TOOL_CALLS}, each result
 *   starting the next (here, not in the machine);
 * - per-call timeouts: `executeTool` bounds each call (runtime/steps/execute-tool.ts);
 * - cancel: stopping the run stops this actor, which aborts every port's `controller`;
 * - restore after a crash: a restored `steps` actor sends `steps.restored` to the run, whose
 *   working state requests its work again from the restored context (the calls without a result,
 *   with their stable `toolCallId`s; the same planner turn);
 * - inspection: every request and answer is an `@xstate.event` between the run actor and
 *   `steps`, carrying the call's `toolCallId`.
 */
export type StepRequest =
  | { type: 'plan'; input: PlanActorInput }
  | { type: 'validate'; input: ValidateBatchInput }
  | { type: 'tools'; calls: ExecuteToolInput[] }
  | { type: 'review'; input: ReviewResultsInput }
  | { type: 'sleep'; input: SleepUntilInput };

/** What `steps` sends the run actor. `output` and `error` are named as XState's done and error events name them. */
export type StepEvent =
  | { type: 'plan.done'; output: PlanActorOutput }
  | { type: 'plan.error'; error: unknown }
  | { type: 'validate.done'; output: ValidateBatchOutput }
  | { type: 'validate.error'; error: unknown }
  | { type: 'tool.done'; output: ExecuteToolOutput }
  | { type: 'tool.error'; index: number; toolCallId: string; error: unknown }
  | { type: 'review.done'; output: PolicyEffects }
  | { type: 'review.error'; error: unknown }
  | { type: 'sleep.done' }
  /** Sent once by a `steps` actor restored from a snapshot: what was in flight is requested again. */
  | { type: 'steps.restored' };

/** The `steps` actor's input: set only on restore. */
export interface StepsInput {
  restored?: boolean;
}

/** Longest run of tool-call starts, with what they set off, before the event loop gets a turn (ms). */
export const CALL_SLICE_MS = 8;

/** The id of the run's `steps` actor (its `invoke` at the machine's root). */
export const STEPS_ACTOR_ID = 'steps';

/**
 * The `steps` actor logic over `ports` (missing ones throw "not provided", but `sleepUntil`).
 * Provide it as `machine.provide({ actors: { runSteps: runSteps(ports) } })`.
 *
 * A port's rejection (or throw) is answered with its error event; a port never runs twice for one
 * request, and a tool call whose `toolCallId` is running or queued is not queued again.
 */
export function runSteps(
  ports: Partial<RunPorts> = {},
): CallbackActorLogic<StepRequest, StepsInput | undefined> {
  const port: RunPorts = { ...placeholderPorts, ...ports };
  const logic = fromCallback<StepRequest, StepsInput | undefined>(({ input, sendBack, receive }) => {
    // The requests in flight that made a controller or wait for a stop: stopped with the actor.
    const held = new Set<StepTask<unknown>>();
    const queued: ExecuteToolInput[] = [];
    const known = new Set<string>();
    let running = 0;
    // When the current run of call starts began, and whether a macrotask is due to go on.
    let sliceStartedAt = sliceClock();
    let resumeDue = false;

    function call<I, O>(
      run: RunPort<I, O>,
      request: I,
      done: (output: O) => StepEvent,
      failed: (error: unknown) => StepEvent,
      settled?: () => void,
    ): void {
      const task = new StepTask(request, held);
      let result: PromiseLike<O> | O;
      try {
        result = run(task);
      } catch (error) {
        // Answered as a rejection is: after the request's own step.
        Promise.resolve().then(() => task.finish(failed(error), sendBack, settled));
        return;
      }
      Promise.resolve(result).then(
        (output) => task.finish(done(output), sendBack, settled),
        (error: unknown) => task.finish(failed(error), sendBack, settled),
      );
    }

    function pump(): void {
      while (running < MAX_PARALLEL_TOOL_CALLS && queued.length > 0) {
        const next = queued.shift()!;
        const id = next.call.toolCallId;
        running++;
        call(
          port.executeTool,
          next,
          (output) => ({ type: 'tool.done', output }),
          (error) => ({ type: 'tool.error', index: next.index, toolCallId: id, error }),
          () => {
            running--;
            known.delete(id);
            pumpSoon();
          },
        );
      }
    }

    /**
     * The next calls of the batch, now or after a macrotask: calls that answer at once would
     * otherwise start each other in one chain of microtasks until the batch is done (issue 24
     * item 8: a 4,000-call batch stalled the event loop 2.9 s). After {@link CALL_SLICE_MS} of
     * starts the event loop runs its timers and I/O first. A one-call batch never waits.
     */
    function pumpSoon(): void {
      if (queued.length === 0 || resumeDue) return;
      if (sliceClock() - sliceStartedAt < CALL_SLICE_MS) {
        pump();
        return;
      }
      resumeDue = true;
      setImmediate(() => {
        resumeDue = false;
        sliceStartedAt = sliceClock();
        pump();
      });
    }

    receive((request) => {
      switch (request.type) {
        case 'plan':
          return call(
            port.plan,
            request.input,
            (output) => ({ type: 'plan.done', output }),
            (error) => ({ type: 'plan.error', error }),
          );
        case 'validate':
          return call(
            port.validateBatch,
            request.input,
            (output) => ({ type: 'validate.done', output }),
            (error) => ({ type: 'validate.error', error }),
          );
        case 'review':
          return call(
            port.reviewResults,
            request.input,
            (output) => ({ type: 'review.done', output }),
            (error) => ({ type: 'review.error', error }),
          );
        case 'sleep':
          return call(
            port.sleepUntil,
            request.input,
            () => ({ type: 'sleep.done' }),
            () => ({ type: 'sleep.done' }),
          );
        case 'tools':
          for (const next of request.calls) {
            if (known.has(next.call.toolCallId)) continue;
            known.add(next.call.toolCallId);
            queued.push(next);
          }
          sliceStartedAt = sliceClock();
          return pump();
      }
    });
    if (input?.restored) sendBack({ type: 'steps.restored' });
    return () => {
      queued.length = 0;
      for (const task of held) task.stop();
      held.clear();
    };
  });
  // A restored actor says so on start (the callback sees `restored`), so the run requests again
  // what was in flight when its snapshot was taken.
  const restoreSnapshot = (snapshot: Snapshot<unknown>): CallbackSnapshot<StepsInput | undefined> => ({
    ...(snapshot as CallbackSnapshot<StepsInput | undefined>),
    input: { restored: true },
  });
  // The flag is the restored actor's own: what it persists is what a fresh one does.
  const getPersistedSnapshot = (snapshot: CallbackSnapshot<StepsInput | undefined>) =>
    snapshot.input === undefined ? snapshot : { ...snapshot, input: undefined };
  return { ...logic, restoreSnapshot, getPersistedSnapshot };
}

/**
 * One request's {@link TaskArgs}: its controller made on first read, held with its stop
 * listener (told when the actor stops) until the request settles. A class, not an object literal
 * with a getter and a closure per request: those were two functions made for every request of
 * every step.
 */
class StepTask<I> implements TaskArgs<I> {
  private own: AbortController | undefined;
  private stopListener: (() => void) | undefined;
  private stopped = false;

  constructor(
    readonly input: I,
    private readonly held: Set<StepTask<unknown>>,
  ) {}

  get controller(): AbortController {
    if (!this.own) {
      this.own = new AbortController();
      // Read after the actor stopped (a planner reading its signal late): aborted already.
      if (this.stopped) this.own.abort();
      else this.held.add(this);
    }
    return this.own;
  }

  onStop(listener: () => void): void {
    this.stopListener = listener;
    this.held.add(this);
  }

  /** The actor stopped: the listener, then the controller's abort. */
  stop(): void {
    this.stopped = true;
    this.stopListener?.();
    this.own?.abort();
  }

  /** The request settled: it is no longer held, and the run hears `event`. */
  finish(event: StepEvent, sendBack: (event: StepEvent) => void, settled: (() => void) | undefined): void {
    this.held.delete(this);
    settled?.();
    sendBack(event);
  }
}

/** `performance.now()`; `Date.now()` in Temporal's workflow sandbox, which has no `performance`. */
function sliceClock(): number {
  return globalThis.performance?.now() ?? Date.now();
}
