import { expect } from 'vitest';
import { z } from 'zod';
import { type Planner, type PlanResult, type PlanResumeInput, scriptedPlanner } from '../../run/planner.ts';
import type { RunEvent } from '../../run/run-events.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import type { CoreRuntime as Runtime } from '../../runtime/runtime-api.ts';
import type { RunEventRecord } from '../../stores/run-store.ts';
import { defineTool } from '../../tools/define-tool.ts';

/** A ledger tool that counts its executions: what a recorded replay must not add to. */
export function counterTool() {
  const executions: number[] = [];
  const tool = defineTool({
    id: 'ledger.add',
    description: 'Adds an amount to the ledger and returns the new balance',
    input: z.object({ amount: z.number().int() }),
    execute: async ({ amount }) => {
      executions.push(amount);
      return { balance: executions.reduce((sum, n) => sum + n, 0) };
    },
  });
  return { tool, executions };
}

export const turnOf = (input: { turnId: string }) => Number(/:t(\d+)$/.exec(input.turnId)![1]);

/**
 * A planner that adds `amountAt(turn)` on turns 1..20, then answers with the last balance it saw:
 * a function of its input, as a model is (no script position to advance).
 */
export function ledgerPlanner(
  amountAt: (turn: number) => number = (turn) => turn,
): Planner & { asked: number[] } {
  const asked: number[] = [];
  const next = async (input: { turnId: string } & Partial<PlanResumeInput>): Promise<PlanResult> => {
    const turn = turnOf(input);
    asked.push(turn);
    if (turn <= 20 && !input.finalize)
      return {
        toolCalls: [{ name: 'ledger.add', input: { amount: amountAt(turn) } }],
        usage: { inputTokens: 100 + turn, outputTokens: 10 },
      };
    const last = input.toolResults?.at(-1)?.result as { balance: number } | undefined;
    return {
      finalResponse: { text: `balance ${last?.balance}` },
      usage: { inputTokens: 150, outputTokens: 5 },
    };
  };
  return { asked, planStart: next, planResume: next };
}

/** The options of {@link twentyStepRun}'s runtime: the counting ledger tool and {@link ledgerPlanner}, forks on. */
export function ledgerRuntimeOptions() {
  const { tool, executions } = counterTool();
  const planner = ledgerPlanner();
  return {
    options: {
      agent: { id: 'ledger' },
      planner,
      tools: [tool],
      telemetry: false as const,
      forks: true,
      caps: { maxToolCalls: 100 },
    },
    planner,
    executions,
  };
}

/** A 20-step run `p` (adds 1..20, answers "balance 210") on a runtime with forks on. */
export async function twentyStepRun() {
  const { options, planner, executions } = ledgerRuntimeOptions();
  const runtime = createRuntime(options);
  return { runtime, planner, executions, ...(await runParent(runtime, executions)) };
}

/**
 * Runs `p` to its end in `runtime` (made with {@link ledgerRuntimeOptions}); the seqs of its events
 * to fork at: `scheduledAt(turn)`, its `tool_call_scheduled` of turn `turn`; `planningAt(turn)`,
 * its `state_changed` into `planning` of turn `turn` (the planner is asked then).
 */
export async function runParent(runtime: Pick<Runtime, 'start' | 'events'>, executions: number[]) {
  const parent = await runtime
    .start({ runId: 'p', messages: [{ role: 'user', content: 'add 1..20' }] })
    .result();
  expect(parent.finalResponse?.text).toBe('balance 210');
  expect(executions).toHaveLength(20);
  const events: RunEventRecord<RunEvent>[] = [];
  for await (const record of runtime.events('p', { follow: false })) events.push(record);
  const scheduledAt = (turn: number) =>
    events.find((r) => r.event.type === 'tool_call_scheduled' && r.event.toolCallId === `p:t${turn}:c1`)!.seq;
  const planningAt = (turn: number) => {
    const result = events.findIndex(
      (r) => r.event.type === 'tool_result' && r.event.result.toolCallId === `p:t${turn - 1}:c1`,
    );
    return events.slice(result).find((r) => r.event.type === 'state_changed' && r.event.state === 'planning')!
      .seq;
  };
  return { parent, scheduledAt, planningAt };
}

/**
 * Another scripted planner for a fork of {@link twentyStepRun}'s run at step 5 (its planning): step
 * 5 as the parent took it, then 600 instead of 6, then the parent's amounts 7..20, then an answer
 * with the balance it saw. compareRuns finds the first difference at step 6.
 */
export function divergingAtStep6() {
  return scriptedPlanner([
    {
      toolCalls: [{ name: 'ledger.add', input: { amount: 5 } }],
      usage: { inputTokens: 105, outputTokens: 10 },
    },
    {
      toolCalls: [{ name: 'ledger.add', input: { amount: 600 } }],
      usage: { inputTokens: 106, outputTokens: 10 },
    },
    ...Array.from({ length: 14 }, (_, i) => ({
      toolCalls: [{ name: 'ledger.add', input: { amount: i + 7 } }],
      usage: { inputTokens: 107 + i, outputTokens: 10 },
    })),
    (input) => ({
      finalResponse: {
        text: `balance ${(input as { toolResults: { result: { balance: number } }[] }).toolResults[0]!.result.balance}`,
      },
    }),
  ]);
}
