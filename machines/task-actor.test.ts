import { describe, expect, it } from 'vitest';
import { assign, createActor, setup, waitFor } from 'xstate';
import { fromTask } from './task-actor.ts';

/** A parent that invokes `task` with `{ n: 1 }` and keeps its output or error. */
function parentOf(task: ReturnType<typeof fromTask<number, { n: number }>>) {
  return setup({
    types: { context: {} as { output?: number; error?: unknown } },
    actors: { task },
  }).createMachine({
    context: {},
    initial: 'running',
    states: {
      running: {
        invoke: {
          src: 'task',
          input: { n: 1 },
          onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
          onError: { target: 'done', actions: assign({ error: ({ event }) => event.error }) },
        },
      },
      done: { type: 'final' },
    },
  });
}

describe('fromTask', () => {
  it('hands its task the input and reports what the task resolves, as fromPromise does', async () => {
    const actor = createActor(parentOf(fromTask(async ({ input }) => input.n + 1))).start();
    const snapshot = await waitFor(actor, (s) => s.status === 'done');
    expect(snapshot.context).toEqual({ output: 2 });
  });

  it('reports a rejection as the actor error', async () => {
    const failure = new Error('planner down');
    const actor = createActor(
      parentOf(
        fromTask<number, { n: number }>(async () => {
          throw failure;
        }),
      ),
    ).start();
    const snapshot = await waitFor(actor, (s) => s.status === 'done');
    expect(snapshot.context.error).toBe(failure);
  });

  it('aborts the controller the task read when the actor is stopped, and ignores the late result', async () => {
    let signal: AbortSignal | undefined;
    let finish!: (n: number) => void;
    const actor = createActor(
      parentOf(
        fromTask(({ controller }) => {
          signal = controller.signal;
          return new Promise<number>((resolve) => {
            finish = resolve;
          });
        }),
      ),
    ).start();
    expect(signal?.aborted).toBe(false);
    actor.stop();
    expect(signal?.aborted).toBe(true);
    finish(5);
    await Promise.resolve();
    expect(actor.getSnapshot().context).toEqual({});
  });

  it('lets the task abort its own controller (a deadline) without stopping the actor', async () => {
    let reason: unknown;
    const actor = createActor(
      parentOf(
        fromTask(({ controller }) => {
          controller.signal.addEventListener('abort', () => {
            reason = controller.signal.reason;
          });
          controller.abort(new Error('Time budget exhausted'));
          return 7;
        }),
      ),
    ).start();
    const snapshot = await waitFor(actor, (s) => s.status === 'done');
    expect(snapshot.context).toEqual({ output: 7 });
    expect(reason).toEqual(new Error('Time budget exhausted'));
  });

  it('runs a task again when a snapshot taken while it ran is restored', async () => {
    let runs = 0;
    let finish: ((n: number) => void) | undefined;
    const machine = parentOf(
      fromTask(() => {
        runs += 1;
        return new Promise<number>((resolve) => {
          finish = resolve;
        });
      }),
    );
    const first = createActor(machine).start();
    const persisted = first.getPersistedSnapshot();
    first.stop();
    const restored = createActor(machine, { snapshot: persisted }).start();
    expect(runs).toBe(2);
    finish!(3);
    const snapshot = await waitFor(restored, (s) => s.status === 'done');
    expect(snapshot.context).toEqual({ output: 3 });
  });
});
