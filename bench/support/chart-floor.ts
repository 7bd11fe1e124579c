/**
 * The chart's floor (issue 29): what the run machine's chart costs on XState v5 when it does the
 * reference loop's work and nothing else of toolwarden's. The yardstick of
 * `npm run bench -- --peers` (docs/benchmarks.md §Side by side).
 *
 * | per step | the chart's floor (here) | the run machine, no policies (machines/run-machine.ts) |
 * |---|---|---|
 * | states, in order | planning → validating.checking → admitting → executing → resuming.checking → routing → planning | the same |
 * | transient hops (`always`) | 5: checking → admitting → executing; executing → resuming (batch complete); checking → routing → planning | the same |
 * | events | `plan` request, `plan.done`; `tools` request, `tool.done` | the same, with the run's inspection and log events |
 * | child actors | one, `steps`, invoked at the root for the whole run, answering requests by event | the same |
 * | work | zod `safeParse` of the args, the async tool, the transcript appended immutably in context | and the planner input, caps, budgets, the boundary's checks, run events, the store, telemetry |
 *
 * The planner is a counter (as the AI SDK's mock model is in bench/peers/peer-loops.ts): `steps`
 * turns of one `bench.add` call, then the final response `done`.
 *
 * @module
 */
import { assign, createActor, fromCallback, sendTo, setup, toPromise } from 'xstate';
import type { Message } from '../../run/message.ts';
import { add, addTool, STEPS } from './reference-loop.ts';

/** A call as the planner proposed it. */
export interface FloorCall {
  toolCallId: string;
  name: string;
  input: unknown;
}

/** A call after the args' `safeParse`: admitted with the parsed input, or refused. */
type CheckedCall =
  | { call: FloorCall; admitted: true; input: { a: number; b: number } }
  | { call: FloorCall; admitted: false };

/** What the counter planner answers for a turn. */
export type FloorPlan = { toolCalls: FloorCall[] } | { text: string };

export interface FloorContext {
  /** Tool-calling turns before the final response. */
  steps: number;
  turn: number;
  /** The transcript: never mutated, every append is a new array. */
  messages: readonly Message[];
  batch: { checked: readonly CheckedCall[]; results: readonly (unknown | null)[] };
  finalText: string | null;
}

/** What the run machine sends its `steps` actor. */
export type FloorRequest =
  | { type: 'plan'; turn: number }
  | { type: 'tools'; calls: readonly { index: number; input: { a: number; b: number } }[] };

/** What the `steps` actor answers. */
export type FloorEvent =
  | { type: 'plan.done'; output: FloorPlan }
  | { type: 'tool.done'; index: number; output: unknown };

const prompt: Message[] = [{ role: 'user', content: 'Add the numbers' }];

/** The `steps` actor: one per run, answering each request with an event when its promise settles. */
const floorSteps = fromCallback<FloorRequest, { steps: number }>(({ input, sendBack, receive }) => {
  const plan = async (turn: number): Promise<FloorPlan> =>
    turn <= input.steps
      ? { toolCalls: [{ toolCallId: `call-${turn}`, name: 'bench.add', input: { a: turn, b: 1 } }] }
      : { text: 'done' };
  receive((request) => {
    if (request.type === 'plan') {
      plan(request.turn).then((output) => sendBack({ type: 'plan.done', output }));
      return;
    }
    for (const { index, input: args } of request.calls)
      add(args).then((output) => sendBack({ type: 'tool.done', index, output }));
  });
});

const toolCallsOf = (event: FloorEvent) =>
  event.type === 'plan.done' && 'toolCalls' in event.output ? event.output.toolCalls : [];

