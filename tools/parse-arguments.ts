import { clipKey, clipText, PREVIEW_PATH_CHARS } from './preview-value.ts';

/**
 * Turns what a planner sent as a tool's arguments (an object, or JSON text) into a plain,
 * prototype-safe JSON value, refusing what is hostile (docs/tool-boundary.md §Failures "arguments are not valid JSON";
 * foundation issue: payloads over the size limit or deeper than 64 levels).
 *
 * | input                                   | outcome                                  |
 * |-----------------------------------------|------------------------------------------|
 * | JSON text that parses                   | `ok` with the parsed value               |
 * | JSON text that does not parse           | `invalid_json` with the parser's message |
 * | text over `maxBytes` (UTF-8 bytes)      | `too_large`, nothing parsed              |
 * | an object whose JSON is over `maxBytes` | `too_large` (size estimated from below)   |
 * | an array or object with more items than `maxElements` or `maxBytes` allows | `too_large`, refused from its length before its items are read |
 * | nesting deeper than `maxDepth`          | `too_deep`, nothing parsed               |
 * | a `__proto__`/`constructor`/`prototype` key | `ok`, the key listed in `forbiddenKeys` and left out of `value` |
 * | a value JSON cannot carry (function, bigint, symbol, NaN, Infinity, cycle, Map, Set, RegExp, a getter that throws) | `not_json` |
 */
export type ParsedArguments =
  | { ok: true; value: unknown; forbiddenKeys: string[] }
  | { ok: false; kind: 'invalid_json' | 'too_large' | 'too_deep' | 'not_json'; message: string };

export interface ParseLimits {
  /** Largest accepted payload in bytes (UTF-8 for text). Default 1 MiB. */
  maxBytes?: number;
  /** Deepest accepted nesting of objects and arrays. Default 64. */
  maxDepth?: number;
  /**
   * Most values (objects, arrays, strings, numbers, booleans, nulls) accepted in one payload.
   * Default 10,000: validating more costs tens of ms, and no model writes that many.
   */
  maxElements?: number;
}

export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_INPUT_DEPTH = 64;
export const DEFAULT_MAX_INPUT_ELEMENTS = 10_000;

/** Keys that would reach `Object.prototype` through careless assignment downstream. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A plain JSON copy of any value (a planner's result, a tool's output), or why it is not JSON:
 * the same walk as {@link parseArguments} for objects, with `subject` naming the value in
 * messages ("Tool result", "Plan result"). A function, symbol, bigint, cycle, Map or a getter that
 * throws is `not_json`; a Proxy is read through its traps into plain objects. Never throws.
 * Issue 12 (defect 1): such values crashed the process when a store copied them later.
 */
export function toJsonValue(value: unknown, limits: ParseLimits & { subject: string }): ParsedArguments {
  return sanitize(value, {
    maxBytes: limits.maxBytes ?? Number.POSITIVE_INFINITY,
    maxDepth: limits.maxDepth ?? DEFAULT_MAX_INPUT_DEPTH,
    maxElements: limits.maxElements ?? Number.POSITIVE_INFINITY,
    subject: limits.subject,
  });
}

