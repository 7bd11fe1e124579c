/**
 * One block of the side-by-side (bench/support/rotation.ts): a variant's loop run again and again
 * for a fixed time, each run timed by the CPU time of its process (`process.cpuUsage`: user +
 * system, every thread of the process, so the garbage collector's work is counted, the pauses on
 * the main thread and its helper threads alike) and by the wall clock.
 *
 * @module
 */

/** One run of a variant's loop. */
export type Loop = () => Promise<void>;

export interface BlockLimits {
  /** The block's length: runs start until this much wall time (ms) has passed; at least one does. */
  ms: number;
  /** At most this many runs (default: no bound). */
  maxRuns?: number;
  /**
   * Runs start until the process has spent this much CPU time (ms) in the block (default: no
   * bound): a warm-up bound that does not shrink when the machine is loaded.
   */
  cpuMs?: number;
}

/** Per run, µs per step. */
export interface BlockSamples {
  cpuUsPerStep: number[];
  wallUsPerStep: number[];
}

/** Runs `loop` (a run of `steps` steps) for one block; returns its per-run samples. */
export async function runBlock(loop: Loop, steps: number, limits: BlockLimits): Promise<BlockSamples> {
  const samples: BlockSamples = { cpuUsPerStep: [], wallUsPerStep: [] };
  const maxRuns = limits.maxRuns ?? Number.POSITIVE_INFINITY;
  const maxCpuUs = (limits.cpuMs ?? Number.POSITIVE_INFINITY) * 1000;
  const startedAt = performance.now();
  let cpuUs = 0;
  do {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await loop();
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    cpuUs += used.user + used.system;
    samples.cpuUsPerStep.push((used.user + used.system) / steps);
    samples.wallUsPerStep.push((wall * 1000) / steps);
  } while (
    samples.cpuUsPerStep.length < maxRuns &&
    cpuUs < maxCpuUs &&
    performance.now() - startedAt < limits.ms
  );
  return samples;
}
