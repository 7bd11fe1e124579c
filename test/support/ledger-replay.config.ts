import { definePolicy } from '../../policies/define-policy.ts';
import { counterTool, ledgerPlanner } from './ledger-runs.ts';

/** A replay config (`toolwarden eval --against … --config`): the ledger's tools, its planner, a new policy. */
const { tool, executions } = counterTool();

export { executions };
export default {
  tools: [tool],
  planner: ledgerPlanner(),
  policies: [
    definePolicy({
      name: 'stop-at-five',
      onToolResult: (_result, ctx) =>
        ctx.caps.toolCalls >= 5 ? { finalize: { reason: 'five calls' } } : undefined,
    }),
  ],
};
