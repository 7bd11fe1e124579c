import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { isLoopbackHost, isLoopbackOrigin, tokenMatches } from '../inspector/request-guard.ts';

/** Why a request is refused before it is read, or undefined when it may proceed. */
export interface Refusal {
  status: 401 | 403 | 421;
  message: string;
  headers: Record<string, string>;
}

/** What the guard reads of the gateway's HTTP options (serve-mcp.ts `GatewayHttpOptions`, documented there). */
export type GuardedHttpOptions = { token?: string; allowedHosts?: string[]; allowedOrigins?: string[] };

/**
 * The checks every HTTP request of the gateway passes first (docs/mcp.md §Gateway security; the
 * MCP transport spec: servers MUST validate `Origin`):
 *
 * | check | passes | else |
 * |---|---|---|
 * | `Host` | its host name (any port, any case) is loopback (`localhost`, 127/8, `[::1]`), the bind address, a wildcard bind's own names ({@link wildcardHostNames}), or in `allowedHosts` | 421 Misdirected Request, naming the names served and `--allowed-host` |
 * | `Origin` | absent, a loopback page, or in `allowedOrigins` (exact) | 403 |
 * | `Authorization` | no token set, or `Bearer <token>`: the scheme in any case (RFC 9110 §11.1), the token compared in constant time | 401 with `WWW-Authenticate: Bearer` |
 *
 * @param bindHost the bind address as a Host header names it (`[::]` bracketed).
 */
export function requestGuard(
  http: GuardedHttpOptions,
  bindHost: string,
): (req: IncomingMessage) => Refusal | undefined {
  const names = new Set(
    [bindHost, ...(isWildcard(bindHost) ? wildcardHostNames() : []), ...(http.allowedHosts ?? [])].map(
      (name) => name.toLowerCase(),
    ),
  );
  const served = [...names].filter((name) => !isWildcard(name));
  const origins = new Set(http.allowedOrigins ?? []);
  const json = { 'content-type': 'application/json' };
  return (req) => {
    const hostHeader = req.headers.host;
    if (!isLoopbackHost(hostHeader) && !names.has(hostName(hostHeader))) {
      return {
        status: 421,
        message: `Misdirected Request: Host ${String(hostHeader).slice(0, 200)} is not served here (served: loopback${
          served.length > 0 ? `, ${served.join(', ').slice(0, 500)}` : ''
        }); a client reaching the gateway by another name needs it in --allowed-host NAME (transport.allowedHosts)`,
        headers: json,
      };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !isLoopbackOrigin(origin) && !origins.has(origin)) {
      return { status: 403, message: `Forbidden: Origin ${origin} is not allowed`, headers: json };
    }
    if (http.token !== undefined && !tokenMatches(bearerToken(req.headers.authorization), http.token)) {
      return {
        status: 401,
        message: 'Unauthorized: a bearer token is required',
        headers: { ...json, 'www-authenticate': 'Bearer' },
      };
    }
    return undefined;
  };
}

/** The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive (RFC 9110 §11.1). */
export function bearerToken(header: string | undefined): string | undefined {
  const found = header === undefined ? null : /^bearer +(\S+) *$/i.exec(header);
  return found?.[1];
}

/**
 * The names a wildcard bind (`0.0.0.0`, `::`) is reached by without a proxy: this machine's
 * interface addresses (IPv6 bracketed, as a Host header writes them, without a zone) and its
 * host name. A page rebinding its own DNS name to one of them still sends its own name as Host.
 */
export function wildcardHostNames(): string[] {
  const names = [hostname()];
  for (const addresses of Object.values(networkInterfaces())) {
    for (const { address, family } of addresses ?? []) {
      names.push(family === 'IPv6' ? `[${address.split('%')[0]}]` : address);
    }
  }
  return names;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '[::]' || host === '::';
}

/** The host name of a `Host` header, lower case, without its port (`[::1]` keeps its brackets). */
function hostName(header: string | undefined): string {
  if (!header) return '';
  const name = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0]!;
  return name.toLowerCase();
}
