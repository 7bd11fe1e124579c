import { describe, expect, it } from 'vitest';
import { seededRandom } from './seeded-random.ts';

describe('seededRandom', () => {
  it('repeats its sequence for the same parts and differs for other parts', () => {
    const take = (...parts: (string | number)[]) => {
      const random = seededRandom(...parts);
      return Array.from({ length: 5 }, () => random.next());
    };

    expect(take(42, 'simple_python_0#0', 'kind')).toEqual(take(42, 'simple_python_0#0', 'kind'));
    expect(take(42, 'simple_python_0#0', 'kind')).not.toEqual(take(43, 'simple_python_0#0', 'kind'));
    expect(take(42, 'simple_python_0#0', 'kind')).not.toEqual(take(42, 'simple_python_1#0', 'kind'));
  });

  it('spreads int(n) over [0, n) evenly enough', () => {
    const random = seededRandom('spread');
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 8000; i++) counts[random.int(4)]!++;

    expect(counts.every((count) => count > 1800 && count < 2200)).toBe(true);
  });

  it('refuses to pick from an empty list', () => {
    expect(() => seededRandom(1).pick([])).toThrowError(RangeError);
  });
});
