import { timingSafeEqual } from 'node:crypto';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a `Host` header names this machine's loopback interface (`127.0.0.1:4321`,
 * `localhost:4321`, `[::1]:4321`). Anything else — a DNS-rebinding page's own host name, a
 * LAN address — is refused with 421 before the token is even looked at.
 */
export function isLoopbackHost(host: string | undefined | null): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  const lower = name.toLowerCase();
  return LOOPBACK_NAMES.has(lower) || /^127(\.\d{1,3}){3}$/.test(lower);
}

/** An `Origin` header from a loopback page (or none at all, as Node clients send). */
export function isLoopbackOrigin(origin: string | undefined | null): boolean {
  if (!origin) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.host);
  } catch {
    return false;
  }
}

/** Constant-time comparison of the request's token with the server's. */
export function tokenMatches(given: string | undefined | null, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
