/**
 * The reference loop (`reference-loop.ts`) run by toolwarden and by the baselines it is measured
 * against, each a factory `(…, steps) => () => Promise<void>` for one run at a time: the run actor
 * through `createRuntime`, the run machine alone, a naive XState machine doing the same work, and
 * a plain async loop. Shared by `bench/run.ts` and `bench/side-by-side.ts`.
 *
 * @module
 */
import { assign, createActor, fromPromise, setup, waitFor } from 'xstate';
import { DEFAULT_CAPS } from '../../run/caps.ts';
import type { Message } from '../../run/message.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime, type RuntimeOptions } from '../../runtime/create-runtime.ts';
import { capsState } from '../../runtime/steps/plan-step.ts';
import { executeToolCall, prepareToolCall } from '../../tools/call-tool.ts';
import { ToolCatalog } from '../../tools/tool-catalog.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import { addTool, resettablePlanner, STEPS } from './reference-loop.ts';

const prompt: Message[] = [{ role: 'user', content: 'Add the numbers' }];

/** A runtime for the reference loop of `steps` steps, with its resettable planner. */
export function loopRuntime(steps: number, options: Pick<RuntimeOptions, 'store' | 'telemetry'>) {
  const planner = resettablePlanner(steps);
  const runtime = createRuntime({
    agent: { id: 'bench' },
    planner,
    tools: [addTool],
    // A step is a planner turn too: as many turns as steps, and the final one.
    caps: {
      maxToolCalls: Math.max(steps, DEFAULT_CAPS.maxToolCalls),
      maxTurns: Math.max(steps + 1, DEFAULT_CAPS.maxTurns ?? 0),
    },
    ...options,
  });
  return { planner, runtime };
}

/** One run of `steps` steps through the run actor; resolves when `result()` does. */
export function actorLoop(options: Pick<RuntimeOptions, 'store' | 'telemetry'>, steps = STEPS) {
  const { planner, runtime } = loopRuntime(steps, options);
  let n = 0;
  return async () => {
    planner.reset();
    const run = runtime.start({ runId: `bench-${++n}`, messages: prompt });
    const outcome = await run.result();
    if (outcome.status !== 'completed')
      throw new Error(`bench run ${outcome.status}: ${outcome.error?.message}`);
  };
}

/** The same work as a hand-written async loop: planner, validation, execution, transcript. */
export function plainLoop(steps = STEPS) {
  const planner = resettablePlanner(steps);
  const catalog = new ToolCatalog([addTool]);
  const tools = catalog.descriptors();
  let n = 0;
  return async () => {
    planner.reset();
    const runId = `plain-${++n}`;
    const messages: Message[] = [...prompt];
    const startedAt = Date.now();
    let toolCalls = 0;
    let last: ToolResult[] = [];
    for (let turn = 1; ; turn++) {
      const context = {
        runId,
        turn,
        startedAt,
        caps: DEFAULT_CAPS,
        toolCalls,
        consecutiveFailures: 0,
      } as Parameters<typeof capsState>[0];
      const input: PlanInput = {
        runId,
        turnId: `${runId}:t${turn}`,
        agentId: 'bench',
        messages: [...messages],
        tools,
        caps: capsState(context),
        labels: {},
      };
      const plan =
        turn === 1
          ? await planner.planStart(input)
          : await planner.planResume({ ...input, toolResults: last } satisfies PlanResumeInput);
      if (!plan.toolCalls?.length) {
        messages.push({ role: 'assistant', content: plan.finalResponse?.text });
        if (plan.finalResponse?.text !== 'done')
          throw new Error('plain loop ended without the final response');
        return;
      }
      const calls = plan.toolCalls.map((call, i) => ({ ...call, toolCallId: call.toolCallId ?? `c${i}` }));
      messages.push({
        role: 'assistant',
        toolCalls: calls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.name, input: c.input })),
      });
      toolCalls += calls.length;
      last = await Promise.all(
        calls.map(async (call) => {
          const prepared = prepareToolCall(catalog, call);
          if (!prepared.ok) return prepared.result;
          return executeToolCall(prepared.tool, prepared.input, {
            meta: {
              runId,
              turnId: input.turnId,
              toolCallId: call.toolCallId,
              agentId: 'bench',
              attempt: 1,
            },
          });
        }),
      );
      for (const result of last) {
        if (result.error) throw new Error(`bench tool failed: ${result.error.message}`);
        messages.push({
          role: 'tool',
          toolCallId: result.toolCallId,
          toolName: result.name,
          content: result.result ?? null,
        });
      }
    }
  };
}

