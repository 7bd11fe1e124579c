/**
 * Turns what a planner sent as a tool's arguments (an object, or JSON text) into a plain,
 * prototype-safe JSON value, refusing what is hostile (SPEC §3 "arguments are not valid JSON";
 * foundation issue: payloads over the size limit or deeper than 64 levels).
 *
 * | input                                   | outcome                                  |
 * |-----------------------------------------|------------------------------------------|
 * | JSON text that parses                   | `ok` with the parsed value               |
 * | JSON text that does not parse           | `invalid_json` with the parser's message |
 * | text over `maxBytes` (UTF-8 bytes)      | `too_large`, nothing parsed              |
 * | nesting deeper than `maxDepth`          | `too_deep`, nothing parsed               |
 * | a `__proto__`/`constructor`/`prototype` key | `ok`, the key listed in `forbiddenKeys` and left out of `value` |
 * | a value JSON cannot carry (function, bigint, symbol, cycle) | `not_json` |
 */
export type ParsedArguments =
  | { ok: true; value: unknown; forbiddenKeys: string[] }
  | { ok: false; kind: 'invalid_json' | 'too_large' | 'too_deep' | 'not_json'; message: string };

export interface ParseLimits {
  /** Largest accepted payload in bytes (UTF-8 for text). Default 1 MiB. */
  maxBytes?: number;
  /** Deepest accepted nesting of objects and arrays. Default 64. */
  maxDepth?: number;
}

export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_INPUT_DEPTH = 64;

/** Keys that would reach `Object.prototype` through careless assignment downstream. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function parseArguments(input: unknown, limits: ParseLimits = {}): ParsedArguments {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_INPUT_DEPTH;
  let value = input;
  if (typeof input === 'string') {
    const bytes = Buffer.byteLength(input, 'utf8');
    if (bytes > maxBytes) {
      return {
        ok: false,
        kind: 'too_large',
        message: `Arguments are ${bytes} bytes; the limit is ${maxBytes} bytes`,
      };
    }
    const depth = textNestingDepth(input);
    if (depth > maxDepth) {
      return {
        ok: false,
        kind: 'too_deep',
        message: `Arguments nest ${depth} levels deep; the limit is ${maxDepth}`,
      };
    }
    try {
      value = JSON.parse(input);
    } catch (err) {
      return {
        ok: false,
        kind: 'invalid_json',
        message: `Arguments are not valid JSON: ${(err as Error).message}`,
      };
    }
  }
  return sanitize(value, maxBytes, maxDepth);
}

/** Max bracket depth of JSON text, skipping string contents; O(n), no allocation. */
function textNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) max = Math.max(max, ++depth);
    else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

/**
 * Copies a value into fresh plain objects and arrays, checking depth, an estimate of its
 * encoded size, and keys. Iterative-free recursion is bounded by `maxDepth`.
 */
function sanitize(root: unknown, maxBytes: number, maxDepth: number): ParsedArguments {
  const forbiddenKeys: string[] = [];
  let bytes = 0;
  const seen = new Set<object>();
  type Failure = { ok: false; kind: 'too_large' | 'too_deep' | 'not_json'; message: string };
  let failure: Failure | undefined;

  const copy = (value: unknown, depth: number, path: string): unknown => {
    if (failure) return undefined;
    switch (typeof value) {
      case 'string':
        bytes += value.length + 2;
        break;
      case 'number':
        if (!Number.isFinite(value)) {
          failure = {
            ok: false,
            kind: 'not_json',
            message: `${path || 'arguments'}: ${value} is not a JSON number`,
          };
        }
        bytes += 8;
        return value;
      case 'boolean':
        bytes += 5;
        return value;
      case 'undefined':
        return undefined;
      case 'object':
        break;
      default:
        failure = {
          ok: false,
          kind: 'not_json',
          message: `${path || 'arguments'}: a ${typeof value} is not JSON`,
        };
        return undefined;
    }
    if (bytes > maxBytes) {
      failure = { ok: false, kind: 'too_large', message: `Arguments exceed the limit of ${maxBytes} bytes` };
      return undefined;
    }
    if (typeof value === 'string' || value === null) return value;
    const object = value as object;
    if (depth >= maxDepth) {
      failure = {
        ok: false,
        kind: 'too_deep',
        message: `Arguments nest deeper than the limit of ${maxDepth} levels`,
      };
      return undefined;
    }
    if (seen.has(object)) {
      failure = {
        ok: false,
        kind: 'not_json',
        message: `${path || 'arguments'}: a cyclic value is not JSON`,
      };
      return undefined;
    }
    seen.add(object);
    let out: unknown;
    if (Array.isArray(object)) {
      out = object.map((item, index) => copy(item, depth + 1, join(path, String(index))));
    } else {
      const record: Record<string, unknown> = {};
      for (const key of Object.keys(object)) {
        bytes += key.length + 3;
        if (FORBIDDEN_KEYS.has(key)) {
          forbiddenKeys.push(join(path, key));
          continue;
        }
        const item = copy((object as Record<string, unknown>)[key], depth + 1, join(path, key));
        if (item !== undefined) record[key] = item;
      }
      out = record;
    }
    seen.delete(object);
    return out;
  };

  const value = copy(root, 0, '');
  return failure ?? { ok: true, value, forbiddenKeys };
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
