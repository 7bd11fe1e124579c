/**
 * Child of test/tool-result-shapes.test.ts, run with `--allow-natives-syntax`: 200 runs at once,
 * 3 tool calls each, and how many V8 maps (hidden classes) their `tool_result` events' results
 * have. Printed as one JSON line.
 */
import { addTool, discardingStore } from '../../bench/support/reference-loop.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import type { ToolResultJSON } from '../../tools/tool-result.ts';

const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;
const turns = new Map<string, number>();
const plan = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
  const turn = (turns.get(input.runId) ?? 0) + 1;
  turns.set(input.runId, turn);
  if (turn <= 3) return { toolCalls: [{ name: 'bench.add', input: { a: turn, b: 1 } }] };
  return { finalResponse: { text: 'done' } };
};
const runtime = createRuntime({
  agent: { id: 'shapes' },
  planner: { planStart: plan, planResume: plan },
  tools: [addTool],
  store: discardingStore(),
  telemetry: false,
});
const results: ToolResultJSON[] = [];
const runs = Array.from({ length: 200 }, () =>
  runtime.start({ messages: [{ role: 'user', content: 'Add' }] }),
);
for (const run of runs)
  run.events$.subscribe((event) => {
    if (event.type === 'tool_result') results.push(event.result);
  });
await Promise.all(runs.map((run) => run.result()));
await runtime.close();
const maps: ToolResultJSON[] = [];
for (const result of results) if (!maps.some((seen) => sameMap(seen, result))) maps.push(result);
console.log(JSON.stringify({ results: results.length, maps: maps.length }));
