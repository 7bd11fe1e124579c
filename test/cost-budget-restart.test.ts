/**
 * A run's own money budget survives a restart (docs/policies.md §Money): what it spent is in its
 * snapshot (`flow.cost`), so a new process that resumes it counts it, not zero.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { costBudget } from '../plugins/cost-budget.ts';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { echoTool, testRuntime } from './run-fixtures.ts';

const usage = { inputTokens: 1_000, outputTokens: 100 }; // 0.013 USD a turn at the prices below

/** Turn 1 calls the tool, turn 2 asks a person, every later turn calls the tool again. */
function askingPlanner(): Planner & { turns: string[] } {
  const turns: string[] = [];
  const turn = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    turns.push(input.turnId);
    if ('finalize' in input && input.finalize) return { finalResponse: { text: 'out of budget' }, usage };
    if (input.turnId.endsWith(':t2'))
      return {
        await: { clarification: { id: 'which', question: 'Which order?', missingFields: [] } },
        usage,
      };
    return { toolCalls: [{ name: 'util.echo', input: { text: input.turnId } }], usage };
  };
  return {
    planStart: turn,
    planResume: turn,
    model: { provider: 'acme', modelId: 'acme-1', maxOutputTokens: 100 },
    turns,
  };
}

const budget = () =>
  costBudget({
    limit: 0.06,
    currency: 'USD',
    prices: { 'acme-1': { inputPerMTok: 10, outputPerMTok: 30 } },
    estimate: () => 1_000,
  });

describe('costBudget across a restart', () => {
  let dir: string;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('counts what the run spent before the restart: the resumed run stops where the budget says', async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-cost-restart-'));
    const path = join(dir, 'runs.db');
    const before = askingPlanner();
    const first = testRuntime({
      planner: before,
      tools: [echoTool],
      policies: [],
      store: sqliteStore({ path }),
      plugins: [budget()],
    });
    const run = first.start({ runId: 'run-cost', messages: [{ role: 'user', content: 'Track it' }] });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'));
    await run.persisted();
    await first.close();
    expect(before.turns).toEqual(['run-cost:t1', 'run-cost:t2']); // 0.026 spent

    const after = askingPlanner();
    const second = testRuntime({
      planner: after,
      tools: [echoTool],
      policies: [],
      store: sqliteStore({ path }),
      plugins: [budget()],
    });
    const resumed = await second.resume('run-cost');
    await resumed.provideClarification({ id: 'which', answer: 'A-17' });
    const outcome = await resumed.result();
    // Turn 3 fits (0.026 + 0.013 + 0.016 reserve ≤ 0.06); turn 4 would not: finalize. Counted
    // from zero, three more tool turns would have run.
    expect(outcome.finalizeReason).toBe('budget_exhausted');
    expect(after.turns).toEqual(['run-cost:t3', 'run-cost:t4']);
    expect(outcome.cost).toEqual({ currency: 'USD', spent: 0.052, limit: 0.06 });
  });
});
