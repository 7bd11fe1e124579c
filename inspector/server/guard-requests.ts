import type { MiddlewareHandler } from 'hono';
import { isLoopbackHost, tokenMatches } from '../request-guard.ts';

/**
 * The checks every request passes first: a loopback `Host` (else 421, which defeats DNS
 * rebinding) and `?token=` equal to the server's (else 403); then the headers every answer
 * carries (no caching, no sniffing, no framing, no referrer, same-origin resources only).
 */
export function guardRequests(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (!isLoopbackHost(c.req.header('host'))) {
      return c.text('Misdirected Request: the inspector answers to 127.0.0.1 and localhost only\n', 421);
    }
    if (!tokenMatches(c.req.query('token'), token)) {
      return c.text('Forbidden: the inspector URL carries a token; use the URL it printed\n', 403);
    }
    await next();
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
    c.header('X-Frame-Options', 'DENY');
  };
}
