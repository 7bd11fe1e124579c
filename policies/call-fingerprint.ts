import { createHash } from 'node:crypto';

/** Hex characters kept of the SHA-256 (64 bits: collisions among one run's calls are not a concern). */
const FINGERPRINT_HEX = 16;

/**
 * A call's fingerprint: the tool id and its input, hashed (SHA-256 of the tool id and the input's
 * canonical JSON: object keys sorted, so `{a,b}` and `{b,a}` are the same call), 16 hex digits.
 * Two calls with the same fingerprint are the same call (issue 24 item 5: the same refused call,
 * again and again). An input JSON cannot carry (a cycle) is fingerprinted by its text form.
 *
 * ```ts
 * callFingerprint('payments.refund', { amountEur: 500, orderId: 'A-17' }) // '3f1c…' (16 hex)
 * ```
 */
export function callFingerprint(tool: string, input: unknown): string {
  let text: string;
  try {
    text = canonicalJson(input, new Set());
  } catch {
    text = String(input);
  }
  return createHash('sha256')
    .update(tool)
    .update('\u0000')
    .update(text)
    .digest('hex')
    .slice(0, FINGERPRINT_HEX);
}

function canonicalJson(value: unknown, seen: Set<object>): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (seen.has(value)) throw new TypeError('cycle');
  seen.add(value);
  const out = Array.isArray(value)
    ? `[${value.map((item) => canonicalJson(item, seen)).join(',')}]`
    : `{${Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map(
          (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key], seen)}`,
        )
        .join(',')}}`;
  seen.delete(value);
  return out;
}
