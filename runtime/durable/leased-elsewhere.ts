/**
 * The refusal of a claim (the store's RunLeasedError), said for the app as a RunConflictError
 * (docs/durability.md §Guarantees (leases)).
 *
 * @module
 */

import type { RunLeasedError } from '../../stores/run-store-errors.ts';
import { RunConflictError } from './durable-errors.ts';
import { ownerNameOf } from './owner-lease.ts';

/**
 * Another owner holds the run, or another live instance under this runtime's own owner name
 * (`owner`: two runtimes share `durable.owner`, or the last process under it crashed less than its
 * `leaseMs` ago). The error keeps the store's as its `cause`, with the holder's owner name,
 * instance and `leaseUntil` (epoch ms).
 */
export function leasedElsewhere(runId: string, error: RunLeasedError, owner: string): RunConflictError {
  const until = new Date(error.leaseUntil).toISOString();
  const name = ownerNameOf(error.owner);
  const details = { cause: error, owner: name, instance: error.owner, leaseUntil: error.leaseUntil };
  if (name === owner) {
    return new RunConflictError(
      runId,
      `another runtime instance under this owner name ("${owner}", instance ${error.owner}) holds this run, ` +
        `its lease live until ${until}: either two live runtimes share durable.owner (give each its own), ` +
        'or the previous process under this name crashed and its lease has not lapsed yet (recovery takes the run then)',
      details,
    );
  }
  return new RunConflictError(
    runId,
    `owner "${name}" (instance ${error.owner}) holds this run (lease live until ${until}); ` +
      'only it can advance the run: answer through it, or wait for its lease to run out',
    details,
  );
}