/** Never throws: whatever `input` is, the outcome is a {@link ParsedArguments}. */
export function parseArguments(input: unknown, limits: ParseLimits = {}): ParsedArguments {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_INPUT_DEPTH;
  const maxElements = limits.maxElements ?? DEFAULT_MAX_INPUT_ELEMENTS;
  if (typeof input !== 'string') return sanitize(input, { maxBytes, maxDepth, maxElements });
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
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch (err) {
    return {
      ok: false,
      kind: 'invalid_json',
      message: `Arguments are not valid JSON: ${(err as Error).message}`,
    };
  }
  // The text's exact size was checked above; the copy's estimate would only be a worse measure.
  return sanitize(value, { maxBytes: Number.POSITIVE_INFINITY, maxDepth, maxElements });
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
 * Copies a value into fresh plain objects and arrays, checking depth, a lower bound of its JSON
 * size (UTF-16 units of strings and keys, digits of numbers), keys, and that it is JSON at all.
 * Values with a `toJSON` method (Date) are replaced by its result, as `JSON.stringify` does; an
 * `undefined` object member is dropped and an `undefined` array item becomes `null`, as in JSON.
 * A getter or proxy that throws while being read makes the value `not_json`. Recursion is
 * bounded by `maxDepth`.
 */
function sanitize(
  root: unknown,
  limits: { maxBytes: number; maxDepth: number; maxElements: number; subject?: string },
): ParsedArguments {
  const walk = new JsonWalk(limits);
  let value: unknown;
  try {
    value = walk.copy(root, 0, undefined, undefined);
  } catch (err) {
    const reason = err instanceof RangeError ? 'it nests too deeply to copy' : describeError(err);
    return { ok: false, kind: 'not_json', message: `${walk.subject} could not be read: ${reason}` };
  }
  return walk.failure ?? { ok: true, value, forbiddenKeys: walk.forbiddenKeys };
}

type WalkFailure = { ok: false; kind: 'too_large' | 'too_deep' | 'not_json'; message: string };

/** Where a value sits in the payload walked: its key, under its parent's path (none for the root). */
interface Path {
  parent: Path | undefined;
  key: string;
}

/**
 * One {@link sanitize} walk. A class, not closures over the walk's counters: a call of sanitize
 * then creates no functions, and a value's path is a string only when a message or
 * `forbiddenKeys` needs it (building both per value walked cost more than the walk of a small
 * payload: a tool result, a plan).
 */
class JsonWalk {
  readonly subject: string;
  readonly forbiddenKeys: string[] = [];
  failure: WalkFailure | undefined;
  private readonly maxBytes: number;
  private readonly maxDepth: number;
  private readonly maxElements: number;
  private bytes = 0;
  private elements = 0;
  /** The objects and arrays being walked, outermost first (a cycle is one of them again). */
  private readonly open: object[] = [];

  constructor(limits: { maxBytes: number; maxDepth: number; maxElements: number; subject?: string }) {
    this.maxBytes = limits.maxBytes;
    this.maxDepth = limits.maxDepth;
    this.maxElements = limits.maxElements;
    this.subject = limits.subject ?? 'Arguments';
  }

  private fail(kind: WalkFailure['kind'], message: string): undefined {
    this.failure ??= { ok: false, kind, message };
    return undefined;
  }

  private count(size: number): boolean {
    this.bytes += size;
    if (this.bytes <= this.maxBytes) return true;
    this.fail('too_large', `${this.subject} exceed the limit of ${this.maxBytes} bytes`);
    return false;
  }

  /** The value's path for a message (`parent` and its `key` in it), or the subject's name for the root. */
  private where(parent: Path | undefined, key: string | number | undefined): string {
    const path = key === undefined ? undefined : { parent, key: String(key) };
    return pathText(path) || this.subject.toLowerCase();
  }

  /**
   * The copy of `input`, found at `key` of the value at `parent` (`key` undefined for the root).
   * A path object is made only for an object or array (its members' parent) or a message.
   */
  copy(input: unknown, depth: number, parent: Path | undefined, key: string | number | undefined): unknown {
    if (this.failure) return undefined;
    const { subject, maxElements } = this;
    if (++this.elements > maxElements)
      return this.fail('too_large', `${subject} hold more than ${maxElements} values`);
    let value = input;
    if (
      value !== null &&
      typeof value === 'object' &&
      typeof (value as { toJSON?: unknown }).toJSON === 'function'
    ) {
      value = (value as { toJSON(key: string): unknown }).toJSON(key === undefined ? '' : String(key));
    }
    switch (typeof value) {
      case 'string':
        return this.count(value.length + 2) ? value : undefined;
      case 'number':
        if (!Number.isFinite(value))
          return this.fail('not_json', `${this.where(parent, key)}: ${value} is not a JSON number`);
        return this.count(numberLength(value)) ? value : undefined;
      case 'boolean':
        return this.count(value ? 4 : 5) ? value : undefined;
      case 'undefined':
        return undefined;
      case 'object':
        if (value === null) return this.count(4) ? null : undefined;
        break;
      default:
        return this.fail('not_json', `${this.where(parent, key)}: a ${typeof value} is not JSON`);
    }
    const object = value as object;
    const isArray = Array.isArray(object);
    if (!isArray) {
      const tag = Object.prototype.toString.call(object);
      if (tag !== '[object Object]' && tag !== '[object Array]')
        return this.fail('not_json', `${this.where(parent, key)}: a ${tag.slice(8, -1)} is not JSON`);
    }
    if (depth >= this.maxDepth) {
      return this.fail('too_deep', `${subject} nest deeper than the limit of ${this.maxDepth} levels`);
    }
    if (this.open.includes(object))
      return this.fail('not_json', `${this.where(parent, key)}: a cyclic value is not JSON`);
    if (!this.count(2)) return undefined;
    // Refused by size before a walk (issue 24 item 8: `new Array(1e7)` was walked whole, 2.6 s):
    // each item or member is one more value, and at least one byte plus a separator.
    const keys = isArray ? undefined : Object.keys(object);
    const size = keys ? keys.length : (object as unknown[]).length;
    if (this.elements + size > maxElements)
      return this.fail('too_large', `${subject} hold more than ${maxElements} values`);
    if (this.bytes + Math.max(0, 2 * size - 1) > this.maxBytes) {
      return this.fail('too_large', `${subject} exceed the limit of ${this.maxBytes} bytes`);
    }
    const path: Path | undefined = key === undefined ? undefined : { parent, key: String(key) };
    this.open.push(object);
    let out: unknown;
    if (isArray) {
      const items: unknown[] = [];
      for (let index = 0; index < object.length && !this.failure; index++) {
        const item = this.copy(object[index], depth + 1, path, index);
        // An empty slot or undefined item is written as null: it counts, so `new Array(1e7)`
        // is too large instead of ten million nulls built for free (issue 12, defect 2).
        if (item === undefined && !this.failure && !this.count(4)) break;
        if (index > 0 && !this.count(1)) break;
        items.push(item === undefined ? null : item);
      }
      out = items;
    } else {
      const record: Record<string, unknown> = {};
      for (const member of keys!) {
        if (this.failure || !this.count(member.length + 3)) break;
        if (FORBIDDEN_KEYS.has(member)) {
          this.forbiddenKeys.push(pathText({ parent: path, key: member }));
          continue;
        }
        const item = this.copy((object as Record<string, unknown>)[member], depth + 1, path, member);
        if (item !== undefined) record[member] = item;
      }
      out = record;
    }
    this.open.pop();
    return out;
  }
}

/** `String(value).length` of a finite number, without making the string for small integers. */
function numberLength(value: number): number {
  if (Number.isInteger(value) && value > -1e9 && value < 1e9) {
    let length = value < 0 ? 2 : 1;
    for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) length++;
    return length;
  }
  return String(value).length;
}

/** A path for messages (`items.0.sku`): keys clipped, and the whole, so a refusal's message stays short. */
function pathText(path: Path | undefined): string {
  if (path === undefined) return '';
  const parent = pathText(path.parent);
  return clipText(parent ? `${parent}.${clipKey(path.key)}` : clipKey(path.key), PREVIEW_PATH_CHARS);
}

function describeError(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return 'unreadable error';
  }
}
