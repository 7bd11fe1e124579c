import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { waitUntil } from './wait-until.ts';

// A deadline is a timestamp: the wait fires when the clock reaches it, never before, however it
// arms its timers (a far deadline is first waited for in whole seconds, then the rest).

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('waitUntil', () => {
  it.each([1, 1_999, 2_001, 5_500, 300_000, 300_999])('fires exactly at a deadline %i ms away', (ms) => {
    const fired: number[] = [];
    waitUntil(Date.now() + ms, () => fired.push(Date.now()));
    vi.advanceTimersByTime(ms - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([1_000_000 + ms]);
    vi.advanceTimersByTime(5_000);
    expect(fired).toHaveLength(1);
  });

  it('fires at once for a deadline passed, and never once canceled', () => {
    const fired: string[] = [];
    waitUntil(Date.now() - 5, () => fired.push('past'));
    expect(fired).toEqual(['past']);
    const cancel = waitUntil(Date.now() + 10_000, () => fired.push('canceled'));
    vi.advanceTimersByTime(9_500);
    cancel();
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual(['past']);
  });

  it('waits out a deadline further than setTimeout reaches (~24.8 days)', () => {
    const fired: number[] = [];
    const far = 30 * 24 * 3_600_000;
    waitUntil(Date.now() + far, () => fired.push(Date.now()));
    vi.advanceTimersByTime(far - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([1_000_000 + far]);
  });
});
