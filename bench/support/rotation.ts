/**
 * The side-by-side's measurement plan and its arithmetic (issue 29 item 5; docs/benchmarks.md
 * §Side by side): the variants take turns in fixed time blocks, A B C … A B C, round after round,
 * so a change in the machine's load hits every variant alike; warm-up rounds, if any, come first
 * and are not counted. Pure functions: what the harness runs (`rotationSchedule`), what it reports from the
 * samples it got (`aggregateBlocks`, `summarize`).
 *
 * | function | in | out |
 * |---|---|---|
 * | `rotationSchedule` | variant names, measured rounds, warm-up rounds | the blocks in the order they run |
 * | `summarize` | samples (µs per step) | median, quartiles, min–max |
 * | `aggregateBlocks` | the blocks with their samples | per variant: the measured samples' summary, the range of block medians, ratios to the yardstick and the AI SDK |
 *
 * @module
 */

/** One turn of one variant. */
export interface Block {
  /** 0-based; the warm-up rounds come first. */
  round: number;
  variant: string;
  /** Not counted. */
  warmUp: boolean;
}

/**
 * The blocks in the order they run: `warmUpRounds + rounds` rounds (no warm-up round unless
 * asked), each every variant once in the order given (A B C … A B C).
 * @throws RangeError when rounds or warm-up rounds are not whole numbers ≥ 0, or no variant is given.
 */
export function rotationSchedule(variants: readonly string[], rounds: number, warmUpRounds = 0): Block[] {
  if (!Number.isInteger(rounds) || rounds < 0 || !Number.isInteger(warmUpRounds) || warmUpRounds < 0)
    throw new RangeError(`rounds must be whole numbers ≥ 0: rounds ${rounds}, warm-up ${warmUpRounds}`);
  if (variants.length === 0) throw new RangeError('no variant to schedule');
  const blocks: Block[] = [];
  for (let round = 0; round < warmUpRounds + rounds; round++)
    for (const variant of variants) blocks.push({ round, variant, warmUp: round < warmUpRounds });
  return blocks;
}

/** Percentile `p` (0–1) of ascending `sorted`, interpolated linearly between ranks; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = p * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (rank - below);
}

/** Median and spread of samples. */
export interface Summary {
  n: number;
  median: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: percentile(sorted, 0.5),
    p25: percentile(sorted, 0.25),
    p75: percentile(sorted, 0.75),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** A block that ran, with what it measured: CPU µs per step, one sample per run. */
export interface MeasuredBlock extends Block {
  samples: readonly number[];
}

/** One variant over its measured blocks. */
export interface Aggregate extends Summary {
  variant: string;
  /** Measured blocks. */
  blocks: number;
  /** Lowest and highest median of a single measured block: how much the load moved it. */
  blockMedians: { min: number; max: number };
  /** `median` ÷ the yardstick's median (NaN when the yardstick was not measured). */
  vsYardstick: number;
  /** `median` ÷ the baseline's median (NaN when the baseline was not measured). */
  vsBaseline: number;
}

/**
 * Per variant, in the order they first ran: the summary of every sample of its measured blocks
 * (warm-up blocks are left out), the range of its block medians, and its median's ratio to the
 * `yardstick`'s and to the `baseline`'s.
 */
export function aggregateBlocks(
  blocks: readonly MeasuredBlock[],
  names: { yardstick: string; baseline: string },
): Aggregate[] {
  const byVariant = new Map<string, MeasuredBlock[]>();
  for (const block of blocks) {
    if (!byVariant.has(block.variant)) byVariant.set(block.variant, []);
    if (!block.warmUp) byVariant.get(block.variant)!.push(block);
  }
  const aggregates = [...byVariant].map(([variant, measured]) => {
    const medians = measured.map((b) => summarize(b.samples).median).filter((m) => !Number.isNaN(m));
    return {
      variant,
      ...summarize(measured.flatMap((b) => b.samples)),
      blocks: measured.length,
      blockMedians: {
        min: medians.length ? Math.min(...medians) : Number.NaN,
        max: medians.length ? Math.max(...medians) : Number.NaN,
      },
      vsYardstick: Number.NaN,
      vsBaseline: Number.NaN,
    };
  });
  const medianOf = (name: string) => aggregates.find((a) => a.variant === name)?.median ?? Number.NaN;
  const yardstick = medianOf(names.yardstick);
  const baseline = medianOf(names.baseline);
  for (const a of aggregates) {
    a.vsYardstick = a.median / yardstick;
    a.vsBaseline = a.median / baseline;
  }
  return aggregates;
}
