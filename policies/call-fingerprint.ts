import { createHash } from 'node:crypto';

/** Hex characters kept of the SHA-256 (64 bits: collisions among one run's calls are not a concern). */
const FINGERPRINT_HEX = 16;

/** How {@link canonicalJson} spells values that mean the same. */
export interface CanonicalOptions {
  /**
   * Numbers are rounded to the nearest multiple of this before they are compared (`0.1 + 0.2`
   * and `0.3` are one number at `1e-9`). Default 0: exact (only `-0` and `0` are one).
   */
  numericTolerance?: number;
  /**
   * `collapse`: strings are trimmed and each run of whitespace inside them is one space
   * (`"A-17 "` and `"A-17"` are one value). Default `exact`.
   */
  whitespace?: 'exact' | 'collapse';
}

/**
 * A call's fingerprint: the tool id and its input, hashed (SHA-256 of the tool id and the input's
 * {@link canonicalJson}), 16 hex digits. Two calls with the same fingerprint are the same call
 * (issue 24 item 5: the same refused call, again and again; issue 35 item 1: the same call with
 * the same result). Canonical across JSON spelling: object keys sorted, an input given as JSON text
 * read as the value it spells, strings in Unicode NFC (`"é"` composed or decomposed is one
 * string), `-0` and `0` one number; `options` loosen numbers and whitespace. An input JSON cannot
 * carry (a cycle) is fingerprinted by its text form.
 *
 * ```ts
 * callFingerprint('payments.refund', { amountEur: 500, orderId: 'A-17' }) // '3f1c…' (16 hex)
 * callFingerprint('payments.refund', '{"orderId":"A-17","amountEur":500}') // the same
 * ```
 */
export function callFingerprint(tool: string, input: unknown, options: CanonicalOptions = {}): string {
  return createHash('sha256')
    .update(tool.normalize('NFC'))
    .update('\u0000')
    .update(canonicalText(input, options))
    .digest('hex')
    .slice(0, FINGERPRINT_HEX);
}

/** A value's fingerprint alone (a tool result's: issue 35 item 1), as {@link callFingerprint} hashes inputs. */
export function valueFingerprint(value: unknown, options: CanonicalOptions = {}): string {
  return createHash('sha256').update(canonicalText(value, options)).digest('hex').slice(0, FINGERPRINT_HEX);
}

function canonicalText(input: unknown, options: CanonicalOptions): string {
  try {
    return canonicalJson(jsonTextValue(input), options);
  } catch {
    return String(input);
  }
}

/** JSON text (as models send arguments) read as the value it spells; anything else as it is. */
function jsonTextValue(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  const text = input.trim();
  if (!text.startsWith('{') && !text.startsWith('[')) return input;
  try {
    return JSON.parse(text);
  } catch {
    return input;
  }
}

/**
 * The canonical JSON text of `value` (see {@link callFingerprint}): keys sorted and NFC,
 * `undefined` members left out, strings NFC (and collapsed with `whitespace: 'collapse'`),
 * numbers rounded to `numericTolerance`.
 *
 * @throws TypeError for a cycle.
 */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  return canonical(value, options, new Set());
}

function canonical(value: unknown, options: CanonicalOptions, seen: Set<object>): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(canonicalString(value, options));
  if (typeof value === 'number') return JSON.stringify(canonicalNumber(value, options)) ?? 'null';
  if (typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (seen.has(value)) throw new TypeError('cycle');
  seen.add(value);
  let out: string;
  if (Array.isArray(value)) {
    out = `[${value.map((item) => canonical(item, options, seen)).join(',')}]`;
  } else {
    const members = value as Record<string, unknown>;
    const entries = Object.keys(members)
      .filter((key) => members[key] !== undefined)
      .map((key) => [key.normalize('NFC'), canonical(members[key], options, seen)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out = `{${entries.map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}`;
  }
  seen.delete(value);
  return out;
}

function canonicalString(value: string, options: CanonicalOptions): string {
  const nfc = value.normalize('NFC');
  return options.whitespace === 'collapse' ? nfc.trim().replace(/\s+/g, ' ') : nfc;
}

function canonicalNumber(value: number, options: CanonicalOptions): number {
  const tolerance = options.numericTolerance ?? 0;
  const rounded = tolerance > 0 && Number.isFinite(value) ? Math.round(value / tolerance) * tolerance : value;
  // -0 and 0 are one number; a rounded value is spelled as its shortest round trip.
  return rounded === 0 ? 0 : tolerance > 0 ? Number(rounded.toPrecision(12)) : rounded;
}
