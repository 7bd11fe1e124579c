import type { DoneActorEvent } from 'xstate';
import { type ParsedPlanResult, PlanResultSchema } from '../run/planner.ts';
import type { PlanActorOutput } from './run-ports.ts';

/**
 * The planner's result as the run machine's guards and actions read it from a `done` event of
 * the `plan` actor: parsed once per output (docs/planners.md §Contract).
 *
 * @module
 */

export function planOutput(event: unknown): PlanActorOutput {
  return (event as DoneActorEvent<PlanActorOutput>).output;
}

/**
 * Parses of plan outputs, by output object: the guards and actions of one `onDone` all read one
 * parse instead of re-running the schema (up to nine times per turn).
 */
const parsedPlans = new WeakMap<object, { plan?: ParsedPlanResult; error?: string }>();

export function planParse(event: unknown): { plan?: ParsedPlanResult; error?: string } {
  const output = planOutput(event);
  let entry = parsedPlans.get(output);
  if (!entry) {
    try {
      const parsed = PlanResultSchema.safeParse(output.result ?? {});
      entry = parsed.success ? { plan: parsed.data } : { error: parsed.error.message };
    } catch (err) {
      // A hostile result (a throwing getter, a proxy) is an invalid plan, not a crashed actor.
      entry = { error: err instanceof Error ? err.message : String(err) };
    }
    parsedPlans.set(output, entry);
  }
  return entry;
}

export function parsedPlan(event: unknown): ParsedPlanResult | undefined {
  return planParse(event).plan;
}

/** The plan of an `onDone` whose guard already matched it. */
export function planOf(event: unknown): ParsedPlanResult {
  return parsedPlan(event)!;
}

export function doneOutput<T>(event: unknown): T {
  return (event as DoneActorEvent<T>).output;
}
