/**
 * The tokens a run's planner turns report (`PlanResult.usage`) are summed in `outcome.usage`,
 * whatever the turn led to: tool calls, an answer while finalizing, a plan the run refuses. Each
 * `plan.done` transition records them in its own assign (machines/run-outcomes.ts `withUsage`).
 */
import { describe, expect, it } from 'vitest';
import type { PlanResult } from '../run/planner.ts';
import { echoTool, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Echo twice' }];
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

/** A planner that answers the given results in order, each with its usage. */
function scripted(results: PlanResult[]) {
  let turn = 0;
  const next = async (): Promise<PlanResult> => results[turn++] ?? { finalResponse: { text: 'done' } };
  return { planStart: next, planResume: next };
}

describe('a run’s token usage', () => {
  it('sums the usage of turns that call tools and of the final answer', async () => {
    const planner = scripted([
      { toolCalls: [{ name: 'util.echo', input: { text: 'a' } }], usage: usage(10, 1) },
      { toolCalls: [{ name: 'util.echo', input: { text: 'b' } }], usage: usage(20, 2) },
      { finalResponse: { text: 'done' }, usage: usage(40, 4) },
    ]);
    const outcome = await testRuntime({ planner, tools: [echoTool] })
      .start({ messages: prompt })
      .result();
    expect(outcome.status).toBe('completed');
    expect(outcome.usage).toEqual({ inputTokens: 70, outputTokens: 7, totalTokens: 77 });
  });

  it('counts a turn whose plan the run refuses (no tool calls, no answer)', async () => {
    const planner = scripted([
      { toolCalls: [{ name: 'util.echo', input: { text: 'a' } }], usage: usage(10, 1) },
      { usage: usage(5, 5) },
    ]);
    const outcome = await testRuntime({ planner, tools: [echoTool] })
      .start({ messages: prompt })
      .result();
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toContain('no tool calls, no await and no final response');
    expect(outcome.usage).toEqual({ inputTokens: 15, outputTokens: 6, totalTokens: 21 });
  });

  it('counts a turn once when its batch is refused and the run finalizes in the same step', async () => {
    const planner = scripted([
      // Refused by the tool boundary (no text): with no policies the run folds the refusal,
      // reaches the failure cap and finalizes, all on this turn's plan.done.
      { toolCalls: [{ name: 'util.echo', input: { text: 42 } }], usage: usage(10, 1) },
      { finalResponse: { text: 'stopped' }, usage: usage(3, 4) },
    ]);
    const runtime = testRuntime({
      planner,
      tools: [echoTool],
      policies: [],
      caps: { maxConsecutiveFailedToolCalls: 1 },
    });
    const outcome = await runtime.start({ messages: prompt }).result();
    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'failure_cap' });
    expect(outcome.usage).toEqual({ inputTokens: 13, outputTokens: 5, totalTokens: 18 });
  });

  it('counts the finalizing turn, and the turn that reached the token cap', async () => {
    const planner = scripted([
      { toolCalls: [{ name: 'util.echo', input: { text: 'a' } }], usage: usage(60, 50) },
      { finalResponse: { text: 'stopped' }, usage: usage(3, 4) },
    ]);
    const outcome = await testRuntime({ planner, tools: [echoTool], caps: { maxTotalTokens: 100 } })
      .start({ messages: prompt })
      .result();
    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'token_cap' });
    expect(outcome.usage).toEqual({ inputTokens: 63, outputTokens: 54, totalTokens: 117 });
  });
});
