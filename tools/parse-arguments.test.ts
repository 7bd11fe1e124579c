import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_MAX_INPUT_DEPTH,
  parseArguments,
  toJsonValue,
} from './parse-arguments.ts';

/** `levels` nested arrays as JSON text: `[[...]]`. */
const nestedArrayText = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/** `levels` nested arrays as a value. */
function nestedArray(levels: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < levels; i++) value = [value];
  return value;
}

describe('parseArguments: JSON text', () => {
  it('parses valid JSON text into a plain value', () => {
    expect(parseArguments('{"city":"Oslo","days":[1,2]}')).toEqual({
      ok: true,
      value: { city: 'Oslo', days: [1, 2] },
      forbiddenKeys: [],
    });
  });

  it('reports text that does not parse as invalid_json with the parser message', () => {
    const parsed = parseArguments("{'city': 'Oslo'}");
    expect(parsed).toMatchObject({ ok: false, kind: 'invalid_json' });
    if (parsed.ok) return;
    expect(parsed.message).toMatch(/^Arguments are not valid JSON: /);
  });

  it('reports an empty string as invalid JSON', () => {
    expect(parseArguments('')).toMatchObject({ ok: false, kind: 'invalid_json' });
  });

  it(`accepts text of exactly ${DEFAULT_MAX_INPUT_BYTES} bytes and refuses one byte more`, () => {
    const fill = (bytes: number) => `"${'a'.repeat(bytes - 2)}"`;
    expect(parseArguments(fill(DEFAULT_MAX_INPUT_BYTES)).ok).toBe(true);
    expect(parseArguments(fill(DEFAULT_MAX_INPUT_BYTES + 1))).toEqual({
      ok: false,
      kind: 'too_large',
      message: `Arguments are ${DEFAULT_MAX_INPUT_BYTES + 1} bytes; the limit is ${DEFAULT_MAX_INPUT_BYTES} bytes`,
    });
  });

  it('measures text in UTF-8 bytes, not characters', () => {
    const text = `"${'é'.repeat(60)}"`; // 62 characters, 122 bytes
    expect(parseArguments(text, { maxBytes: 100 })).toMatchObject({ ok: false, kind: 'too_large' });
    expect(parseArguments(text, { maxBytes: 122 }).ok).toBe(true);
  });

  it('does not reject text under the limit whose parsed value looks bigger (many small numbers)', () => {
    const text = JSON.stringify(Array.from({ length: 200_000 }, () => 1)); // ~400 KB
    expect(parseArguments(text, { maxElements: Number.POSITIVE_INFINITY }).ok).toBe(true);
  });

  it('refuses more values than maxElements (default 10,000), text or object, empty slots included', () => {
    const text = JSON.stringify(Array.from({ length: 10_001 }, () => 1));
    expect(parseArguments(text)).toMatchObject({
      ok: false,
      kind: 'too_large',
      message: 'Arguments hold more than 10000 values',
    });
    expect(parseArguments({ tags: new Array(10_000_000) })).toMatchObject({ ok: false, kind: 'too_large' });
    expect(parseArguments(Array.from({ length: 9_999 }, () => 1)).ok).toBe(true);
  });

  it(`accepts ${DEFAULT_MAX_INPUT_DEPTH} levels of nesting and refuses ${DEFAULT_MAX_INPUT_DEPTH + 1}`, () => {
    expect(parseArguments(nestedArrayText(DEFAULT_MAX_INPUT_DEPTH)).ok).toBe(true);
    expect(parseArguments(nestedArrayText(DEFAULT_MAX_INPUT_DEPTH + 1))).toEqual({
      ok: false,
      kind: 'too_deep',
      message: 'Arguments nest 65 levels deep; the limit is 64',
    });
  });

  it('refuses absurd nesting without parsing it (no stack overflow)', () => {
    expect(parseArguments(nestedArrayText(100_000))).toMatchObject({ ok: false, kind: 'too_deep' });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ note: `${'['.repeat(100)} \\" ${'{'.repeat(100)}` });
    expect(parseArguments(text)).toMatchObject({ ok: true });
  });

  it('honours a configured maxDepth', () => {
    expect(parseArguments('{"a":{"b":{}}}', { maxDepth: 2 })).toMatchObject({ ok: false, kind: 'too_deep' });
    expect(parseArguments('{"a":{"b":{}}}', { maxDepth: 3 }).ok).toBe(true);
  });
});

