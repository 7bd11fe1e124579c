import type { PlannerTurnEvent } from '../run/run-events.ts';
import { planOutput } from './plan-output.ts';
import { plannerErrorOf } from './run-actions.ts';
import { type RunContext, turnId } from './run-context.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import { now } from './run-updates.ts';

/**
 * The `planner_turn` event of a planner turn that ended (`plan.done` or `plan.error`), the
 * model's side of the run (issue 38 item 5): what the planner was sent (the first `messages`
 * messages of the transcript, the `tools` advertised), what it answered (its result as the run
 * keeps it, or its error with causes), its tokens, its money (`cost`, docs/policies.md §Money), and when and how long (ms). A fork's recorded
 * replay marks the turns it did not ask for (`replayedFrom`: the parent's turn).
 *
 * Emitted before the turn's result is recorded, so `messages` counts the transcript as sent.
 */
export function plannerTurnEvent(context: RunContext, event: RunMachineEvent): PlannerTurnEvent {
  const turn: PlannerTurnEvent = {
    type: 'planner_turn',
    runId: context.runId,
    at: now(),
    turnId: turnId(context),
    kind: context.flow.finalize !== null ? 'finalize' : context.turn === 1 ? 'start' : 'resume',
    messages: context.messages.length,
  };
  if (event.type === 'plan.error') {
    turn.error = plannerErrorOf(event.error);
    return turn;
  }
  const output = planOutput(event);
  if (output.tools !== undefined) turn.tools = output.tools;
  if (output.timedOut) turn.timedOut = true;
  if (output.result !== undefined) turn.result = output.result;
  const usage = (output.result as { usage?: PlannerTurnEvent['usage'] } | undefined)?.usage;
  if (usage && typeof usage === 'object') turn.usage = usage;
  const cost = (output.result as { cost?: PlannerTurnEvent['cost'] } | undefined)?.cost;
  if (cost && typeof cost === 'object') turn.cost = cost;
  if (output.startedAt !== undefined) turn.startedAt = output.startedAt;
  if (output.durationMs !== undefined) turn.durationMs = output.durationMs;
  if (output.replayedFrom !== undefined) turn.replayedFrom = output.replayedFrom;
  return turn;
}
