import { describe, expect, it } from 'vitest';
import { createSanitizer, defaultSanitize, isSecretKey } from '../inspector/sanitize.ts';

describe('inspector sanitize hook', () => {
  it('drops keys that name secrets, at any depth, and keeps look-alikes that are not', () => {
    const clean = defaultSanitize({
      user: 'ada',
      password: 'hunter2',
      nested: {
        apiKey: 'sk-1',
        api_key: 'sk-2',
        'x-api-key': 'k',
        accessToken: 't',
        Authorization: 'Bearer x',
      },
      list: [{ secret: 's', keep: 1 }],
      maxTokens: 512,
      tokenCount: 3,
    });
    expect(clean).toEqual({ user: 'ada', nested: {}, list: [{ keep: 1 }], maxTokens: 512, tokenCount: 3 });
    expect(isSecretKey('dbPassword')).toBe(true);
    expect(isSecretKey('turnId')).toBe(false);
  });

  it('truncates long strings and arrays and marks what it cut', () => {
    const sanitize = createSanitizer({ maxString: 5, maxArray: 2 });
    expect(sanitize({ text: 'abcdefgh', items: [1, 2, 3, 4] })).toEqual({
      text: 'abcde…[+3 chars]',
      items: [1, 2, '…[+2 items]'],
    });
  });

  it('cuts deep nesting, cycles, functions and too many keys', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const sanitize = createSanitizer({ maxDepth: 2, maxKeys: 2 });
    expect(sanitize({ a: { b: { c: 1 } } })).toEqual({ a: { b: '[…]' } });
    expect(defaultSanitize(cyclic)).toEqual({ name: 'loop', self: '[circular]' });
    expect(defaultSanitize({ fn: function named() {} })).toEqual({ fn: '[function named]' });
    expect(sanitize({ a: 1, b: 2, c: 3, d: 4 })).toEqual({ a: 1, b: 2, '…': '+2 keys' });
  });

  it('keeps shared (non-cyclic) references and turns errors, dates and bigints into JSON', () => {
    const shared = { id: 1 };
    expect(defaultSanitize({ a: shared, b: shared })).toEqual({ a: { id: 1 }, b: { id: 1 } });
    expect(defaultSanitize({ e: new TypeError('bad'), d: new Date(0), n: 10n })).toEqual({
      e: { name: 'TypeError', message: 'bad' },
      d: '1970-01-01T00:00:00.000Z',
      n: '10n',
    });
  });

  it('replaces a value whose JSON is still too large with a bounded preview', () => {
    const sanitize = createSanitizer({ maxJson: 100 });
    const out = sanitize({ rows: Array.from({ length: 40 }, (_, i) => `row-${i}`) }) as Record<
      string,
      unknown
    >;
    expect(out.$truncated).toBe(true);
    expect((out.preview as string).length).toBeLessThanOrEqual(101);
    expect(out.bytes).toBeGreaterThan(100);
  });
});
