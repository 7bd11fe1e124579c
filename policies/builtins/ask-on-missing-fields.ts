import type { RetryReason } from '../../tools/retry-hint.ts';
import { definePolicy, type Policy } from '../define-policy.ts';
import { matchesTool, type ToolSelector } from '../tool-selector.ts';

/** Options of {@link askOnMissingFields}. */
export interface AskOnMissingFieldsOptions {
  /** Questions per tool per run; after that the planner is left to repair on its own. Default 2. */
  maxAsks?: number;
  /** Reasons that trigger a question. Default `missing_fields`. */
  reasons?: RetryReason[];
  /** The tools it watches (ids or tags). Default: every tool. */
  tools?: ToolSelector;
  /** Default `ask-on-missing-fields`. */
  name?: string;
}

type Memory = Record<string, number>;

/**
 * Asks a person for required fields the model left out (docs/policies.md §Built-in; Goa-AI's
 * "Strategy 1: Ask the user for clarification"). On a `missing_fields` hint the run waits in
 * `awaiting.clarification` with the hint's clarifyingQuestion, missingFields and exampleInput,
 * and the turn after the answer is restricted to the tool. At most `maxAsks` questions per tool.
 * State: questions asked, per tool.
 *
 * ```ts
 * askOnMissingFields({ tools: { ids: ['crm.upsert_profile'] } })
 * // → await_clarification "I need more information to run crm.upsert_profile. Please provide: email (…)"
 * ```
 */
export function askOnMissingFields(options: AskOnMissingFieldsOptions = {}): Policy {
  const maxAsks = options.maxAsks ?? 2;
  const reasons = new Set<RetryReason>(options.reasons ?? ['missing_fields']);
  return definePolicy({
    name: options.name ?? 'ask-on-missing-fields',
    description: 'Ask a person for missing required fields',
    onRetryHint(hint, ctx) {
      if (!reasons.has(hint.reason) || !matchesTool(options.tools, ctx.tool(hint.tool))) return;
      const memory: Memory = { ...((ctx.state as Memory | undefined) ?? {}) };
      const asked = memory[hint.tool] ?? 0;
      if (asked >= maxAsks) return;
      memory[hint.tool] = asked + 1;
      return {
        awaitClarification: true,
        restrictToTool: hint.tool,
        note: `${hint.tool}: missing ${hint.missingFields.join(', ') || 'fields'}; asking (${asked + 1} of ${maxAsks})`,
        state: memory,
      };
    },
  });
}
