import { definePolicy, type Policy, type PolicyContext, type PolicyDecision } from '../define-policy.ts';

/** Options of {@link timeBudget}. */
export interface TimeBudgetOptions {
  /** Tightens the run's `timeBudgetMs` cap to this, in ms, when it starts. */
  maxMs?: number;
  /**
   * Finalize once less than this is left of the time budget, in ms, instead of starting work
   * that cannot finish: checked before each batch (the batch is then not run) and after it.
   * Default 0 (only `maxMs` applies).
   */
  finalizeWhenRemainingMs?: number;
  /** Default `time-budget`. */
  name?: string;
}

/**
 * Keeps a run inside its time (docs/policies.md §Built-in): `maxMs` tightens the `timeBudgetMs` cap when
 * the run starts (never above the configured one), and `finalizeWhenRemainingMs` finishes the
 * run with reason `time_budget` while there is still time for a final answer.
 *
 * ```ts
 * timeBudget({ maxMs: 60_000, finalizeWhenRemainingMs: 10_000 })
 * // a batch proposed 52 s into the run is not run: the planner is asked for its final answer
 * ```
 */
export function timeBudget(options: TimeBudgetOptions): Policy {
  const reserve = options.finalizeWhenRemainingMs ?? 0;
  const check = (ctx: PolicyContext): PolicyDecision | undefined => {
    if (reserve <= 0 || ctx.effects.finalize) return;
    const remaining = ctx.caps.deadlineAt - ctx.now();
    if (remaining >= reserve) return;
    return {
      finalize: { reason: 'time_budget' },
      note: `${Math.max(0, Math.round(remaining))} ms of the time budget left, less than ${reserve}`,
    };
  };
  return definePolicy({
    name: options.name ?? 'time-budget',
    description: 'Finalize before the time budget runs out',
    onRunStart: () => (options.maxMs !== undefined ? { caps: { timeBudgetMs: options.maxMs } } : undefined),
    onToolBatch: (_batch, ctx) => check(ctx),
    onToolResult: (_result, ctx) => check(ctx),
  });
}
