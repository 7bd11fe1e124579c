import type { z } from 'zod';

/**
 * A step budget for validating against a schema from outside (an MCP server's `inputSchema`,
 * issue 39 item 5). zod explores every branch of a union that fails and every side of an
 * intersection, so a ~1.3 KB `$defs` chain where each level is an `anyOf` of three references to
 * the level below costs 3^levels runs for one wrong-typed argument: 12 s at 18 levels, and at 25
 * it had not answered after 240 s at 4 GB. No size limit on the schema catches that (the chain is
 * small); a limit on the work of one parse does.
 *
 * | what | how |
 * |---|---|
 * | a step | one run of one zod node (`_zod.run`) during one parse |
 * | the budget of one parse | {@link BASE_VALIDATION_STEPS} + {@link STEPS_PER_SCHEMA_NODE} × the schema's zod nodes + {@link STEPS_PER_INPUT_VALUE} × the values in the input (objects, arrays and leaves, counted up to {@link MAX_COUNTED_VALUES}): linear in the schema as written and in what the model sent |
 * | past it | every further run fails at once with a `custom` issue whose `params` carry {@link STEP_BUDGET_ISSUE}; the parse unwinds with no further exploration |
 *
 * The budget rides on zod's parse context (one object per `safeParse`, copied with its symbol
 * keys where zod derives one), so any caller's parse is bounded, and {@link parseWithinBudget}
 * tells its caller that the budget ran out.
 *
 * @module
 */

/**
 * Steps every parse may take whatever its input: 20,000 failing union branches took 11–80 ms of
 * CPU on a loaded 2-core machine, so 5,000 keeps a refusal near 20 ms.
 */
export const BASE_VALIDATION_STEPS = 5_000;
/** Further steps per zod node of the schema: a wide object runs each of its properties once. */
export const STEPS_PER_SCHEMA_NODE = 2;
/** Further steps per value of the input: a legitimate schema runs a few nodes per value. */
export const STEPS_PER_INPUT_VALUE = 16;
/** Values of an input counted for its budget; a bigger input gets the budget of this many. */
export const MAX_COUNTED_VALUES = 1_000_000;
/** `params.toolwarden` of the issue a parse over budget reports. */
export const STEP_BUDGET_ISSUE = 'step_budget';

/** The state of one parse, on its zod context under {@link BUDGET}. */
export interface StepBudget {
  steps: number;
  limit: number;
  exhausted: boolean;
}

const BUDGET = Symbol('toolwarden.stepBudget');
type BudgetedContext = { [BUDGET]?: StepBudget };
type ZodInternals = {
  def: Record<string, unknown>;
  run: (payload: { value: unknown; issues: unknown[] }, ctx: BudgetedContext) => unknown;
  /** Steps a parse gets whatever its input (from the schema's size), once metered. */
  [BUDGET]?: number;
};

/**
 * Puts every node of `schema` (reached through its definition: shapes, options, elements,
 * wrapped and lazy schemas) under the step budget, in place, and returns it. Idempotent.
 */
export function withStepBudget<T extends z.ZodType>(schema: T): T {
  const seen = new Set<z.ZodType>();
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (!isSchema(node) || seen.has(node)) continue;
    seen.add(node);
    for (const [key, value] of Object.entries(node._zod.def)) {
      if (key === 'getter' && typeof value === 'function') pending.push(resolveLazy(value));
      else if (Array.isArray(value)) for (const item of value) pending.push(item);
      else if (key === 'shape' && value !== null && typeof value === 'object') {
        for (const item of Object.values(value)) pending.push(item);
      } else pending.push(value);
    }
  }
  const base = BASE_VALIDATION_STEPS + STEPS_PER_SCHEMA_NODE * seen.size;
  for (const node of seen) meter(node._zod as unknown as ZodInternals, base);
  return schema;
}

/**
 * `schema.safeParse(value)` under a fresh budget, and whether it ran out (then the issues say
 * nothing reliable about the input beyond "it does not match").
 */
export function parseWithinBudget<T extends z.ZodType>(
  schema: T,
  value: unknown,
): { parsed: ReturnType<T['safeParse']>; budget: StepBudget } {
  const base = (schema._zod as unknown as ZodInternals)[BUDGET] ?? BASE_VALIDATION_STEPS;
  const budget: StepBudget = { steps: 0, limit: budgetFor(value, base), exhausted: false };
  const context = { [BUDGET]: budget } as BudgetedContext;
  const parsed = schema.safeParse(value, context as never) as ReturnType<T['safeParse']>;
  return { parsed, budget };
}

/** The step limit of a parse of `value`: `base` (the schema's share) plus its values' share. */
export function budgetFor(value: unknown, base = BASE_VALIDATION_STEPS): number {
  return base + STEPS_PER_INPUT_VALUE * countValues(value);
}

function meter(internals: ZodInternals, base: number): void {
  if (internals[BUDGET] !== undefined) return;
  internals[BUDGET] = base;
  const run = internals.run;
  internals.run = (payload, ctx) => {
    // The first metered run of a parse without a budget is its root: it sizes the budget.
    ctx[BUDGET] ??= { steps: 0, limit: budgetFor(payload.value, base), exhausted: false };
    const budget = ctx[BUDGET];
    if (budget.exhausted || ++budget.steps > budget.limit) {
      budget.exhausted = true;
      payload.issues.push({
        code: 'custom',
        input: payload.value,
        path: [],
        message: `Validation stopped after ${budget.limit} steps: the schema is too complex to explain further`,
        params: { toolwarden: STEP_BUDGET_ISSUE },
      });
      return payload;
    }
    return run(payload, ctx);
  };
}

/** A lazy schema's target; one that cannot resolve yet is left unmetered (its parse fails anyway). */
function resolveLazy(getter: () => unknown): unknown {
  try {
    return getter();
  } catch {
    return undefined;
  }
}

function isSchema(value: unknown): value is z.ZodType {
  return (
    value !== null &&
    typeof value === 'object' &&
    '_zod' in value &&
    typeof (value as { _zod?: { run?: unknown } })._zod?.run === 'function'
  );
}

/** Objects, arrays and leaves of a JSON value, up to {@link MAX_COUNTED_VALUES}; iterative (an input may nest deep). */
function countValues(value: unknown): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && count < MAX_COUNTED_VALUES) {
    const next = pending.pop();
    count++;
    if (next === null || typeof next !== 'object') continue;
    // One by one: spreading a 500,000-item array into push() overflows the stack.
    for (const item of Array.isArray(next) ? next : Object.values(next)) pending.push(item);
  }
  return count;
}
