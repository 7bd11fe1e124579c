import { RateLimitedError, type Tool } from '../tools/index.ts';

/**
 * A copy of `tool` whose first execution fails the way the mistake model's `timeout_once` and
 * `rate_limited_once` say, and whose later executions run the tool's own `execute` (or, for a
 * tool without one, such as a BFCL doc, return `{ ok: true }`).
 *
 * | fault          | first execution                                   | boundary reports |
 * |----------------|---------------------------------------------------|------------------|
 * | `timeout`      | waits until the call's signal aborts (`timeoutMs`) | `timeout`        |
 * | `rate_limited` | throws `RateLimitedError` with `retryAfterMs`      | `rate_limited`   |
 */
export function withFaultOnce(
  tool: Tool,
  fault: 'timeout' | 'rate_limited',
  options: { retryAfterMs?: number; timeoutMs?: number } = {},
): Tool {
  let calls = 0;
  const execute: NonNullable<Tool['execute']> = async (input, ctx) => {
    calls++;
    if (calls === 1) {
      if (fault === 'rate_limited') {
        throw new RateLimitedError(`${tool.id} allows fewer calls per minute`, {
          retryAfterMs: options.retryAfterMs ?? 1_000,
        });
      }
      return new Promise<never>((_, reject) => {
        const stop = () => reject(ctx.signal.reason);
        if (ctx.signal.aborted) stop();
        else ctx.signal.addEventListener('abort', stop, { once: true });
      });
    }
    return tool.execute ? tool.execute(input, ctx) : { ok: true };
  };
  return { ...tool, execute, timeoutMs: options.timeoutMs ?? tool.timeoutMs };
}
