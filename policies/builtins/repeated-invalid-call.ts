import type { RetryReason } from '../../tools/retry-hint.ts';
import { callFingerprint } from '../call-fingerprint.ts';
import { definePolicy, type Policy } from '../define-policy.ts';
import { matchesTool, type ToolSelector } from '../tool-selector.ts';

/** Options of {@link repeatedInvalidCall}. */
export interface RepeatedInvalidCallOptions {
  /** The refusal of the same call (tool and input) that escalates. Default 2 (the first repeat). */
  after?: number;
  /**
   * What the refusal after the restriction does: ask a person (`ask`: the run waits in
   * `awaiting.clarification`, question from the hint) or finalize (`finalize`, reason
   * `repeated_invalid_call`). Default `finalize`: on by default, it must not leave a run waiting
   * in an app that answers nobody.
   */
  escalate?: 'ask' | 'finalize';
  /** Reasons that count as a refusal. Default `invalid_arguments`, `missing_fields`, `tool_unavailable`. */
  reasons?: RetryReason[];
  /** The tools it watches (ids or tags). Default: every tool. */
  tools?: ToolSelector;
  /** Default `repeated-invalid-call`. */
  name?: string;
}

/** Fingerprint → refusals of that call so far; the most recent last, at most {@link REMEMBERED}. */
type Memory = Record<string, number>;

/** Distinct refused calls remembered per run (the oldest forgotten first). */
const REMEMBERED = 64;

/**
 * Escalates a call refused again unchanged (issue 24 item 5; docs/policies.md §Built-in): a planner
 * that repeats an identical refused call (same tool, same input: {@link callFingerprint}) would
 * otherwise get the same hint every turn until a cap.
 *
 * | refusals of the same call | decision                                                      |
 * |---------------------------|---------------------------------------------------------------|
 * | 1 … `after` − 1           | none (the hint is the planner's to act on)                    |
 * | `after` (default 2)       | `restrictToTool`: the next turn sees only that tool; the hint it reads carries the tool's example (`exampleInput`) |
 * | `after` + 1 and on        | `escalate`: ask a person (`awaitClarification`) or `finalize` (`repeated_invalid_call`) |
 *
 * A refused call of an unknown or disabled tool (`tool_unavailable`) has nothing to restrict to:
 * its `after`-th refusal goes straight to `escalate`. Every decision carries the call's
 * `fingerprint` (on the `policy_decision` event and its span event). In `defaultPolicies()`.
 * State: refusals per fingerprint.
 */
export function repeatedInvalidCall(options: RepeatedInvalidCallOptions = {}): Policy {
  const after = Math.max(1, options.after ?? 2);
  const escalate = options.escalate ?? 'finalize';
  const reasons = new Set<RetryReason>(
    options.reasons ?? ['invalid_arguments', 'missing_fields', 'tool_unavailable'],
  );
  return definePolicy({
    name: options.name ?? 'repeated-invalid-call',
    description: `Escalate the ${after}th identical refused call: restrict to its tool, then ${escalate}`,
    onRetryHint(hint, ctx) {
      if (!reasons.has(hint.reason) || !matchesTool(options.tools, ctx.tool(hint.tool))) return;
      const fingerprint = callFingerprint(hint.tool, hint.priorInput);
      const memory: Memory = { ...((ctx.state as Memory | undefined) ?? {}) };
      const count = (memory[fingerprint] ?? 0) + 1;
      delete memory[fingerprint];
      memory[fingerprint] = count;
      const keys = Object.keys(memory);
      for (const key of keys.slice(0, Math.max(0, keys.length - REMEMBERED))) delete memory[key];
      if (count < after) return { state: memory };
      const same = `${hint.tool}: the same call refused ${count} times (${hint.reason}, fingerprint ${fingerprint})`;
      const restrictable = hint.reason !== 'tool_unavailable' && ctx.tool(hint.tool).enabled;
      if (count === after && restrictable) {
        const example = hint.exampleInput ? `; example ${clipJson(hint.exampleInput)}` : '';
        return {
          restrictToTool: hint.tool,
          fingerprint,
          note: `${same}; next turn restricted to it${example}`,
          state: memory,
        };
      }
      return escalate === 'ask'
        ? { awaitClarification: true, fingerprint, note: `${same}; asking a person`, state: memory }
        : {
            finalize: { reason: 'repeated_invalid_call' },
            fingerprint,
            note: `${same}; finalizing`,
            state: memory,
          };
    },
  });
}

function clipJson(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