/** The chart's floor machine; its input is the number of tool-calling steps. */
export const chartFloorMachine = setup({
  types: {
    context: {} as FloorContext,
    input: {} as { steps: number },
    events: {} as FloorEvent,
    output: {} as { text: string | null; messages: number },
  },
  actors: { floorSteps },
  guards: {
    planHasToolCalls: ({ event }) => toolCallsOf(event).length > 0,
    hasAdmittedCalls: ({ context }) => context.batch.checked.some((c) => c.admitted),
    batchComplete: ({ context }) => context.batch.results.every((r) => r !== null),
  },
  actions: {
    startTurn: assign({ turn: ({ context }) => context.turn + 1 }),
    requestPlan: sendTo(
      'steps',
      ({ context }) => ({ type: 'plan', turn: context.turn }) satisfies FloorRequest,
    ),
    recordToolCalls: assign(({ context, event }) => {
      const calls = toolCallsOf(event);
      return {
        messages: [
          ...context.messages,
          {
            role: 'assistant' as const,
            toolCalls: calls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.name, input: c.input })),
          },
        ],
        batch: { checked: calls.map((call) => ({ call, admitted: false as const })), results: [] },
      };
    }),
    recordFinalResponse: assign(({ context, event }) => {
      const text = event.type === 'plan.done' && 'text' in event.output ? event.output.text : null;
      return {
        finalText: text,
        messages: [...context.messages, { role: 'assistant' as const, content: text ?? '' }],
      };
    }),
    /** The tool boundary's floor: the args' zod `safeParse`; a refused call's result is its error. */
    validateCalls: assign(({ context }) => {
      const checked = context.batch.checked.map(({ call }): CheckedCall => {
        const parsed = addTool.input.safeParse(call.input);
        return parsed.success ? { call, admitted: true, input: parsed.data } : { call, admitted: false };
      });
      return {
        batch: {
          checked,
          results: checked.map((c) => (c.admitted ? null : { error: 'invalid input' })),
        },
      };
    }),
    startToolCalls: sendTo(
      'steps',
      ({ context }) =>
        ({
          type: 'tools',
          calls: context.batch.checked.flatMap((c, index) => (c.admitted ? [{ index, input: c.input }] : [])),
        }) satisfies FloorRequest,
    ),
    recordToolResult: assign({
      batch: ({ context, event }) =>
        event.type === 'tool.done'
          ? {
              ...context.batch,
              results: context.batch.results.map((r, i) => (i === event.index ? event.output : r)),
            }
          : context.batch,
    }),
    foldBatch: assign({
      messages: ({ context }) => [
        ...context.messages,
        ...context.batch.checked.map(({ call }, i) => ({
          role: 'tool' as const,
          toolCallId: call.toolCallId,
          toolName: call.name,
          content: context.batch.results[i] ?? null,
        })),
      ],
    }),
  },
}).createMachine({
  id: 'floor',
  context: ({ input }) => ({
    steps: input.steps,
    turn: 0,
    messages: prompt,
    batch: { checked: [], results: [] },
    finalText: null,
  }),
  invoke: { id: 'steps', src: 'floorSteps', input: ({ context }) => ({ steps: context.steps }) },
  initial: 'planning',
  states: {
    planning: {
      entry: ['startTurn', 'requestPlan'],
      on: {
        'plan.done': [
          { guard: 'planHasToolCalls', target: 'validating', actions: 'recordToolCalls' },
          { target: 'completed', actions: 'recordFinalResponse' },
        ],
      },
    },
    validating: {
      initial: 'checking',
      states: {
        /** Transient, as the run machine's is without policies. */
        checking: { always: { target: '#floor.admitting', actions: 'validateCalls' } },
      },
    },
    /** Transient. */
    admitting: {
      always: [{ guard: 'hasAdmittedCalls', target: 'executing' }, { target: 'resuming' }],
    },
    executing: {
      entry: 'startToolCalls',
      always: { guard: 'batchComplete', target: 'resuming' },
      on: { 'tool.done': { actions: 'recordToolResult' } },
    },
    resuming: {
      entry: 'foldBatch',
      initial: 'checking',
      states: {
        /** Transient, as the run machine's is without policies. */
        checking: { always: { target: '#floor.routing' } },
      },
    },
    /** Transient. */
    routing: { always: { target: 'planning' } },
    completed: { type: 'final' },
  },
  output: ({ context }) => ({ text: context.finalText, messages: context.messages.length }),
});

/** One run of the chart's floor of `steps` steps; resolves when it is done. */
export function chartFloorLoop(steps = STEPS) {
  return async () => {
    const actor = createActor(chartFloorMachine, { input: { steps } });
    const done = toPromise(actor);
    actor.start();
    const output = await done;
    if (output.text !== 'done' || output.messages !== 2 * steps + 2)
      throw new Error(`chart floor run ended with ${JSON.stringify(output)}`);
  };
}
