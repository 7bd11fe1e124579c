import type { RunContext } from '../machines/run-context.ts';

/** One kept step of a run. */
export interface Step {
  /** Events the run had emitted when this snapshot was persisted. */
  events: number;
  /** The persisted snapshot (immutable: the runtime writes a new one per step). */
  snapshot: { value: unknown; context: RunContext } & Record<string, unknown>;
}

/**
 * The persisted snapshot of every step of the most recent runs, in memory (the runtime's hook in
 * `host-run.ts` calls {@link record}; `runtime.fork`, run-fork.ts, reads them); the oldest run's steps go first past `maxRuns`. A kept run
 * of 30 tool calls (61 steps) holds ~80 KB of heap (measured 2026-12-01, Node 24, after GC).
 */
export class StepHistory {
  private readonly runs = new Map<string, Step[]>();
  constructor(
    private readonly maxRuns = 100,
    private readonly maxSteps = 500,
  ) {}

  record(runId: string, snapshot: unknown, events: number): void {
    let steps = this.runs.get(runId);
    if (!steps) {
      steps = [];
      this.runs.set(runId, steps);
      if (this.runs.size > this.maxRuns) this.runs.delete(this.runs.keys().next().value!);
    }
    steps.push({ events, snapshot: snapshot as Step['snapshot'] });
    if (steps.length > this.maxSteps) steps.shift();
  }

  steps(runId: string): readonly Step[] {
    return this.runs.get(runId) ?? [];
  }
}
