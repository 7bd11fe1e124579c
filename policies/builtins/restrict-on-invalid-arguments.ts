import type { RetryReason } from '../../tools/retry-hint.ts';
import { definePolicy, type Policy } from '../define-policy.ts';
import { matchesTool, type ToolSelector } from '../tool-selector.ts';

/** Options of {@link restrictOnInvalidArguments}. */
export interface RestrictOnInvalidArgumentsOptions {
  /** Repairs allowed after the first bad call; the call after that disables the tool. Default 2. */
  maxRetries?: number;
  /** Bad calls in a row before the next turn is restricted to the tool. Default 1 (at once). */
  restrictAfter?: number;
  /** When the repairs are spent: disable the tool (default) or finalize the run. */
  onExhausted?: 'disable' | 'finalize';
  /** Reasons that count as a bad call. Default `invalid_arguments`, `missing_fields`. */
  reasons?: RetryReason[];
  /** The tools it watches (ids or tags). Default: every tool. */
  tools?: ToolSelector;
  /** Default `restrict-on-invalid-arguments`. */
  name?: string;
}

type Memory = Record<string, number>;

/**
 * Keeps the planner on a tool it called with bad arguments, and stops it after `maxRetries`
 * failed repairs (docs/policies.md §Built-in; Goa-AI's `restrictToTool` hint made a policy, docs/sources.md §Retry hints).
 *
 * For each `invalid_arguments` / `missing_fields` hint of a watched tool, in a row: from the
 * `restrictAfter`-th on, the next turn sees only that tool; the bad call after `maxRetries`
 * repairs disables it for the run (or finalizes with reason `invalid_arguments`). A successful
 * call of the tool resets its count. State: bad calls in a row, per tool.
 *
 * ```ts
 * createRuntime({ ..., policies: [restrictOnInvalidArguments({ maxRetries: 2, tools: { tags: ['write'] } })] });
 * // bad call 1 → restrict to crm.upsert_profile; 2 → restrict; 3 → disable crm.upsert_profile
 * ```
 */
export function restrictOnInvalidArguments(options: RestrictOnInvalidArgumentsOptions = {}): Policy {
  const maxRetries = options.maxRetries ?? 2;
  const restrictAfter = options.restrictAfter ?? 1;
  const reasons = new Set<RetryReason>(options.reasons ?? ['invalid_arguments', 'missing_fields']);
  return definePolicy({
    name: options.name ?? 'restrict-on-invalid-arguments',
    description: `Restrict the next turn to a tool called with bad arguments; after ${maxRetries} repairs, ${options.onExhausted ?? 'disable'}`,
    onRetryHint(hint, ctx) {
      if (!reasons.has(hint.reason) || !matchesTool(options.tools, ctx.tool(hint.tool))) return;
      const memory: Memory = { ...((ctx.state as Memory | undefined) ?? {}) };
      const count = (memory[hint.tool] ?? 0) + 1;
      memory[hint.tool] = count;
      if (count > maxRetries) {
        const note = `${hint.tool}: ${count} bad calls in a row (${hint.reason}), ${maxRetries} repairs spent`;
        return options.onExhausted === 'finalize'
          ? { finalize: { reason: 'invalid_arguments' }, note, state: memory }
          : { disableTools: [hint.tool], note: `${note}: disabled`, state: memory };
      }
      if (count < restrictAfter) return { state: memory };
      return {
        restrictToTool: hint.tool,
        note: `${hint.tool}: bad call ${count} (${hint.reason}); next turn restricted to it (repair ${count} of ${maxRetries})`,
        state: memory,
      };
    },
    onToolResult(result, ctx) {
      const memory = ctx.state as Memory | undefined;
      if (result.error || !memory?.[result.name]) return;
      const { [result.name]: _reset, ...rest } = memory;
      return { state: rest };
    },
  });
}
