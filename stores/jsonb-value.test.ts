import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromJsonb, toJsonbText } from './jsonb-value.ts';

/** What jsonb refuses in JSON text: the NUL escape and surrogate escapes. */
const refusedByJsonb = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/** The trip through PostgreSQL: our text in, pg's JSON.parse of the jsonb out. */
function roundTrip(value: unknown): unknown {
  const text = toJsonbText(value);
  expect(text).not.toMatch(refusedByJsonb);
  return fromJsonb(JSON.parse(text));
}

describe('jsonb values', () => {
  it('sends ordinary JSON unchanged, so it stays queryable in SQL', () => {
    const value = { value: 'planning', context: { turn: 2, tools: ['crm.search'] }, emoji: '🧑‍🚀' };
    expect(toJsonbText(value)).toBe(JSON.stringify(value));
  });

  it('escapes NUL and lone surrogates in strings and keys, and restores them exactly', () => {
    const value = {
      nul: 'a\u0000b',
      cut: '🙂'.slice(0, 1),
      'k\u0000': ['\udc00', { deep: '\ud800x' }],
      ok: 'fine',
    };
    const restored = roundTrip(value);
    expect(restored).toEqual(value);
    expect(Object.keys(restored as object)).toEqual(Object.keys(value));
  });

  it('does not mistake a user object that looks like an escape for one', () => {
    for (const value of [
      { '$toolwarden.jsonb': 1, value: { $s: [65] } },
      { $o: [['a', 1]] },
      [{ $s: [0] }, 'x\u0000'],
      { outer: { '$toolwarden.jsonb': 1, value: 'x' }, nul: '\u0000' },
    ]) {
      expect(roundTrip(value)).toEqual(value);
    }
  });

  it('keeps "__proto__" as an ordinary key', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "nul": "\\u0000"}');
    const restored = roundTrip(value) as Record<string, unknown>;
    expect(Object.hasOwn(restored, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(restored)).toBe(Object.prototype);
  });

  it('restores a long escaped string without overflowing the stack', () => {
    const value = `${'x'.repeat(300_000)}\u0000`;
    expect(roundTrip(value)).toBe(value);
  });

  it('round-trips any JSON value, binary strings included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        const json = JSON.parse(JSON.stringify(value));
        expect(roundTrip(json)).toEqual(json);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects what JSON cannot hold at the top level', () => {
    expect(() => toJsonbText(undefined)).toThrow(TypeError);
  });
});
