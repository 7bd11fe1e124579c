import { z } from 'zod';
import { type Planner, scriptedPlanner } from '../../run/planner.ts';
import type { RunStore, StoredRun } from '../../stores/run-store.ts';
import { defineTool } from '../../tools/define-tool.ts';

/**
 * The reference loop every benchmark measures (FACTS.md "Peer speed on the reference loop"):
 * STEPS planner turns with one zod-validated tool call each, then a final response.
 */
export const STEPS = 10;

/** The tool's work: asynchronous, as a tool's is. */
export const add = async ({ a, b }: { a: number; b: number }) => ({ sum: a + b });

export const addTool = defineTool({
  id: 'bench.add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  output: z.object({ sum: z.number() }),
  execute: add,
});

const script = (steps: number) =>
  scriptedPlanner([
    ...Array.from({ length: steps }, (_, i) => ({
      toolCalls: [{ name: 'bench.add', toolCallId: `call-${i + 1}`, input: { a: i, b: 1 } }],
    })),
    { finalResponse: { text: 'done' } },
  ]);

/**
 * The scripted planner, started afresh for every run (a runtime holds one planner): `steps` turns
 * of one `bench.add` call, then a final response `done`. One run at a time.
 */
export function resettablePlanner(steps = STEPS): Planner & { reset(): void } {
  let current = script(steps);
  return {
    reset: () => {
      current = script(steps);
    },
    planStart: (input) => current.planStart(input),
    planResume: (input) => current.planResume(input),
  };
}

/** A store that keeps nothing: isolates the run actor's own cost from persistence. */
export function discardingStore(): RunStore {
  const stored = (runId: string, version: number): StoredRun => ({ runId, version }) as unknown as StoredRun;
  return {
    create: async (run) => stored(run.runId, 1),
    load: async () => undefined,
    save: async (runId, update) => stored(runId, update.expectedVersion + 1),
    list: async () => [],
    appendEvents: async () => {},
    readEvents: async () => [],
    delete: async () => false,
    close: async () => {},
  };
}
