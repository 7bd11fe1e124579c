import type { PolicyEffects } from '../../run/policy-effects.ts';
import { waitUntil } from '../../run/wait-until.ts';

/** What a policy consultation the time budget cut short amounts to: finalize with `time_budget`. */
export const OUT_OF_BUDGET_EFFECTS: PolicyEffects = Object.freeze({
  decisions: [],
  finalize: Object.freeze({ reason: 'time_budget' }),
}) as PolicyEffects;

/** The error a step in flight is aborted with when the run's time budget runs out. */
export class TimeBudgetExhaustedError extends Error {
  override readonly name = 'TimeBudgetExhaustedError';
  constructor(readonly deadlineAt: number) {
    super('The run’s time budget ran out while this step was in flight');
  }
}

/**
 * `work`, bounded by the run's time budget (issue 24 item 6: the budget bounds everything in
 * flight). Settles with `work`'s outcome, or, once the clock reaches `deadlineAt` (epoch ms), with
 * `onBudget()` and `controller` aborted with a {@link TimeBudgetExhaustedError}: what the work
 * holds (a tool's signal, a hook's) is told to stop; a hook that ignores it runs on in the
 * background, its outcome dropped. The timer is cleared when `work` settles first.
 */
export function withinBudget<T>(
  work: PromiseLike<T> | T,
  deadlineAt: number,
  controller: AbortController | undefined,
  onBudget: () => T,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let stop = () => {};
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      stop();
      done();
    };
    stop = waitUntil(deadlineAt, () =>
      settle(() => {
        controller?.abort(new TimeBudgetExhaustedError(deadlineAt));
        resolve(onBudget());
      }),
    );
    if (settled) return;
    Promise.resolve(work).then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}
