import { describe, expect, it } from 'vitest';
import { frozenInPlace, immutableAsIs, immutableCopy, isImmutableCopy } from './immutable-copy.ts';

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

  it('immutableAsIs: marks and freezes a plain object itself, its members as they are', () => {
    const context = { messages: [{ role: 'user', content: 'hi' }] };
    const snapshot = { value: { awaiting: 'clarification' }, context };
    const kept = immutableAsIs(snapshot);

    expect(kept).toBe(snapshot);
    expect(isImmutableCopy(kept)).toBe(true);
    expect(Object.isFrozen(kept)).toBe(true);
    expect(kept.context).toBe(context);
    expect(Object.isFrozen(context) || Object.isFrozen(snapshot.value)).toBe(false);
    expect(immutableAsIs(kept)).toBe(kept);
  });

  it('immutableAsIs: anything but a plain object that is not frozen is an immutableCopy of it', () => {
    const frozen = Object.freeze({ a: { b: 1 } });
    const copy = immutableAsIs(frozen);
    expect(copy).not.toBe(frozen);
    expect(copy).toStrictEqual(frozen);
    expect(isImmutableCopy(copy)).toBe(true);
    const list = [{ n: 1 }];
    expect(immutableAsIs(list)).not.toBe(list);
    expect(isImmutableCopy(immutableAsIs(new Date(0)))).toBe(false);
    expect(immutableAsIs('text')).toBe('text');
  });

  it('frozenInPlace: deep-freezes the value itself, no mark, passing over what is frozen already', () => {
    const shared = Object.freeze({ sum: 3 });
    const event = { type: 'tool_result', at: 1, result: { name: 'add', result: shared, tags: ['a'] } };
    const kept = frozenInPlace(event);

    expect(kept).toBe(event);
    for (const object of [kept, kept.result, kept.result.tags]) expect(Object.isFrozen(object)).toBe(true);
    expect(kept.result.result).toBe(shared);
    // Nothing added: a mark would take a property slot the event's literal does not have.
    expect(Reflect.ownKeys(kept)).toEqual(['type', 'at', 'result']);
    expect(isImmutableCopy(kept)).toBe(false);
  });

  it('frozenInPlace: a frozen root or anything but plain data is an immutableCopy instead', () => {
    const frozen = Object.freeze({ a: 1 });
    expect(frozenInPlace(frozen)).not.toBe(frozen);
    expect(isImmutableCopy(frozenInPlace(frozen))).toBe(true);
    const dated = { when: new Date(0) };
    expect(frozenInPlace(dated)).not.toBe(dated);
    expect(() => frozenInPlace({ fn: () => 1 })).toThrow(/could not be cloned/);
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
