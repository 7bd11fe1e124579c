import { definePolicy, type Policy } from '../define-policy.ts';
import { matchesTool, type ToolSelector } from '../tool-selector.ts';

/** Options of {@link rateLimitBackoff}. */
export interface RateLimitBackoffOptions {
  /** The first wait when the tool gives no `retryAfterMs`, in ms; doubled on each wait. Default 1 000. */
  baseMs?: number;
  /** The longest single wait accepted, in ms. Default 30 000. */
  maxMs?: number;
  /** Waits in a row per tool before giving up. Default 3. */
  maxWaits?: number;
  /** When giving up: finalize the run (default, reason `rate_limited`) or disable the tool. */
  onExhausted?: 'finalize' | 'disable';
  /** The tools it watches (ids or tags). Default: every tool. */
  tools?: ToolSelector;
  /** Default `rate-limit-backoff`. */
  name?: string;
}

type Memory = Record<string, number>;

/**
 * Waits before the next planner turn when a tool is rate limited (docs/policies.md §Built-in). The wait
 * is the hint's `retryAfterMs` when the tool said it, else exponential: `baseMs`, `2·baseMs`,
 * `4·baseMs`, … capped at `maxMs`. The run waits in `awaiting.backoff` (a stored deadline, so a
 * restored run waits only for what is left).
 *
 * It gives up — finalizes with reason `rate_limited`, or disables the tool — on the
 * `maxWaits + 1`-th rate limit in a row, or when the tool asks for a wait longer than `maxMs`
 * (waiting less would only be refused again). A successful call resets the tool's count. State:
 * rate limits in a row, per tool.
 *
 * ```ts
 * rateLimitBackoff({ baseMs: 500, maxMs: 10_000, maxWaits: 4, onExhausted: 'disable' })
 * // 429 without Retry-After: wait 500, 1000, 2000, 4000 ms; the fifth disables the tool
 * ```
 */
export function rateLimitBackoff(options: RateLimitBackoffOptions = {}): Policy {
  const baseMs = options.baseMs ?? 1_000;
  const maxMs = options.maxMs ?? 30_000;
  const maxWaits = options.maxWaits ?? 3;
  return definePolicy({
    name: options.name ?? 'rate-limit-backoff',
    description: `Back off on rate limits (${baseMs} ms doubling, at most ${maxMs} ms, ${maxWaits} waits)`,
    onRetryHint(hint, ctx) {
      if (hint.reason !== 'rate_limited' || !matchesTool(options.tools, ctx.tool(hint.tool))) return;
      const memory: Memory = { ...((ctx.state as Memory | undefined) ?? {}) };
      const waits = (memory[hint.tool] ?? 0) + 1;
      memory[hint.tool] = waits;
      const tooLong = hint.retryAfterMs !== undefined && hint.retryAfterMs > maxMs;
      if (waits > maxWaits || tooLong) {
        const why = tooLong
          ? `${hint.tool} asks to wait ${hint.retryAfterMs} ms, more than ${maxMs}`
          : `${hint.tool} rate limited ${waits} times in a row`;
        return options.onExhausted === 'disable'
          ? { disableTools: [hint.tool], note: `${why}: disabled`, state: memory }
          : { finalize: { reason: 'rate_limited' }, note: `${why}: finalizing`, state: memory };
      }
      const backoffMs = hint.retryAfterMs ?? Math.min(maxMs, baseMs * 2 ** (waits - 1));
      return {
        backoffMs,
        note: `${hint.tool} rate limited: wait ${backoffMs} ms (${waits} of ${maxWaits}${hint.retryAfterMs !== undefined ? ', as the tool asked' : ''})`,
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
