import { describe, expect, it } from 'vitest';
import { recoverTruncatedJson } from './truncated-json.ts';

describe('recoverTruncatedJson keeps what was written completely before the cut', () => {
  it('drops a string the cut went through, and names it', () => {
    expect(recoverTruncatedJson('{"city": "Paris", "country": "Fra')).toEqual({
      value: { city: 'Paris' },
      cut: ['country'],
      open: [''],
    });
  });

  it('drops a number that runs into the end (60 may have been 600)', () => {
    expect(recoverTruncatedJson('{"unit": "s", "time": 60')).toMatchObject({
      value: { unit: 's' },
      cut: ['time'],
    });
  });

  it('drops an array that was still open: elements may be missing', () => {
    expect(recoverTruncatedJson('{"a": 1, "ids": [1, 2')).toMatchObject({ value: { a: 1 }, cut: ['ids'] });
  });

  it('keeps a nested object open at the cut with its complete members, listing it as open', () => {
    expect(recoverTruncatedJson('{"body": {"mode": "COOL", "wind": "HI')).toEqual({
      value: { body: { mode: 'COOL' } },
      cut: ['body.wind'],
      open: ['body', ''],
    });
  });

  it('cuts a dangling key or colon, and reads escapes in complete strings', () => {
    expect(recoverTruncatedJson('{"a": "x\\"y", "b":')).toMatchObject({ value: { a: 'x"y' }, cut: ['b'] });
    expect(recoverTruncatedJson('{"a": true, "b')).toMatchObject({ value: { a: true }, cut: [] });
  });

  it('trusts nothing in text that is not a prefix of JSON', () => {
    expect(recoverTruncatedJson('{"a" 1, "b": 2')).toEqual({ value: {}, cut: [], open: [''] });
    expect(recoverTruncatedJson('[1, 2')).toEqual({ value: {}, cut: [], open: [''] });
  });

  it('never turns a "__proto__" key into a prototype change', () => {
    const { value } = recoverTruncatedJson('{"__proto__": {"polluted": true}, "x": "cut');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
  });
});
