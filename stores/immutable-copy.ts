/**
 * Deep-frozen copies of JSON-like values, which an in-memory store keeps (and hands back) without
 * copying them again: the in-memory store's fast path (docs/durability.md §Memory store).
 *
 * The in-memory store must keep what it is given safe from later changes by the caller, so it
 * deep-copies it, unless it is given an immutable value, marked as such here. The run persister
 * hands over each event deep-frozen in place ({@link frozenInPlace}: no copy)
 * and each snapshot as it is ({@link immutableAsIs}): a run's context is immutable by construction (XState's `assign`
 * builds new objects, nothing changes one in place) and holds toolwarden's own copies of what
 * came in (plan results, tool results and inputs are JSON-copied at the boundary, the app's
 * messages at the start), and the rest of a persisted snapshot is new at every write or XState's.
 * Copying the snapshot at every write cost O(run) CPU a step, and ~2.5 KB a run at its first
 * turn, ~5.5 KB after 10 steps, of heap; copying each event ~1 µs (4.4 a step) and ~1 KB after
 * 10 steps (issue 29 items 1 and 3).
 *
 * | value                                        | copy                                          |
 * |----------------------------------------------|-----------------------------------------------|
 * | primitive (`undefined` included)             | itself                                        |
 * | an immutable copy                            | itself                                        |
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
 */
export function immutableCopy<T>(value: T): T {
  if (isImmutableCopy(value)) return value;
  try {
    return copyMember(value, 0) as T;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return structuredClone(value);
  }
}

/**
 * `value` itself, marked immutable and frozen (its root only; nothing is copied), when it is a
 * plain object not frozen yet; otherwise {@link immutableCopy}(value). For a value its maker
 * built for the store and never changes again, holding objects their owners never change in
 * place (a run's persisted snapshot: a new wrapper at every write around the run's context and
 * XState's state value and child snapshots, run-persister.ts).
 */
export function immutableAsIs<T>(value: T): T {
  if (typeof value !== 'object' || value === null || isImmutableCopy(value)) return value;
  if (Array.isArray(value) || !isPlainObject(value) || Object.isFrozen(value)) return immutableCopy(value);
  return sealed(value, 0);
}

/**
 * `value` itself deep-frozen in place (no copy, no mark), when it is plain data and not frozen
 * yet; otherwise {@link immutableCopy}(value). Either way deep-frozen when the result is frozen.
 * For a value its maker hands over and never changes again, made of objects nobody changes in
 * place (a run's event: its own objects and the run context's, run-persister.ts). No mark: the
 * writer says so instead (`NewRunEvent.frozen`); a private field on an event whose literal has
 * no free slot cost a 24-byte property array per event. An object inside it that is frozen
 * already is passed over as deep-frozen: everything toolwarden freezes, it freezes deeply
 * (these values, plan inputs, outcomes, policy views, the copies made here).
 */
export function frozenInPlace<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return immutableCopy(value);
  try {
    freezeMembers(value, 0);
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return immutableCopy(value);
  }
  return Object.freeze(value);
}

/** Deep-freezes the members of the plain object or array `value` (not `value` itself). */
function freezeMembers(value: object, depth: number): void {
  if (depth === MAX_DEPTH) throw NOT_PLAIN;
  if (!Array.isArray(value) && !isPlainObject(value)) throw NOT_PLAIN;
  const members = value as Record<string, unknown>;
  for (const key in members) {
    const member = members[key];
    if (typeof member !== 'object' || member === null) {
      if (typeof member === 'function' || typeof member === 'symbol') throw NOT_PLAIN;
      continue;
    }
    if (Object.isFrozen(member)) continue;
    freezeMembers(member, depth + 1);
    Object.freeze(member);
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function copyMember(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'function' || typeof value === 'symbol') throw NOT_PLAIN;
    return value;
  }
  if (depth === MAX_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(value)) {
    const length = value.length;
    if (length === 0 && depth > 0) return EMPTY_ARRAY;
    const copy: unknown[] = new Array(length);
    for (let index = 0; index < length; index++) {
      if (index in value) copy[index] = copyMember(value[index], depth + 1);
    }
    return sealed(copy, depth);
  }
  if (!isPlainObject(value)) throw NOT_PLAIN;
  const members = value as Record<string, unknown>;
  const keys = Object.keys(members);
  if (keys.length === 0 && depth > 0) return EMPTY_OBJECT;
  const copy: Record<string, unknown> = {};
  for (const key of keys) setMember(copy, key, copyMember(members[key], depth + 1));
  return sealed(copy, depth);
}

function setMember(copy: Record<string, unknown>, key: string, member: unknown): void {
  // `copy.__proto__ = x` would set the prototype; structuredClone keeps it as a member.
  if (key === '__proto__')
    Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
  else copy[key] = member;
}

/** Freezes a copied object; the copy's root (depth 0) is marked first (a frozen object takes no field). */
function sealed<T extends object>(copy: T, depth: number): T {
  if (depth === 0) new ImmutableRoot(copy);
  return Object.freeze(copy);
}
