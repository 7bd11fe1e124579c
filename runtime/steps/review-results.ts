import type { ReviewResultsInput, RunPort } from '../../machines/run-ports.ts';
import type { PolicyEffects } from '../../run/policy-effects.ts';
import type { RunDeps } from './run-deps.ts';

/**
 * The `reviewResults` port (docs/architecture.md `resuming`, when the runtime has policies): the results
 * folded and the hints produced since the policies were last consulted go through
 * `onToolResult` / `onRetryHint`; the merged effects decide whether the run plans again, waits,
 * finalizes or fails. Resuming from an answer reviews no results (they were reviewed already).
 */
export function createReviewResultsPort(deps: RunDeps): RunPort<ReviewResultsInput, PolicyEffects> {
  return async ({ input }) =>
    deps.policies.onResults(input.context, input.context.batch.newResults, input.context.batch.newHints);
}
