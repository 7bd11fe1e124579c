import { afterAll, describe, it } from 'vitest';
import { createRuntime } from '../runtime/create-runtime.ts';
import {
  eventTypesOf,
  runScenarios,
  type ScenarioEngine,
  scenarioTools,
  scriptsByRun,
} from './support/run-scenarios.ts';

/**
 * The run-actor scenarios (test/support/run-scenarios.ts) on the in-process runtime; the same
 * scenario code runs on Temporal in test/temporal.integration.test.ts.
 */
describe('run-actor scenarios, in process', () => {
  const { planner, script } = scriptsByRun();
  const runtime = createRuntime({ agent: { id: 'scenarios' }, planner, tools: Object.values(scenarioTools) });
  afterAll(() => runtime.close());
  const engine: ScenarioEngine = {
    waitMs: 5_000,
    async start({ runId, steps, messages, caps }) {
      script(runId, steps);
      const run = runtime.start({ runId, messages, ...(caps ? { caps } : {}) });
      return {
        runId,
        awaiting: async () => {
          const awaiting = run.awaiting;
          if (!awaiting) return null;
          return 'id' in awaiting && awaiting.id !== undefined
            ? { kind: awaiting.kind, id: awaiting.id }
            : { kind: awaiting.kind };
        },
        provideClarification: (answer) => run.provideClarification(answer),
        provideToolResults: (results) => run.provideToolResults(results),
        confirm: (answer) => run.confirm(answer),
        cancel: async (reason) => run.cancel(reason),
        result: () => run.result(),
        eventTypes: () => eventTypesOf(run.events$),
      };
    },
  };
  const unique = (name: string) => `${name}-${Date.now().toString(36)}`;
  for (const [name, scenario] of Object.entries(runScenarios)) it(name, () => scenario(engine, unique));
});