/** The run machine with the runtime's actors, as `runtime.machine`, without the runtime's host. */
export function machineLoop(steps = STEPS) {
  const { planner, runtime } = loopRuntime(steps, { telemetry: false });
  let n = 0;
  return async () => {
    planner.reset();
    const actor = createActor(runtime.machine, {
      input: { runId: `machine-${++n}`, agent: { id: 'bench' }, messages: prompt, caps: runtime.caps },
    });
    actor.start();
    const snapshot = await waitFor(actor, (s) => s.status !== 'active');
    if (snapshot.value !== 'completed')
      throw new Error(`bench machine run ended in ${String(snapshot.value)}`);
  };
}

/**
 * The reference of FACTS.md's "naive XState machine": per step one invoked actor asks the planner,
 * one runs the batch (prepareToolCall + executeToolCall); the transcript grows in context.
 */
export function naiveLoop(steps = STEPS) {
  const planner = resettablePlanner(steps);
  const catalog = new ToolCatalog([addTool]);
  const tools = catalog.descriptors();
  interface Ctx {
    messages: Message[];
    turn: number;
    last: ToolResult[];
  }
  const naive = setup({
    types: { context: {} as Ctx },
    actors: {
      plan: fromPromise<PlanResult, Ctx>(({ input }) => {
        const base = {
          runId: 'naive',
          turnId: `naive:t${input.turn}`,
          agentId: 'bench',
          messages: [...input.messages],
          tools,
          caps: capsState({
            ...input,
            startedAt: 0,
            caps: DEFAULT_CAPS,
            toolCalls: input.turn - 1,
            consecutiveFailures: 0,
          } as never),
          labels: {},
        };
        return input.turn === 1
          ? planner.planStart(base)
          : planner.planResume({ ...base, toolResults: input.last });
      }),
      run: fromPromise<ToolResult[], { calls: { name: string; toolCallId: string; input: unknown }[] }>(
        ({ input }) =>
          Promise.all(
            input.calls.map(async (call) => {
              const prepared = prepareToolCall(catalog, call);
              if (!prepared.ok) return prepared.result;
              return executeToolCall(prepared.tool, prepared.input, {
                meta: {
                  runId: 'naive',
                  turnId: 't',
                  toolCallId: call.toolCallId,
                  agentId: 'bench',
                  attempt: 1,
                },
              });
            }),
          ),
      ),
    },
  }).createMachine({
    context: { messages: prompt, turn: 1, last: [] },
    initial: 'planning',
    states: {
      planning: {
        invoke: {
          src: 'plan',
          input: ({ context }) => context,
          onDone: [
            {
              guard: ({ event }) => (event.output.toolCalls?.length ?? 0) > 0,
              target: 'executing',
              actions: assign({
                messages: ({ context, event }) => [
                  ...context.messages,
                  {
                    role: 'assistant' as const,
                    toolCalls: (event.output.toolCalls ?? []).map((c, i) => ({
                      toolCallId: c.toolCallId ?? `c${i}`,
                      toolName: c.name,
                      input: c.input,
                    })),
                  },
                ],
              }),
            },
            { target: 'done' },
          ],
        },
      },
      executing: {
        invoke: {
          src: 'run',
          input: ({ context }) => {
            const last = context.messages.at(-1);
            const calls = last?.role === 'assistant' ? (last.toolCalls ?? []) : [];
            return {
              calls: calls.map((c) => ({ name: c.toolName, toolCallId: c.toolCallId, input: c.input })),
            };
          },
          onDone: {
            target: 'planning',
            actions: assign(({ context, event }) => ({
              turn: context.turn + 1,
              last: event.output,
              messages: [
                ...context.messages,
                ...event.output.map((r) => ({
                  role: 'tool' as const,
                  toolCallId: r.toolCallId,
                  toolName: r.name,
                  content: r.result ?? null,
                })),
              ],
            })),
          },
        },
      },
      done: { type: 'final' },
    },
  });
  return async () => {
    planner.reset();
    const actor = createActor(naive);
    actor.start();
    await waitFor(actor, (s) => s.status !== 'active');
  };
}