describe('parseArguments: objects', () => {
  it('copies into fresh objects, so later changes to the input do not leak in', () => {
    const input = { tags: ['a'] };
    const parsed = parseArguments(input);
    if (!parsed.ok) throw new Error('expected ok');
    input.tags.push('b');
    expect(parsed.value).toEqual({ tags: ['a'] });
  });

  it(`refuses objects nested deeper than ${DEFAULT_MAX_INPUT_DEPTH}`, () => {
    expect(parseArguments(nestedArray(DEFAULT_MAX_INPUT_DEPTH)).ok).toBe(true);
    expect(parseArguments(nestedArray(DEFAULT_MAX_INPUT_DEPTH + 1))).toEqual({
      ok: false,
      kind: 'too_deep',
      message: 'Arguments nest deeper than the limit of 64 levels',
    });
  });

  it('refuses objects whose JSON would exceed maxBytes', () => {
    expect(parseArguments({ note: 'x'.repeat(200) }, { maxBytes: 100 })).toEqual({
      ok: false,
      kind: 'too_large',
      message: 'Arguments exceed the limit of 100 bytes',
    });
    expect(
      parseArguments({ counts: Array.from({ length: 100 }, () => 12345) }, { maxBytes: 100 }),
    ).toMatchObject({
      kind: 'too_large',
    });
  });

  it('drops undefined members and turns undefined array items and holes into null, as JSON does', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is the point of this test
    const parsed = parseArguments({ a: undefined, b: [undefined, , 1] });
    expect(parsed).toEqual({ ok: true, value: { b: [null, null, 1] }, forbiddenKeys: [] });
  });

  it('accepts objects without a prototype and class instances by their own enumerable keys', () => {
    const bare = Object.assign(Object.create(null) as object, { city: 'Oslo' });
    expect(parseArguments(bare)).toMatchObject({ ok: true, value: { city: 'Oslo' } });
    class Query {
      city = 'Bergen';
    }
    expect(parseArguments(new Query())).toMatchObject({ ok: true, value: { city: 'Bergen' } });
  });

  it('uses toJSON like JSON.stringify (a Date becomes its ISO text)', () => {
    expect(parseArguments({ at: new Date(Date.UTC(2024, 0, 2)) })).toMatchObject({
      ok: true,
      value: { at: '2024-01-02T00:00:00.000Z' },
    });
  });

  it.each([
    ['a Set', { s: new Set([1]) }, 's: a Set is not JSON'],
    ['a RegExp', { r: /x/ }, 'r: a RegExp is not JSON'],
    ['a typed array', { t: new Uint8Array(2) }, 't: a Uint8Array is not JSON'],
    ['a Promise', { p: Promise.resolve(1) }, 'p: a Promise is not JSON'],
    ['a bigint at the root', 5n, 'arguments: a bigint is not JSON'],
    ['-Infinity in an array', [1, Number.NEGATIVE_INFINITY], '1: -Infinity is not a JSON number'],
  ])('refuses %s as not_json', (_name, input, message) => {
    expect(parseArguments(input)).toEqual({ ok: false, kind: 'not_json', message });
  });

  it('accepts a value shared twice (not a cycle)', () => {
    const shared = { id: 1 };
    expect(parseArguments({ a: shared, b: shared })).toMatchObject({
      ok: true,
      value: { a: { id: 1 }, b: { id: 1 } },
    });
  });

  it('refuses a cycle through an array', () => {
    const list: unknown[] = [];
    list.push({ back: list });
    expect(parseArguments({ list })).toEqual({
      ok: false,
      kind: 'not_json',
      message: 'list.0.back: a cyclic value is not JSON',
    });
  });

  it('reports a toJSON that throws instead of throwing', () => {
    const input = {
      at: {
        toJSON() {
          throw new Error('clock broken');
        },
      },
    };
    expect(parseArguments(input)).toEqual({
      ok: false,
      kind: 'not_json',
      message: 'Arguments could not be read: clock broken',
    });
  });
});

describe('parseArguments: keys that reach prototypes', () => {
  it('leaves __proto__, constructor and prototype keys out and lists their paths', () => {
    const parsed = parseArguments(
      '{"__proto__":{"polluted":1},"user":{"constructor":{"prototype":{"polluted":1}}},"list":[{"prototype":1}],"ok":1}',
    );
    expect(parsed).toEqual({
      ok: true,
      value: { user: {}, list: [{}], ok: 1 },
      forbiddenKeys: ['__proto__', 'user.constructor', 'list.0.prototype'],
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('the copy has a normal prototype and no own __proto__ key', () => {
    const parsed = parseArguments(JSON.parse('{"__proto__":{"isAdmin":true}}'));
    if (!parsed.ok) throw new Error('expected ok');
    const value = parsed.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(false);
    expect(value.isAdmin).toBeUndefined();
  });
});

describe('toJsonValue: sizes and paths', () => {
  it('counts a number as the characters of its JSON text, whatever its magnitude and sign', () => {
    const numbers = [
      0,
      -0,
      7,
      -7,
      9,
      10,
      -10,
      99,
      100,
      999_999_999,
      -999_999_999,
      1e9,
      -1e9,
      123.456,
      -1e-7,
      2 ** 53,
      1e21,
    ];
    for (const n of numbers) {
      const exact = String(n).length;
      expect(toJsonValue(n, { subject: 'Value', maxBytes: exact }).ok, `${n} within ${exact}`).toBe(true);
      expect(
        toJsonValue(n, { subject: 'Value', maxBytes: exact - 1 }),
        `${n} over ${exact - 1}`,
      ).toMatchObject({
        ok: false,
        kind: 'too_large',
      });
    }
  });

  it('names where a value that is not JSON sits, array items by index', () => {
    const value = { order: { items: [{ sku: 'a' }, { sku: () => 'b' }] } };
    expect(toJsonValue(value, { subject: 'Tool result' })).toMatchObject({
      ok: false,
      kind: 'not_json',
      message: 'order.items.1.sku: a function is not JSON',
    });
    expect(toJsonValue(Symbol('s'), { subject: 'Tool result' })).toMatchObject({
      message: 'tool result: a symbol is not JSON',
    });
  });
});
