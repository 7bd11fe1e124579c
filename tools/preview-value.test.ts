import { describe, expect, it } from 'vitest';
import { clipKey, displayPath, PREVIEW_CHARS, previewValue } from './preview-value.ts';

describe('previewValue', () => {
  it('writes JSON for JSON values', () => {
    expect(previewValue({ a: [1, 'x', null, true], b: { c: 2 } })).toBe(
      '{"a":[1,"x",null,true],"b":{"c":2}}',
    );
  });

  it('shows what JSON cannot carry instead of refusing it', () => {
    const cyclic: Record<string, unknown> = { n: 10n };
    cyclic.self = cyclic;
    expect(previewValue(cyclic)).toBe('{"n":10n,"self":"[Circular]"}');
    expect(previewValue([undefined, () => 1, Number.NaN])).toBe('[null,null,null]');
    expect(previewValue(Symbol('s'))).toBe('Symbol(s)');
  });

  it('reads no more of an array than it writes: 10^7 slots cost a few hundred reads', () => {
    let reads = 0;
    const slots = new Proxy(new Array(1e7), {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const text = previewValue(slots);
    expect(text).toHaveLength(PREVIEW_CHARS + '…(truncated)'.length);
    expect(reads).toBeLessThan(1_000);
  });

  it('clips keys, and a getter that throws ends the preview with what was written', () => {
    expect(previewValue({ ['k'.repeat(500)]: 1 })).toBe(`{"${'k'.repeat(100)}…":1}`);
    const hostile = Object.defineProperty({ a: 1 }, 'b', {
      enumerable: true,
      get() {
        throw new Error('trap');
      },
    });
    expect(previewValue(hostile)).toBe('{"a":1');
  });
});

describe('clipKey and displayPath', () => {
  it('clip each segment to 100 characters and a path to 300', () => {
    expect(clipKey('x'.repeat(101))).toBe(`${'x'.repeat(100)}…`);
    expect(displayPath(['items', 0, 'sku'])).toBe('items.0.sku');
    expect(displayPath(Array.from({ length: 10 }, () => 'y'.repeat(100)))).toHaveLength(301);
  });
});
