/**
 * Child of test/tool-result-shapes.test.ts, run with `--allow-natives-syntax`: 100 runs waiting
 * for a clarification, and how many V8 maps (hidden classes) the `options` XState keeps for their
 * run actors and their `steps` actors have, and whether any still holds its input. Printed as one
 * JSON line.
 */
import { addTool } from '../../bench/support/reference-loop.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';

const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;
const runtime = createRuntime({
  agent: { id: 'shapes' },
  planner: {
    planStart: async () => ({ await: { clarification: { id: 'which', question: 'Which numbers?' } } }),
    planResume: async () => ({ finalResponse: { text: 'done' } }),
  },
  tools: [addTool],
  telemetry: false,
});
const runs = Array.from({ length: 100 }, () =>
  runtime.start({ messages: [{ role: 'user', content: 'Add' }] }),
);
while (runs.some((run) => run.awaiting === null)) await new Promise((resolve) => setTimeout(resolve, 5));
type Options = Record<string, unknown>;
const optionsOf = (actor: unknown) => (actor as { options: Options }).options;
const roots = runs.map((run) => optionsOf(run.actor));
const children = runs.map((run) => optionsOf(run.actor.getSnapshot().children.steps));
const distinct = (all: Options[]) => {
  const maps: Options[] = [];
  for (const options of all) if (!maps.some((seen) => sameMap(seen, options))) maps.push(options);
  return maps.length;
};
const inputs = [...roots, ...children].filter((options) => options.input !== undefined).length;
for (const run of runs) run.cancel('done');
await runtime.close();
console.log(
  JSON.stringify({ runs: runs.length, rootMaps: distinct(roots), childMaps: distinct(children), inputs }),
);
