/**
 * What the run actor costs per step (issue 3, "Show"): the same 10-step loop — one tool with zod
 * validation, a scripted planner giving 10 turns of one tool call each and then a final
 * response — run five ways:
 *
 * | variant                            | what runs                                                      |
 * |------------------------------------|----------------------------------------------------------------|
 * | run actor, default runtime         | `createRuntime` defaults + `start` + `result()`: in-memory store written at every state change, telemetry plugin (no SDK), durable runs |
 * | run actor, no store, no telemetry  | the same with a store that keeps nothing and `telemetry: false` |
 * | run machine alone                  | `createActor(runtime.machine)`: the machine and its step actors, no runtime host |
 * | naive XState machine, same work    | one planner invoke and one tool invoke per step (FACTS.md's reference) |
 * | plain async loop                   | `prepareToolCall` + `executeToolCall` + the planner calls       |
 *
 *     npm run bench                      # node --import tsx bench/run.ts
 *     node --import tsx bench/run.ts --runs 2000 --warm-up 300
 *
 * Prints the median µs per step (wall clock and CPU time), the overhead over the plain loop and
 * the ratio, after a warm-up. Issue 3's target is a median run-actor overhead of at most 30 µs
 * per step; FACTS.md has peers on the same loop (naive XState ≈ 44, AI SDK 6 ≈ 208,
 * LangGraph.js ≈ 745). Then runs `benchStores()` from `bench/store.bench.ts` when that file exists.
 */

import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { assign, createActor, fromPromise, setup, waitFor } from 'xstate';
import { DEFAULT_CAPS } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { capsState } from '../runtime/steps/plan-step.ts';
import { executeToolCall, prepareToolCall } from '../tools/call-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import { addTool, discardingStore, resettablePlanner, STEPS } from './support/reference-loop.ts';

export { discardingStore, STEPS } from './support/reference-loop.ts';

const prompt: Message[] = [{ role: 'user', content: 'Add the numbers' }];

/** One run through the run actor; resolves when `result()` does. */
function actorLoop(options: Pick<RuntimeOptions, 'store' | 'telemetry'>) {
  const planner = resettablePlanner();
  const runtime = createRuntime({ agent: { id: 'bench' }, planner, tools: [addTool], ...options });
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
function plainLoop() {
  const planner = resettablePlanner();
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
function machineLoop() {
  const planner = resettablePlanner();
  const runtime = createRuntime({ agent: { id: 'bench' }, planner, tools: [addTool], telemetry: false });
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
function naiveLoop() {
  const planner = resettablePlanner();
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

/** One measured variant: median µs per step, by wall clock and by this process's CPU time. */
export interface LoopFigures {
  name: string;
  wallUsPerStep: number;
  cpuUsPerStep: number;
}

export interface RunBenchResult {
  steps: number;
  runs: number;
  /** The default runtime: in-memory store (persisted at every state change), telemetry plugin on (no SDK). */
  actor: LoopFigures;
  /** The runtime with a store that keeps nothing and `telemetry: false`. */
  actorBare: LoopFigures;
  /** `createActor(runtime.machine)` alone: the run machine and its step actors, no runtime host. */
  machine: LoopFigures;
  /** A naive XState machine doing the same work: one planner invoke and one tool invoke per step. */
  naive: LoopFigures;
  plain: LoopFigures;
}

interface Sample {
  wall: number;
  cpu: number;
}

async function measure(loop: () => Promise<void>, warmUp: number, runs: number): Promise<Sample[]> {
  for (let i = 0; i < warmUp; i++) await loop();
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await loop();
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    samples.push({ wall: (wall * 1000) / STEPS, cpu: (used.user + used.system) / STEPS });
  }
  return samples;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const figures = (name: string, samples: Sample[]): LoopFigures => ({
  name,
  wallUsPerStep: round1(median(samples.map((s) => s.wall))),
  cpuUsPerStep: round1(median(samples.map((s) => s.cpu))),
});

/**
 * Runs the loops interleaved in rounds (so load from other processes hits all alike) and prints
 * the medians. CPU time is reported beside wall time because it is steadier on a shared machine;
 * it includes V8's helper threads (GC) and has 1 µs resolution per run.
 */
export async function benchRunActor(options: { runs?: number; warmUp?: number; print?: boolean } = {}) {
  const runs = options.runs ?? 1000;
  const warmUp = options.warmUp ?? 200;
  const loops = {
    actor: actorLoop({}),
    actorBare: actorLoop({ store: discardingStore(), telemetry: false }),
    machine: machineLoop(),
    naive: naiveLoop(),
    plain: plainLoop(),
  };
  type Key = keyof typeof loops;
  const keys = Object.keys(loops) as Key[];
  const samples = Object.fromEntries(keys.map((key) => [key, [] as Sample[]])) as Record<Key, Sample[]>;
  const rounds = 10;
  for (let round = 0; round < rounds; round++) {
    for (const key of keys) {
      samples[key].push(...(await measure(loops[key], round === 0 ? warmUp : 20, Math.ceil(runs / rounds))));
    }
  }
  const result: RunBenchResult = {
    steps: STEPS,
    runs: samples.actor.length,
    actor: figures('run actor, default runtime', samples.actor),
    actorBare: figures('run actor, no store, no telemetry', samples.actorBare),
    machine: figures('run machine alone (createActor)', samples.machine),
    naive: figures('naive XState machine, same work', samples.naive),
    plain: figures('plain async loop', samples.plain),
  };
  if (options.print ?? true) printResult(result);
  return result;
}

function printResult(result: RunBenchResult): void {
  console.log(
    `run loop: ${result.steps} steps (one tool call each, zod validation, scripted planner); median of ${result.runs} runs; µs per step`,
  );
  const plain = result.plain;
  const row = (cells: string[]) =>
    console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(36) : cell.padStart(12))).join(''));
  row(['', 'wall', 'cpu', 'overhead', 'ratio']);
  for (const f of [result.actor, result.actorBare, result.machine, result.naive, plain]) {
    const overhead = f === plain ? '' : (f.wallUsPerStep - plain.wallUsPerStep).toFixed(1);
    const ratio = f === plain ? '' : `${(f.wallUsPerStep / plain.wallUsPerStep).toFixed(1)}×`;
    row([f.name, f.wallUsPerStep.toFixed(1), f.cpuUsPerStep.toFixed(1), overhead, ratio]);
  }
  console.log(
    'overhead = variant − plain loop (wall clock); issue 3 target: run actor overhead ≤ 30 µs per step',
  );
}

const round1 = (value: number) => Math.round(value * 10) / 10;

function argument(name: string): number | undefined {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : Number.NaN;
  return Number.isFinite(value) ? value : undefined;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchRunActor({ runs: argument('runs'), warmUp: argument('warm-up') });
  // The store benchmark is another module's; run it when it is there.
  const storeBench = new URL('./store.bench.ts', import.meta.url);
  if (existsSync(storeBench)) {
    const { benchStores } = (await import(storeBench.href)) as { benchStores: () => Promise<unknown> };
    console.log('');
    await benchStores();
  }
  // What an app pays to install and import the package (issue 16; docs/packaging.md §Cost).
  const { packageCost } = await import('../scripts/package-cost.mjs');
  console.log('');
  packageCost();
}
