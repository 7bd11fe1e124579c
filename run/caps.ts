import { z } from 'zod';
import { lazySchema } from '../tools/lazy-schema.ts';

/**
 * Run limits (docs/architecture.md). Configured per runtime and per run; policies may only tighten them.
 * `timeBudgetMs` is wall-clock milliseconds from the run's start, not counting the time the run
 * awaits answers from outside (a clarification, external tool results, a confirmation), and also
 * bounds a planner call in flight. Per-tool `timeoutMs` lives on the tool.
 */
export const CapsSchema = lazySchema(() =>
  z.object({
    /** Most tool calls a run may make; a batch that would pass it is refused whole. */
    maxToolCalls: z.number().int().nonnegative(),
    /** Failed calls in a row (across tools) before the run finalizes with `failure_cap`. */
    maxConsecutiveFailedToolCalls: z.number().int().positive(),
    /** Repairs of one tool in a row; a call past it is refused and the tool disabled for the run. */
    maxRetriesPerTool: z.number().int().nonnegative(),
    timeBudgetMs: z.number().positive(),
    /**
     * Most tokens (input + output, summed over the run's planner turns) the run may use; past it
     * the run finalizes with `token_cap` after the batch in flight. Absent: no limit.
     */
    maxTotalTokens: z.number().int().positive().optional(),
    /**
     * Most planner turns a run may take (the finalizing turn not counted); once a turn past it
     * would start, the run finalizes with `turn_cap` (issue 24: a planner that keeps asking, answered
     * from code, otherwise runs until the time budget, which waits do not spend). Absent: no limit
     * (runs stored before it existed); the runtime's default is 50.
     */
    maxTurns: z.number().int().positive().optional(),
    /**
     * Most times a run may wait for an answer from outside it (a clarification, external tool
     * results, a confirmation; not a backoff); after the answer to the last one the run finalizes
     * with `await_cap`. Absent: no limit; the runtime's default is 50.
     */
    maxAwaits: z.number().int().positive().optional(),
    /**
     * Most calls one planner answer may propose. A larger batch is refused whole before any of
     * its calls is validated: each call gets a not-run result (`BatchTooLarge`), the first one a
     * RetryHint telling the planner the limit, and the run plans again; it counts as one failed
     * turn against `maxConsecutiveFailedToolCalls`, not one per call (issue 36 item 5: a 4,000-call
     * answer stalled every run in the process). Absent: no limit (runs stored before it existed);
     * the runtime's default is 128.
     */
    maxCallsPerBatch: z.number().int().positive().optional(),
  }),
);
/** Run limits (docs/architecture.md §Caps): configured per runtime and per run; policies may only tighten them. */
export type Caps = z.infer<typeof CapsSchema>;

/** The runtime's caps when `createRuntime({ caps })` sets none (the ceilings a run's caps are clamped to). */
export const DEFAULT_CAPS: Caps = {
  maxToolCalls: 50,
  maxConsecutiveFailedToolCalls: 5,
  maxRetriesPerTool: 3,
  timeBudgetMs: 300_000,
  maxTurns: 50,
  maxAwaits: 50,
  maxCallsPerBatch: 128,
};

/** Caps as the planner and policies see them: limits, usage so far, and what is left. */
export const CapsStateSchema = lazySchema(() =>
  CapsSchema.extend({
    toolCalls: z.number().int().nonnegative(),
    remainingToolCalls: z.number().int().nonnegative(),
    consecutiveFailedToolCalls: z.number().int().nonnegative(),
    /** Epoch ms at which the time budget runs out. */
    deadlineAt: z.number(),
  }),
);
/** The caps in force and what is left of them, as planners and policies see it. */
export type CapsState = z.infer<typeof CapsStateSchema>;

/** Why a run went to `finalizing` (docs/architecture.md); a policy may name its own reason. */
export type FinalizeReason =
  | 'tool_cap'
  | 'failure_cap'
  | 'time_budget'
  | 'token_cap'
  | 'turn_cap'
  | 'await_cap'
  | 'budget_exhausted'
  | 'policy'
  | (string & {});

/** Merges caps by min, so a tightening can never loosen (docs/policies.md). */
export function tightenCaps(current: Caps, proposed: Partial<Caps> | undefined): Caps {
  if (!proposed) return current;
  const out = { ...current };
  // Proposed keys too: an absent cap (maxTotalTokens) is no limit, which any value tightens.
  for (const key of new Set([...Object.keys(current), ...Object.keys(proposed)]) as Set<keyof Caps>) {
    const value = proposed[key];
    if (
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value < (out[key] ?? Number.POSITIVE_INFINITY)
    ) {
      out[key] = value;
    }
  }
  return out;
}
