/** What the outcome box above the chart says of a run that failed, was canceled, capped or finalized. */
import type { RunOutcome } from '../inspection-store.ts';
import { turnNumber } from './event-data.ts';

/** Where it happened: `in planning, turn 2 (on plan.error)`, or `''` when the step is not known. */
export function outcomeWhere(outcome: RunOutcome): string {
  if (!outcome.step) return '';
  const turn = outcome.turnId ? `, turn ${turnNumber(outcome.turnId)}` : '';
  return `in ${outcome.step}${turn}${outcome.event ? ` (on ${outcome.event})` : ''}`;
}

/** The outcome's message, prefixed by how the run was finalized when a cap or a policy did it. */
export function outcomeMessage(outcome: RunOutcome): string {
  if (outcome.kind === 'capped') return `finalized early: ${outcome.message}`;
  if (outcome.kind === 'finalized') return `finalized by policy: ${outcome.message}`;
  return outcome.message;
}

/** The status the outcome's badge is coloured as. */
export function outcomeBadge(outcome: RunOutcome): string {
  return outcome.kind === 'failed' ? 'failed' : outcome.kind === 'canceled' ? 'canceled' : 'hint';
}
