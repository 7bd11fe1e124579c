import {
  definePlugin,
  definePolicy,
  matchesTool,
  type Plugin,
  type Policy,
  type PolicyDecisionRecord,
  rateLimitBackoff,
  restrictOnInvalidArguments,
  type ToolSelector,
} from 'toolwarden';

/** What {@link writeGuard} takes. Every field has a default. */
export interface WriteGuardOptions {
  /** Which tools are "write" tools. Default: those tagged `write`. */
  tools?: ToolSelector;
  /** Repairs of bad arguments before a write tool is disabled. Default 2. */
  maxRetries?: number;
  /** Rate-limit waits: first wait, cap, waits in a row before the run finishes. */
  backoff?: { baseMs?: number; maxMs?: number; maxWaits?: number };
  /** Called with every decision the guard's policies take (an audit log, a metric). */
  onDecision?: (decision: PolicyDecisionRecord) => void;
}

/**
 * A policy written from scratch: a write tool whose response does not match its output schema
 * may have half-written something, so it is not retried — it is disabled for the rest of the run
 * and the planner is told why. The policy is stateless; the engine remembers that it disabled
 * the tool, and only this policy could enable it again.
 */
export function disableOnMalformedResponse(
  tools: ToolSelector,
  name = 'write-guard/malformed-response',
): Policy {
  return definePolicy({
    name,
    description: 'Disable a write tool after a malformed response',
    onRetryHint(hint, ctx) {
      if (hint.reason !== 'malformed_response') return;
      if (!matchesTool(tools, ctx.tool(hint.tool))) return;
      return {
        disableTools: [hint.tool],
        note: `${hint.tool} returned a malformed response; a write may have half-happened, so it is not retried`,
      };
    },
  });
}

/**
 * A guard for write tools, as one plugin:
 *
 * | the write tool…                        | the guard…                                            |
 * |----------------------------------------|-------------------------------------------------------|
 * | is called with invalid/missing arguments | restricts the next turn to it; after `maxRetries` repairs, disables it |
 * | returns a malformed response           | disables it at once (no retry of a write)             |
 * | is rate limited                        | waits (the tool's `retryAfterMs`, else exponential); after `maxWaits` waits, finishes the run |
 *
 * Read tools are left alone. Add it with `createRuntime({ ..., plugins: [writeGuard()] })`.
 */
export function writeGuard(options: WriteGuardOptions = {}): Plugin {
  const tools = options.tools ?? { tags: ['write'] };
  const names = ['write-guard/invalid-arguments', 'write-guard/malformed-response', 'write-guard/rate-limit'];
  return definePlugin({
    name: 'write-guard',
    policies: [
      restrictOnInvalidArguments({ maxRetries: options.maxRetries ?? 2, tools, name: names[0] }),
      disableOnMalformedResponse(tools, names[1]),
      rateLimitBackoff({ ...options.backoff, tools, onExhausted: 'finalize', name: names[2] }),
    ],
    onEvent(event) {
      if (event.type === 'policy_decision' && names.includes(event.decision.policy)) {
        options.onDecision?.(event.decision);
      }
    },
  });
}
