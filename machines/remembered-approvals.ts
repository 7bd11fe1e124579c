/**
 * Remembered approvals in the run's context (docs/policies.md §Sticky approvals): recorded by a
 * `confirm` with `remember`, revoked by `approval.revoke`. Which calls an approval covers is the
 * runtime's check at validation (runtime/steps/remembered-approvals.ts, which fingerprints
 * inputs); here they are only kept, in `flow.approvals`, so every persisted snapshot holds them.
 *
 * @module
 */

import type { RunEvent } from '../run/run-events.ts';
import { MAX_REMEMBERED_APPROVALS, type RememberedApproval, type RunContext } from './run-context.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import { now, withFlow } from './run-updates.ts';

/** What two approvals cover the same calls by: scope, tool and (for `arguments`) the fingerprint. */
export function approvalKey(approval: Pick<RememberedApproval, 'scope' | 'tool' | 'fingerprint'>): string {
  return `${approval.scope}\u0000${approval.tool}\u0000${approval.fingerprint ?? ''}`;
}

/**
 * The run's approvals with `added` recorded: one covering the same calls is replaced (the newest
 * answer wins), and past {@link MAX_REMEMBERED_APPROVALS} the oldest are forgotten (their calls
 * ask again: forgetting fails closed).
 */
export function withRemembered(
  existing: readonly RememberedApproval[] | undefined,
  added: readonly RememberedApproval[],
): RememberedApproval[] {
  const keys = new Set(added.map(approvalKey));
  const kept = (existing ?? []).filter((approval) => !keys.has(approvalKey(approval)));
  return [...kept, ...added].slice(-MAX_REMEMBERED_APPROVALS);
}

/** The approvals a `confirm` event carries to record: a list the run handle built, else none. */
export function rememberedOf(event: RunMachineEvent): RememberedApproval[] {
  return event.type === 'confirm' && event.approved && Array.isArray(event.remember) ? event.remember : [];
}

/** The `approval_remembered` event of a `confirm` that remembered (or was asked to and could not). */
export function approvalRememberedEvent(context: RunContext, event: RunMachineEvent): RunEvent | undefined {
  if (event.type !== 'confirm' || !event.approved) return undefined;
  const approvals = rememberedOf(event);
  const notRemembered = Array.isArray(event.notRemembered) ? event.notRemembered : [];
  if (approvals.length === 0 && notRemembered.length === 0) return undefined;
  return {
    type: 'approval_remembered',
    runId: context.runId,
    at: now(),
    confirmationId: event.id,
    approvals,
    ...(notRemembered.length === 0 ? {} : { notRemembered }),
  };
}

/** `revokeApproval`: the approval forgotten and an `approval_revoked` event; an unknown id changes nothing. */
export function revokeApprovalOutcome(
  context: RunContext,
  event: RunMachineEvent,
): { update?: Partial<RunContext>; events: RunEvent[] } {
  if (event.type !== 'approval.revoke') return { events: [] };
  const approvals = context.flow.approvals ?? [];
  const revoked = approvals.find((approval) => approval.id === event.approvalId);
  if (revoked === undefined) return { events: [] };
  return {
    update: withFlow(context, { approvals: approvals.filter((approval) => approval !== revoked) }),
    events: [
      {
        type: 'approval_revoked',
        runId: context.runId,
        at: now(),
        approvalId: revoked.id,
        tool: revoked.tool,
        scope: revoked.scope,
        ...(event.by === undefined ? {} : { by: event.by }),
      },
    ],
  };
}
