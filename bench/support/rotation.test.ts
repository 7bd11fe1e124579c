import { describe, expect, it } from 'vitest';
import { aggregateBlocks, type MeasuredBlock, percentile, rotationSchedule, summarize } from './rotation.ts';

describe('rotationSchedule', () => {
  it('runs the variants in turn, A B C … A B C, the warm-up rounds first', () => {
    const blocks = rotationSchedule(['A', 'B', 'C'], 2, 1);
    expect(blocks.map((b) => b.variant).join('')).toBe('ABCABCABC');
    expect(blocks.map((b) => b.round)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
    expect(blocks.map((b) => b.warmUp)).toEqual([true, true, true, false, false, false, false, false, false]);
  });

  it('gives every variant the same number of measured blocks, and none without a warm-up round', () => {
    const blocks = rotationSchedule(['floor', 'runtime', 'ai'], 3, 0);
    for (const variant of ['floor', 'runtime', 'ai'])
      expect(blocks.filter((b) => b.variant === variant && !b.warmUp)).toHaveLength(3);
    expect(blocks.some((b) => b.warmUp)).toBe(false);
  });

  it('refuses a negative or fractional round count and an empty variant list', () => {
    expect(() => rotationSchedule(['A'], -1)).toThrow(RangeError);
    expect(() => rotationSchedule(['A'], 1.5)).toThrow(RangeError);
    expect(() => rotationSchedule([], 2)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('gives the median, the quartiles (interpolated between ranks) and the range, whatever the order', () => {
    expect(summarize([5, 1, 4, 2, 3])).toEqual({ n: 5, median: 3, p25: 2, p75: 4, min: 1, max: 5 });
    expect(summarize([4, 1, 3, 2])).toEqual({ n: 4, median: 2.5, p25: 1.75, p75: 3.25, min: 1, max: 4 });
  });

  it('is NaN for no samples', () => {
    expect(summarize([]).median).toBeNaN();
    expect(percentile([], 0.5)).toBeNaN();
  });
});

describe('aggregateBlocks', () => {
  const block = (variant: string, round: number, samples: number[]): MeasuredBlock => ({
    variant,
    round,
    warmUp: round === 0,
    samples,
  });

  it('leaves out the warm-up blocks, pools the measured samples, and keeps the range of block medians', () => {
    const [floor] = aggregateBlocks(
      [block('floor', 0, [1000, 900]), block('floor', 1, [10, 20, 30]), block('floor', 2, [40])],
      { yardstick: 'floor', baseline: 'ai' },
    );
    expect(floor).toMatchObject({ variant: 'floor', n: 4, median: 25, min: 10, max: 40, blocks: 2 });
    expect(floor!.blockMedians).toEqual({ min: 20, max: 40 });
  });

  it('divides each median by the yardstick’s and by the baseline’s, in the order the variants first ran', () => {
    const aggregates = aggregateBlocks(
      [
        block('floor', 0, [99]),
        block('runtime', 0, [99]),
        block('ai', 0, [99]),
        block('floor', 1, [40]),
        block('runtime', 1, [100]),
        block('ai', 1, [200]),
      ],
      { yardstick: 'floor', baseline: 'ai' },
    );
    expect(aggregates.map((a) => [a.variant, a.vsYardstick, a.vsBaseline])).toEqual([
      ['floor', 1, 0.2],
      ['runtime', 2.5, 0.5],
      ['ai', 5, 1],
    ]);
  });

  it('gives NaN ratios when the yardstick or the baseline was not measured', () => {
    const [only] = aggregateBlocks([block('runtime', 1, [100])], { yardstick: 'floor', baseline: 'ai' });
    expect(only!.vsYardstick).toBeNaN();
    expect(only!.vsBaseline).toBeNaN();
  });
});
