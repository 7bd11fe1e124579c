/**
 * A tiny seeded PRNG (mulberry32) keyed by strings, so that every choice the mistake model makes
 * is reproducible from `(seed, entry, purpose)` alone and independent of every other choice.
 */
export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n); n ≥ 1. */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(...parts: (string | number)[]): SeededRandom {
  let state = fnv1a(parts.map(String).join('\u0000'));
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[int(items.length)]!;
    },
  };
}

/** 32-bit FNV-1a of the UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
