/**
 * A claim the database refused (the SQLite and PostgreSQL stores' `RunStore.claim`): the claiming
 * `UPDATE` matched no row, and the run as read right after says why (docs/durability.md §Guarantees).
 *
 * | the run as read after the refusal                  | the claim                               |
 * |----------------------------------------------------|-----------------------------------------|
 * | absent                                             | RunNotFoundError                        |
 * | finished (`completed`, `failed`, `canceled`)       | returns it as it is                     |
 * | held by an owner whose lease is live               | RunLeasedError (owner, lease end)       |
 * | free now (the lease ran out, or it was released, between the `UPDATE` and the read) | tried again, up to 3 attempts; then RunLeasedError (lease end `now` when it has no owner) |
 *
 * @module
 */

import type { StoredRun } from './run-store.ts';
import { RunLeasedError, RunNotFoundError } from './run-store-errors.ts';
import { FINISHED_STATUSES } from './run-store-input.ts';

/** Attempts of a claim whose refusal the read after it does not explain. */
const CLAIM_ATTEMPTS = 3;

/**
 * What the refused claim's `attempt` (0-based) ends with: the finished run to return, or
 * `undefined` to try the claim again.
 *
 * @param run the run as read after the refusal; `leaseUntil` its owner's lease end, epoch ms
 *   (`NaN` when it has no owner); `now` the clock after the read.
 * @throws RunNotFoundError, RunLeasedError as the table above says.
 */
export function refusedClaim(
  runId: string,
  run: StoredRun | undefined,
  leaseUntil: number,
  attempt: number,
  now: number,
): StoredRun | undefined {
  if (run === undefined) throw new RunNotFoundError(runId);
  if (FINISHED_STATUSES.includes(run.status)) return run;
  if ((run.owner !== undefined && leaseUntil > now) || attempt + 1 >= CLAIM_ATTEMPTS) {
    // A run with no owner has no lease end (`NaN`): the error says `now` (its message prints the date).
    throw new RunLeasedError(runId, run.owner ?? '(unknown)', Number.isNaN(leaseUntil) ? now : leaseUntil);
  }
  return undefined;
}
