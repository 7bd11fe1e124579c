import type { ReviewResultsInput, RunPort } from '../../machines/run-ports.ts';
import { deadlineAt } from '../../machines/run-updates.ts';
import type { PolicyEffects } from '../../run/policy-effects.ts';
import type { RunDeps } from './run-deps.ts';
import { OUT_OF_BUDGET_EFFECTS, withinBudget } from './within-budget.ts';

/**
 * The `reviewResults` port (docs/architecture.md `resuming`, when the runtime has policies): the results
 * folded and the hints produced since the policies were last consulted go through
 * `onToolResult` / `onRetryHint`; the merged effects decide whether the run plans again, waits,
 * finalizes or fails. Resuming from an answer reviews no results (they were reviewed already).
 * Bounded by the run's time budget: past it, the review is `finalize: time_budget`.
 */
export function createReviewResultsPort(deps: RunDeps): RunPort<ReviewResultsInput, PolicyEffects> {
  return ({ input }) =>
    // A hook that never settles holds the run no longer than its time budget (issue 24 item 6).
    withinBudget(
      deps.policies.onResults(input.context, input.context.batch.newResults, input.context.batch.newHints),
      deadlineAt(input.context),
      undefined,
      () => OUT_OF_BUDGET_EFFECTS,
    );
}
