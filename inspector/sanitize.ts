/**
 * Turns a context, event or RunEvent into what the inspector may show and send: JSON only,
 * bounded, without secrets. The inspector calls it on every payload it shows (issue 8 §3).
 */
export type Sanitize = (value: unknown) => unknown;

export interface SanitizeOptions {
  /** Longest string kept, in characters; the rest becomes `…[+N chars]`. Default 500. */
  maxString?: number;
  /** Most array items kept; then a `…[+N items]` marker. Default 50. */
  maxArray?: number;
  /** Most object keys kept; then a `…` key counting the rest. Default 100. */
  maxKeys?: number;
  /** Nesting depth past which values become `[…]`. Default 8. */
  maxDepth?: number;
  /** Largest result, in characters of JSON; larger values become a truncated preview. Default 64 KiB. */
  maxJson?: number;
  /** Keys dropped whatever their value. Default {@link isSecretKey}. */
  dropKey?: (key: string) => boolean;
}

const SECRET_NAMES = new Set([
  'password',
  'passwd',
  'pwd',
  'secret',
  'token',
  'apikey',
  'authorization',
  'auth',
  'cookie',
  'setcookie',
  'credentials',
  'credential',
  'privatekey',
  'clientsecret',
  'bearer',
]);

/**
 * `password`, `token`, `secret`, `apiKey`, `api_key`, `Authorization`, `accessToken`,
 * `dbPassword`, `clientSecret`, `x-api-key`… (case, `-` and `_` ignored; a name ending in one of
 * these counts). `maxTokens` or `tokenCount` do not: they name numbers, not secrets.
 */
export function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (SECRET_NAMES.has(name)) return true;
  return ['password', 'secret', 'apikey', 'token', 'privatekey', 'credentials'].some((end) =>
    name.endsWith(end),
  );
}

/** A sanitizer with these limits (see {@link SanitizeOptions} for the defaults). */
export function createSanitizer(options: SanitizeOptions = {}): Sanitize {
  const maxString = options.maxString ?? 500;
  const maxArray = options.maxArray ?? 50;
  const maxKeys = options.maxKeys ?? 100;
  const maxDepth = options.maxDepth ?? 8;
  const maxJson = options.maxJson ?? 64 * 1024;
  const dropKey = options.dropKey ?? isSecretKey;

  const walk = (value: unknown, depth: number, seen: Set<object>): unknown => {
    if (value === null || typeof value === 'boolean') return value;
    if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
    if (typeof value === 'string') {
      return value.length > maxString
        ? `${value.slice(0, maxString)}…[+${value.length - maxString} chars]`
        : value;
    }
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value === 'undefined') return undefined;
    if (typeof value === 'symbol') return value.toString();
    if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
    if (seen.has(value)) return '[circular]';
    if (depth >= maxDepth) return '[…]';
    seen.add(value);
    try {
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Error) {
        return walk({ name: value.name, message: value.message }, depth, seen);
      }
      if (Array.isArray(value)) {
        const items = value.slice(0, maxArray).map((item) => walk(item, depth + 1, seen) ?? null);
        if (value.length > maxArray) items.push(`…[+${value.length - maxArray} items]`);
        return items;
      }
      if (value instanceof Map) return walk(Object.fromEntries(value), depth, seen);
      if (value instanceof Set) return walk([...value], depth, seen);
      const json = (value as { toJSON?: () => unknown }).toJSON;
      if (typeof json === 'function') return walk(json.call(value), depth, seen);
      const out: Record<string, unknown> = {};
      let kept = 0;
      let skipped = 0;
      for (const [key, item] of Object.entries(value)) {
        if (dropKey(key)) continue;
        if (kept >= maxKeys) {
          skipped++;
          continue;
        }
        const clean = walk(item, depth + 1, seen);
        if (clean !== undefined) {
          out[key] = clean;
          kept++;
        }
      }
      if (skipped > 0) out['…'] = `+${skipped} keys`;
      return out;
    } finally {
      seen.delete(value);
    }
  };

  return (value) => {
    const clean = walk(value, 0, new Set());
    const text = JSON.stringify(clean) ?? 'null';
    if (text.length <= maxJson) return clean;
    return { $truncated: true, bytes: text.length, preview: `${text.slice(0, maxJson)}…` };
  };
}

/** The inspector's default: {@link createSanitizer} with its defaults. */
export const defaultSanitize: Sanitize = createSanitizer();
