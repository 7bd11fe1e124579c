/**
 * A worker process for test/cost-ledger-processes.test.ts: runs `runs` runs at once under one
 * `costBudget` whose ledger (SQLite file or PostgreSQL schema) other workers share, each run a
 * planner that would call a tool forever and reports 500–1,000 input and 50–100 output tokens a
 * turn after a few ms. Prints one line `{"outcomes":[…]}` and exits 0.
 */
import { z } from 'zod';
import { createRuntime } from '../../create-runtime.ts';
import { costBudget } from '../../plugins/cost-budget.ts';
import type { CostLedger } from '../../policies/builtins/cost-ledger.ts';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { postgresCostLedger } from '../../stores/postgres-cost-ledger.ts';
import { sqliteCostLedger } from '../../stores/sqlite-cost-ledger.ts';
import { defineTool } from '../../tools/define-tool.ts';

export interface CostLedgerChildConfig {
  ledger: { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema: string };
  key: string;
  /** The shared budget, USD. */
  limit: number;
  runs: number;
  /**
   * When both processes start their runs (epoch ms): agreed by the parent, so a child that took
   * longer to load does not find the budget spent by the other (under load one began ~all of it late).
   */
  startAt: number;
}

export interface CostLedgerChildReport {
  outcomes: { status: string; finalizeReason?: string; spent: number; turns: number }[];
}

const config = JSON.parse(process.argv[2]!) as CostLedgerChildConfig;

const ledger: CostLedger =
  config.ledger.kind === 'sqlite'
    ? sqliteCostLedger({ path: config.ledger.path })
    : postgresCostLedger({ connectionString: config.ledger.url, schema: config.ledger.schema });

const lookup = defineTool({
  id: 'orders.lookup',
  description: 'Look up an order',
  input: z.object({ id: z.number() }),
  execute: async ({ id }) => ({ id, status: 'shipped' }),
});

const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));

function loopingPlanner(): Planner & { turns: number } {
  const planner = {
    turns: 0,
    model: { provider: 'acme', modelId: 'acme-1', maxOutputTokens: 100 },
    async planStart(input: PlanInput): Promise<PlanResult> {
      return planner.turn(input);
    },
    async planResume(input: PlanResumeInput): Promise<PlanResult> {
      return planner.turn(input);
    },
    async turn(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
      planner.turns++;
      // A model call takes a while: the runs of both processes interleave their turns.
      await new Promise((resolve) => setTimeout(resolve, between(1, 5)));
      const usage = { inputTokens: between(500, 1_000), outputTokens: between(50, 100) };
      if ('finalize' in input && input.finalize) return { finalResponse: { text: 'out of budget' }, usage };
      return { toolCalls: [{ name: 'orders.lookup', input: { id: planner.turns } }], usage };
    },
  };
  return planner;
}

const budget = costBudget({
  limit: config.limit,
  currency: 'USD',
  prices: { 'acme-1': { inputPerMTok: 10, outputPerMTok: 30 } },
  // The reported input never passes 1,000 tokens: the estimate bounds it, as a tokenizer would.
  estimate: () => 1_000,
  ledger: { store: ledger, key: config.key },
});

const planners = Array.from({ length: config.runs }, loopingPlanner);
await new Promise((resolve) => setTimeout(resolve, Math.max(0, config.startAt - Date.now())));
const outcomes = await Promise.all(
  planners.map(async (planner) => {
    const runtime = createRuntime({
      agent: { id: 'tenant-agent' },
      planner,
      tools: [lookup],
      policies: [],
      telemetry: false,
      caps: { maxToolCalls: 500, maxTurns: 500 },
      plugins: [budget],
    });
    const outcome = await runtime
      .start({ messages: [{ role: 'user', content: 'Track every order' }] })
      .result();
    await runtime.close();
    return {
      status: outcome.status,
      ...(outcome.finalizeReason === undefined ? {} : { finalizeReason: outcome.finalizeReason }),
      spent: outcome.cost?.spent ?? 0,
      turns: planner.turns,
    };
  }),
);
await ledger.close?.();
process.stdout.write(`${JSON.stringify({ outcomes } satisfies CostLedgerChildReport)}\n`);
