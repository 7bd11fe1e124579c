import type { RetryReason } from '../../tools/retry-hint.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import { definePolicy, type Policy, type PolicyDecision } from '../define-policy.ts';
import { matchesTool, type ToolSelector } from '../tool-selector.ts';

/** A failure kind the breaker counts: a retry reason, or `error` for a call that threw without a hint. */
export type BreakerReason = RetryReason | 'error';

/** Options of {@link circuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Counted failures in a row that open the breaker (disable the tool). Default 3. */
  failures?: number;
  /** Time the breaker stays open before a trial call, in ms. Default 30 000. */
  cooldownMs?: number;
  /** What counts as a failure. Default `timeout`, `malformed_response`, `tool_unavailable`, `error`. */
  reasons?: BreakerReason[];
  /** The tools it watches (ids or tags). Default: every tool. */
  tools?: ToolSelector;
  /** Default `circuit-breaker`. */
  name?: string;
}

/** One tool's breaker, persisted in the policy's state. `openedAt` is epoch ms. */
// A type alias, not an interface, so it is assignable to JsonValue (policy memory).
export type BreakerState = {
  state: 'closed' | 'open' | 'half_open';
  failures: number;
  openedAt?: number;
};

type Memory = Record<string, BreakerState>;
type Decision = { enableTools: string[]; disableTools: string[] };

const DEFAULT_REASONS: BreakerReason[] = ['timeout', 'malformed_response', 'tool_unavailable', 'error'];

/**
 * A circuit breaker per tool (docs/policies.md §Built-in): after `failures` counted failures in a row the
 * tool is disabled (open); once `cooldownMs` has passed it is re-enabled for a trial (half-open,
 * through `enableTools`, so only a tool this breaker disabled); a successful trial closes the
 * breaker, a failed one opens it again for another cooldown.
 *
 * Counted: results with an error whose reason (the hint's, or `error` when there is none) is in
 * `reasons` and that ran (`executed`), or that failed validation when `invalid_arguments` /
 * `missing_fields` are listed. Refusals (a disabled tool, a stopped batch) never count. The
 * cooldown is checked before each batch and after each result, so the tool is back in the first
 * batch or turn past the cooldown. If the planner calls it several times in its trial batch, all
 * those calls are the trial; the last result decides. State: each tool's {@link BreakerState},
 * so a restored run keeps its open breakers.
 *
 * ```ts
 * circuitBreaker({ failures: 3, cooldownMs: 60_000, tools: { ids: ['billing.*'] } })
 * ```
 */
export function circuitBreaker(options: CircuitBreakerOptions = {}): Policy {
  const threshold = options.failures ?? 3;
  const cooldownMs = options.cooldownMs ?? 30_000;
  const reasons = new Set<BreakerReason>(options.reasons ?? DEFAULT_REASONS);
  const counts = (result: ToolResult): boolean | undefined => {
    if (!result.error) return false;
    const reason: BreakerReason = result.retryHint?.reason ?? 'error';
    const validation = reason === 'invalid_arguments' || reason === 'missing_fields';
    if (!result.executed && !validation) return undefined; // a refusal: neither failure nor success
    return reasons.has(reason);
  };
  /** Opens to a trial every breaker whose cooldown is over (mutates `memory`). */
  const halfOpen = (memory: Memory, now: number, decision: Decision, notes: string[]) => {
    for (const [tool, breaker] of Object.entries(memory)) {
      if (breaker.state === 'open' && now >= (breaker.openedAt ?? 0) + cooldownMs) {
        memory[tool] = { ...breaker, state: 'half_open' };
        decision.enableTools.push(tool);
        notes.push(`${tool}: cooldown over, half-open (one trial)`);
      }
    }
  };
  const finish = (memory: Memory, decision: Decision, notes: string[]): PolicyDecision => {
    const out: PolicyDecision = { state: memory };
    if (decision.enableTools.length > 0) out.enableTools = decision.enableTools;
    if (decision.disableTools.length > 0) out.disableTools = decision.disableTools;
    if (notes.length > 0) out.note = notes.join('; ');
    return out;
  };
  return definePolicy({
    name: options.name ?? 'circuit-breaker',
    description: `Disable a tool after ${threshold} failures in a row; retry it after ${cooldownMs} ms`,
    onToolBatch(_batch, ctx) {
      const memory: Memory = structuredClone((ctx.state as Memory | undefined) ?? {});
      const decision: Decision = { enableTools: [], disableTools: [] };
      const notes: string[] = [];
      halfOpen(memory, ctx.now(), decision, notes);
      return decision.enableTools.length > 0 ? finish(memory, decision, notes) : undefined;
    },
    onToolResult(result, ctx) {
      const memory: Memory = structuredClone((ctx.state as Memory | undefined) ?? {});
      const decision: Decision = { enableTools: [], disableTools: [] };
      const notes: string[] = [];
      halfOpen(memory, ctx.now(), decision, notes);
      if (matchesTool(options.tools, ctx.tool(result.name))) {
        const tool = result.name;
        const breaker: BreakerState = memory[tool] ?? { state: 'closed', failures: 0 };
        const failed = counts(result);
        if (failed === true) {
          const failures = breaker.failures + 1;
          if (breaker.state === 'half_open' || (breaker.state === 'closed' && failures >= threshold)) {
            memory[tool] = { state: 'open', failures, openedAt: ctx.now() };
            decision.disableTools.push(tool);
            decision.enableTools = decision.enableTools.filter((id) => id !== tool);
            notes.push(
              breaker.state === 'half_open'
                ? `${tool}: trial failed, open again for ${cooldownMs} ms`
                : `${tool}: ${failures} failures in a row, open for ${cooldownMs} ms`,
            );
          } else if (breaker.state === 'closed') {
            memory[tool] = { ...breaker, failures };
          }
        } else if (failed === false && !result.error) {
          if (breaker.state === 'half_open') notes.push(`${tool}: trial succeeded, closed`);
          if (breaker.state !== 'open') delete memory[tool];
        }
      }
      return finish(memory, decision, notes);
    },
  });
}
