/**
 * Deep-frozen copies of JSON-like values, which an in-memory store keeps (and hands back) without
 * copying them again: the in-memory store's fast path (docs/durability.md).
 *
 * The in-memory store must keep what it is given safe from later changes by the caller, so it
 * deep-copies it. For a run's snapshot that is the whole transcript at every step boundary,
 * twice (in, and the returned run): O(run) per write, about half of the default runtime's cost
 * per step (~195 µs of ~400 on `npm run bench`). A run context is immutable, though (XState's
 * `assign` builds new objects; nothing changes one in place), so successive snapshots of a run
 * share most of their objects. The run persister copies each snapshot against the previous one
 * (`base`): a member that is the very object found at the same place in the previous source
 * reuses its copy. A write then costs what changed since the last one, and the store keeps the
 * result as it is ({@link isImmutableCopy}).
 *
 * | value                                        | copy                                          |
 * |----------------------------------------------|-----------------------------------------------|
 * | primitive (`undefined` included)             | itself                                        |
 * | an immutable copy                            | itself                                        |
 * | the object at the same place in `base.source`| its copy in `base.copy`                       |
 * | plain object / array                         | member by member, frozen                      |
 * | anything else (Date, Map, class instance, a cycle, ...) | the whole value through `structuredClone`, not frozen (the store copies it again) |
 *
 * An object reached twice in one value is copied twice (JSON stores keep no identity either).
 * Errors are `structuredClone`'s (`DataCloneError` for a function or a symbol).
 *
 * Only the copy's root is marked as an immutable copy, stores only ever ask about roots. The mark
 * is a private field set on the root before it is frozen (a class whose base constructor returns
 * the object it is given), invisible to `Object.keys`, JSON, `structuredClone` and deep equality.
 * A `WeakSet` of roots cost ~0.3 µs an entry and ~26 bytes of table per root kept, every event
 * and snapshot of every run held in memory (issue 29 item 3).
 *
 * @module
 */

/** Returns the object it is given: a subclass's fields land on that object (the mark below). */
class Given {
  constructor(value: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point: the subclass marks `value`
    return value as Given;
  }
}

/** Marks roots made by {@link immutableCopy}: deep-frozen plain data. */
class ImmutableRoot extends Given {
  readonly #root = true;
  static has(value: object): boolean {
    return #root in value;
  }
}

/** The previous call's value and its copy: what {@link immutableCopy} may reuse. */
export interface CopyBase {
  source: unknown;
  copy: unknown;
}

/** Whether a store may keep `value` without copying it: a primitive or an {@link immutableCopy}. */
export function isImmutableCopy(value: unknown): boolean {
  return typeof value !== 'object' || value === null || ImmutableRoot.has(value);
}

/**
 * Every empty array and object inside a copy is one of these two: frozen and empty, they cannot
 * be told apart but by identity, which JSON data does not have. A run context holds ~10 (hints,
 * the batch's lists, tool stats, labels), each ~40 bytes again in every run's stored snapshot.
 */
const EMPTY_ARRAY: readonly unknown[] = Object.freeze([]);
const EMPTY_OBJECT: Readonly<Record<string, unknown>> = Object.freeze({});

/** Thrown inside a copy that meets a value it does not copy itself; the caller falls back. */
const NOT_PLAIN = Symbol('not plain data');
/** Deeper than any run snapshot; past it the value is taken for a cycle. */
const MAX_DEPTH = 256;

/**
 * A deep-frozen copy of `value` that {@link isImmutableCopy} recognizes, or, when `value` holds
 * anything but plain objects, arrays and primitives, `structuredClone(value)`.
 *
 * @param base the previous value of the same thing and its copy. Objects of `value` that are
 *   the same objects at the same places in `base.source` are taken as unchanged: only for values
 *   whose objects are never changed in place (a run's context).
 */
export function immutableCopy<T>(value: T, base?: CopyBase): T {
  if (isImmutableCopy(value)) return value;
  try {
    return copyMember(value, base?.source, base?.copy, 0) as T;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return structuredClone(value);
  }
}

function copyMember(value: unknown, source: unknown, copied: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'function' || typeof value === 'symbol') throw NOT_PLAIN;
    return value;
  }
  if (value === source && copied !== undefined) return copied;
  if (depth === MAX_DEPTH) throw NOT_PLAIN;
  const sameShape = typeof source === 'object' && source !== null && copied !== undefined;
  if (Array.isArray(value)) {
    const length = value.length;
    if (length === 0 && depth > 0) return EMPTY_ARRAY;
    const copy: unknown[] = new Array(length);
    if (sameShape && Array.isArray(source)) {
      // An appended transcript: every entry but the new ones is the very object the previous
      // value had at that index, whose copy is reused without a call per entry.
      const beforeCopy = copied as unknown[];
      const shared = Math.min(length, source.length, beforeCopy.length);
      let index = 0;
      for (; index < shared; index++) {
        const member = value[index];
        const reused = member === source[index] ? beforeCopy[index] : undefined;
        if (reused !== undefined && typeof member === 'object' && member !== null) copy[index] = reused;
        else if (index in value)
          copy[index] = copyMember(member, source[index], beforeCopy[index], depth + 1);
      }
      for (; index < length; index++) {
        if (index in value) copy[index] = copyMember(value[index], undefined, undefined, depth + 1);
      }
      return sealed(copy, depth);
    }
    for (let index = 0; index < length; index++) {
      if (index in value) copy[index] = copyMember(value[index], undefined, undefined, depth + 1);
    }
    return sealed(copy, depth);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const members = value as Record<string, unknown>;
  const keys = Object.keys(members);
  if (keys.length === 0 && depth > 0) return EMPTY_OBJECT;
  const before = sameShape && !Array.isArray(source) ? (source as Record<string, unknown>) : undefined;
  const beforeCopy = before && (copied as Record<string, unknown>);
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    const member = before
      ? copyMember(members[key], before[key], beforeCopy![key], depth + 1)
      : copyMember(members[key], undefined, undefined, depth + 1);
    // `copy.__proto__ = x` would set the prototype; structuredClone keeps it as a member.
    if (key === '__proto__') {
      Object.defineProperty(copy, key, {
        value: member,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      copy[key] = member;
    }
  }
  return sealed(copy, depth);
}

/** Freezes a copied object; the copy's root (depth 0) is marked first (a frozen object takes no field). */
function sealed<T extends object>(copy: T, depth: number): T {
  if (depth === 0) new ImmutableRoot(copy);
  return Object.freeze(copy);
}
