import { describe, expect, it } from 'vitest';
import { type AnyActorRef, assign, createActor, sendTo, setup } from 'xstate';
import type { ExecuteToolInput, RunPorts } from './run-ports.ts';
import { MAX_PARALLEL_TOOL_CALLS, runSteps, type StepEvent, type StepRequest } from './run-steps.ts';

/** A parent that invokes `steps` over `ports`, forwards requests to it and keeps every answer. */
function parentOf(ports: Partial<RunPorts>) {
  return setup({
    types: {
      context: {} as { answers: StepEvent[] },
      events: {} as StepEvent | { type: 'ask'; request: StepRequest },
    },
    actors: { runSteps: runSteps(ports) },
  }).createMachine({
    context: { answers: [] },
    invoke: { id: 'steps', src: 'runSteps' },
    on: {
      ask: { actions: sendTo('steps', ({ event }) => (event as { request: StepRequest }).request) },
      '*': { actions: assign({ answers: ({ context, event }) => [...context.answers, event as StepEvent] }) },
    },
  });
}

const toolCall = (index: number, toolCallId = `c${index}`): ExecuteToolInput => ({
  call: { toolCallId, name: 't', input: {}, attempt: 1, status: 'admitted' } as never,
  meta: { toolCallId } as never,
  labels: {},
  index,
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the run’s steps actor', () => {
  it('answers each request with the port’s output, or its error for a rejection or a throw', async () => {
    const actor = createActor(
      parentOf({
        plan: async ({ input }) => ({ result: { finalResponse: { text: input.kind } } }),
        validateBatch: () => {
          throw new Error('sync throw');
        },
        reviewResults: async () => Promise.reject(new Error('policy down')),
      }),
    ).start();
    actor.send({ type: 'ask', request: { type: 'plan', input: { kind: 'start', context: {} as never } } });
    actor.send({ type: 'ask', request: { type: 'validate', input: { context: {} as never } } });
    actor.send({ type: 'ask', request: { type: 'review', input: { context: {} as never } } });
    await settle();
    const answers = actor.getSnapshot().context.answers;
    expect(answers).toContainEqual({
      type: 'plan.done',
      output: { result: { finalResponse: { text: 'start' } } },
    });
    expect(answers.find((a) => a.type === 'validate.error')).toMatchObject({
      error: { message: 'sync throw' },
    });
    expect(answers.find((a) => a.type === 'review.error')).toMatchObject({
      error: { message: 'policy down' },
    });
  });

  it('runs a batch in a window of MAX_PARALLEL_TOOL_CALLS, once per toolCallId, and names a crashed call', async () => {
    let running = 0;
    let maxRunning = 0;
    let started = 0;
    const release: (() => void)[] = [];
    const actor = createActor(
      parentOf({
        executeTool: ({ input }) => {
          started++;
          running++;
          maxRunning = Math.max(maxRunning, running);
          return new Promise((resolve, reject) =>
            release.push(() => {
              running--;
              if (input.index === 0) reject(new Error('wrapper threw'));
              else
                resolve({
                  index: input.index,
                  result: { name: 't', toolCallId: input.call.toolCallId, executed: true },
                });
            }),
          );
        },
      }),
    ).start();
    const calls = Array.from({ length: MAX_PARALLEL_TOOL_CALLS + 5 }, (_, i) => toolCall(i));
    actor.send({ type: 'ask', request: { type: 'tools', calls } });
    // The same calls again (a state re-entered, a restore): nothing runs twice.
    actor.send({ type: 'ask', request: { type: 'tools', calls } });
    expect(started).toBe(MAX_PARALLEL_TOOL_CALLS);
    while (release.length > 0) {
      release.shift()!();
      await settle();
    }
    expect(started).toBe(calls.length);
    expect(maxRunning).toBe(MAX_PARALLEL_TOOL_CALLS);
    const answers = actor.getSnapshot().context.answers;
    expect(answers.filter((a) => a.type === 'tool.done')).toHaveLength(calls.length - 1);
    expect(answers.find((a) => a.type === 'tool.error')).toMatchObject({ index: 0, toolCallId: 'c0' });
  });

  it('aborts every controller a port read when it stops, and sends nothing after', async () => {
    const signals: AbortSignal[] = [];
    const actor = createActor(
      parentOf({
        plan: ({ controller }) => {
          signals.push(controller.signal);
          return new Promise(() => {});
        },
        executeTool: ({ controller }) => {
          signals.push(controller.signal);
          return new Promise(() => {});
        },
      }),
    ).start();
    actor.send({ type: 'ask', request: { type: 'plan', input: { kind: 'start', context: {} as never } } });
    actor.send({ type: 'ask', request: { type: 'tools', calls: [toolCall(0), toolCall(1)] } });
    expect(signals).toHaveLength(3);
    actor.stop();
    expect(signals.every((signal) => signal.aborted)).toBe(true);
  });

  it('says `steps.restored` when restored from a snapshot, and only then', async () => {
    const machine = parentOf({ plan: async () => ({}) });
    const first = createActor(machine).start();
    await settle();
    expect(first.getSnapshot().context.answers).toEqual([]);
    const persisted = first.getPersistedSnapshot();
    first.stop();

    const restored = createActor(machine, { snapshot: persisted }).start();
    await settle();
    expect(restored.getSnapshot().context.answers).toEqual([{ type: 'steps.restored' }]);
    expect((restored.getSnapshot().children as Record<string, AnyActorRef>).steps).toBeDefined();
  });
  it('tells a request in flight of a stop (onStop) and aborts the controller it read', async () => {
    let task: Parameters<RunPorts['plan']>[0] | undefined;
    let stops = 0;
    const actor = createActor(
      parentOf({
        plan: (args) => {
          task = args;
          args.onStop?.(() => stops++);
          return new Promise(() => {});
        },
      }),
    ).start();
    actor.send({ type: 'ask', request: { type: 'plan', input: { kind: 'start', context: {} as never } } });
    await settle();
    const early = task!.controller.signal;
    actor.stop();
    expect(stops).toBe(1);
    expect(early.aborted).toBe(true);
    expect(task!.controller.signal.aborted).toBe(true);
  });

  it('makes no controller for a request whose port never reads it', async () => {
    let task: Parameters<RunPorts['plan']>[0] | undefined;
    const actor = createActor(
      parentOf({
        plan: (args) => {
          task = args;
          args.onStop?.(() => {});
          return new Promise(() => {});
        },
      }),
    ).start();
    actor.send({ type: 'ask', request: { type: 'plan', input: { kind: 'start', context: {} as never } } });
    await settle();
    actor.stop();
    // Read only now, after the stop: made aborted, not left waiting.
    expect((task as unknown as { own?: AbortController }).own).toBeUndefined();
    expect(task!.controller.signal.aborted).toBe(true);
  });
});
