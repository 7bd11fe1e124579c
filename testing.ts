/**
 * `toolwarden/testing`: planners and benches for tests, examples and deterministic apps.
 *
 * - {@link scriptedPlanner}: a planner that returns scripted steps in order (docs/planners.md).
 * - {@link policyHarness}: drives policies without a runtime (docs/policies.md §Testing a policy).
 *
 * @packageDocumentation
 */
export {
  type HarnessCall,
  type HarnessOutcome,
  type HarnessResult,
  type HarnessRun,
  type HarnessStep,
  PolicyHarness,
  type PolicyHarnessOptions,
  policyHarness,
} from './policies/testing.ts';
export { PlannerScriptExhaustedError, type ScriptedStep, scriptedPlanner } from './run/planner.ts';
