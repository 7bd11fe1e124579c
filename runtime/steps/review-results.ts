import { inDoubtCallsToReview } from '../../machines/in-doubt-outcomes.ts';
import type { ReviewResultsInput, RunPort } from '../../machines/run-ports.ts';
import { deadlineAt } from '../../machines/run-updates.ts';
import { NO_EFFECTS, type PolicyEffects } from '../../run/policy-effects.ts';
import type { RunDeps } from './run-deps.ts';
import { OUT_OF_BUDGET_EFFECTS, withinBudget } from './within-budget.ts';

/**
 * The `reviewResults` port (docs/architecture.md `resuming`, when the runtime has policies): the results
 * folded and the hints produced since the policies were last consulted go through
 * `onToolResult` / `onRetryHint`; the merged effects decide whether the run plans again, waits,
 * finalizes or fails. Resuming from an answer reviews no results (they were reviewed already).
 * Requested in `settling` (calls of the batch in doubt no policy decided on yet), it asks
 * `onInDoubt` instead (docs/durability.md §Effects): told by the context, not the request, so an
 * engine that passes the context on (Temporal's activity) asks the same hook.
 * Bounded by the run's time budget: past it, the review is `finalize: time_budget`.
 */
export function createReviewResultsPort(deps: RunDeps): RunPort<ReviewResultsInput, PolicyEffects> {
  return ({ input }) => {
    const { context } = input;
    const inDoubt = inDoubtCallsToReview(context);
    const work =
      inDoubt.length > 0
        ? (deps.policies.onInDoubt?.(context, inDoubt) ?? NO_EFFECTS)
        : deps.policies.onResults(context, context.batch.newResults, context.batch.newHints);
    // A hook that never settles holds the run no longer than its time budget (issue 24 item 6).
    return withinBudget(work, deadlineAt(context), undefined, () => OUT_OF_BUDGET_EFFECTS);
  };
}
