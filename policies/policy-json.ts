/**
 * JSON values: what a policy may keep as its memory (`PolicyDecision.state`), because that memory
 * is persisted in the run's snapshot (docs/policies.md, §7) and must survive any store.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The first path at which `value` is not plain JSON, or undefined when it is. */
export function nonJsonPath(value: unknown, path = '$', seen = new Set<object>()): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (typeof value !== 'object') return path;
  if (seen.has(value)) return path;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const bad = nonJsonPath(value[i], `${path}[${i}]`, seen);
        if (bad) return bad;
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return path;
    for (const [key, item] of Object.entries(value)) {
      const bad = nonJsonPath(item, `${path}.${key}`, seen);
      if (bad) return bad;
    }
    return undefined;
  } finally {
    seen.delete(value);
  }
}

/** A deep, frozen copy: what a policy reads through its read-only context. */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
