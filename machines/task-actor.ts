import type { PromiseActorLogic, PromiseSnapshot } from 'xstate';

/** What a task is started with. */
export interface TaskArgs<TInput> {
  input: TInput;
  /**
   * Aborted when the actor is stopped (a cancel, the run stopped). The task may abort it itself
   * (a deadline), so what it hands on (a planner's `signal`) needs no controller of its own.
   * Created on first read: a task that never reads it costs none.
   */
  readonly controller: AbortController;
}

const RESOLVE = 'toolwarden.task.resolve';
const REJECT = 'toolwarden.task.reject';
const STOP = 'xstate.stop';
/**
 * Where a running task's controller is kept: on its actor, which the controller never outlives.
 * A module-wide `WeakMap`, as `fromPromise` has, measured ~4 µs per run step slower.
 */
const CONTROLLER = Symbol('toolwarden.task.controller');

type WithController = { [CONTROLLER]?: AbortController };

/**
 * Actor logic for one asynchronous step of a run (a planner turn, a tool call, a policy
 * consultation): `fromPromise` with the same snapshots (`{ status, output, error, input }`), the
 * same lifecycle and the same persistence — a task still running when its snapshot was taken runs
 * again when the snapshot is restored (FACTS.md; tool calls carry their `toolCallId` for that) —
 * and two costs less per actor, which each run step pays for two to four actors:
 *
 * - `fromPromise` creates an AbortController for every actor and keeps it in a module-wide
 *   `WeakMap` (a set and a delete per actor, ~1 µs together); here the controller is created
 *   only when the task reads it, and kept on the actor itself.
 * - a task that needs its own controller (the planner's, aborted at the time budget) uses this
 *   one instead of a second one listening to the first.
 */
export function fromTask<TOutput, TInput>(
  run: (args: TaskArgs<TInput>) => PromiseLike<TOutput> | TOutput,
): PromiseActorLogic<TOutput, TInput> {
  return {
    config: run,
    transition: (snapshot, event, scope) => {
      if (snapshot.status !== 'active') return snapshot;
      switch (event.type) {
        case RESOLVE:
          return { ...snapshot, status: 'done', output: event.data as TOutput, input: undefined };
        case REJECT:
          return { ...snapshot, status: 'error', error: event.data, input: undefined };
        case STOP: {
          const self = scope.self as WithController;
          self[CONTROLLER]?.abort();
          self[CONTROLLER] = undefined;
          return { ...snapshot, status: 'stopped', input: undefined };
        }
        default:
          return snapshot;
      }
    },
    start: (snapshot, { self }) => {
      if (snapshot.status !== 'active') return;
      const holder = self as WithController;
      const args: TaskArgs<TInput> = {
        input: snapshot.input as TInput,
        get controller() {
          holder[CONTROLLER] ??= new AbortController();
          return holder[CONTROLLER];
        },
      };
      Promise.resolve(run(args)).then(
        (output) => {
          if (self.getSnapshot().status !== 'active') return;
          holder[CONTROLLER] = undefined;
          self.send({ type: RESOLVE, data: output });
        },
        (error: unknown) => {
          if (self.getSnapshot().status !== 'active') return;
          holder[CONTROLLER] = undefined;
          self.send({ type: REJECT, data: error });
        },
      );
    },
    getInitialSnapshot: (_, input) => ({ status: 'active', output: undefined, error: undefined, input }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as PromiseSnapshot<TOutput, TInput>,
  };
}
