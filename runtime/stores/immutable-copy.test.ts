import { describe, expect, it } from 'vitest';
import { immutableCopy, isImmutableCopy } from './immutable-copy.ts';

describe('immutableCopy', () => {
  it('copies plain data deeply and freezes every object of the copy', () => {
    const value = { a: 1, list: [{ b: 'x' }, null, undefined], nested: { c: true } };
    const copy = immutableCopy(value);
    expect(copy).toStrictEqual(value);
    expect(copy).not.toBe(value);
    expect(copy.list[0]).not.toBe(value.list[0]);
    for (const object of [copy, copy.list, copy.list[0], copy.nested])
      expect(Object.isFrozen(object)).toBe(true);
    expect(isImmutableCopy(copy)).toBe(true);
    expect(isImmutableCopy(value)).toBe(false);
  });

  it('leaves the source alone: changing it afterwards does not change the copy', () => {
    const value = { list: [1, 2] };
    const copy = immutableCopy(value);
    value.list.push(3);
    expect(copy).toEqual({ list: [1, 2] });
  });

  it('marks the root with nothing a reader can see: keys, symbols, JSON and clones are the value’s', () => {
    const value = { type: 'tool_result', at: 1, result: { sum: 3 } };
    const copy = immutableCopy(value);
    expect(Reflect.ownKeys(copy)).toEqual(['type', 'at', 'result']);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
    expect(structuredClone(copy)).toStrictEqual(value);
    expect(isImmutableCopy(structuredClone(copy))).toBe(false);
    expect(isImmutableCopy(copy.result)).toBe(false);
  });

  it('gives every empty array and object inside a copy as one shared frozen empty value', () => {
    const first = immutableCopy({ hints: [], stats: {}, batch: { pending: [], results: [] } });
    const second = immutableCopy({ labels: {}, hints: [] });

    expect(first.batch.pending).toBe(first.hints);
    expect(first.batch.results).toBe(second.hints);
    expect(second.labels).toBe(first.stats);
    expect(Object.isFrozen(first.hints) && Object.isFrozen(first.stats)).toBe(true);
    expect(first).toStrictEqual({ hints: [], stats: {}, batch: { pending: [], results: [] } });
    // A root is its own object, marked as a copy.
    const root = immutableCopy([]);
    expect(root).not.toBe(immutableCopy([]));
    expect(isImmutableCopy(root)).toBe(true);
  });

  it('returns an immutable copy or a primitive as it is', () => {
    const copy = immutableCopy({ a: [1] });
    expect(immutableCopy(copy)).toBe(copy);
    expect(immutableCopy('text')).toBe('text');
    expect(immutableCopy(null)).toBe(null);
  });

  it('reuses the copies of members that are the same objects at the same places as in the base', () => {
    const message = { role: 'user', content: 'hi' };
    const first = { context: { turn: 1, messages: [message] } };
    const firstCopy = immutableCopy(first);
    const reply = { role: 'assistant', content: 'hello' };
    const second = { context: { ...first.context, turn: 2, messages: [message, reply] } };
    const secondCopy = immutableCopy(second, { source: first, copy: firstCopy });
    expect(secondCopy).toStrictEqual(second);
    expect(secondCopy.context.messages[0]).toBe(firstCopy.context.messages[0]);
    expect(secondCopy.context.messages[1]).not.toBe(reply);
    expect(Object.isFrozen(secondCopy.context.messages[1])).toBe(true);
  });

  it('copies a member found elsewhere than in the base, or an equal but different object', () => {
    const shared = { n: 1 };
    const first = { a: shared, b: { n: 1 } };
    const firstCopy = immutableCopy(first);
    const secondCopy = immutableCopy({ a: { n: 1 }, b: shared }, { source: first, copy: firstCopy });
    expect(secondCopy.a).not.toBe(firstCopy.a);
    expect(secondCopy.b).not.toBe(firstCopy.a);
    expect(secondCopy).toEqual({ a: { n: 1 }, b: { n: 1 } });
  });

  it('keeps a __proto__ member as a member, as structuredClone does', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const copy = immutableCopy(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(copy).toStrictEqual(structuredClone(value));
  });

  it('falls back to structuredClone for values that are not plain data, and to its errors', () => {
    const when = new Date(0);
    const copy = immutableCopy({ when, map: new Map([[1, 2]]) });
    expect(copy.when).toEqual(when);
    expect(copy.when).not.toBe(when);
    expect(copy.map.get(1)).toBe(2);
    expect(isImmutableCopy(copy)).toBe(false);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const cycleCopy = immutableCopy(cyclic);
    expect(cycleCopy.self).toBe(cycleCopy);
    expect(() => immutableCopy({ fn: () => 1 })).toThrow(/could not be cloned/);
  });
});
