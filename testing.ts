/**
 * `toolwarden/testing`: planners and benches for tests, examples and deterministic apps.
 *
 * - {@link scriptedPlanner}: a planner that returns scripted steps in order (docs/planners.md).
 * - {@link policyHarness}: drives policies without a runtime (docs/policies.md §Testing a policy).
 * - {@link compareRuns}: two runs step by step, each field `same | changed` (docs/replay.md §Compare runs).
 * - {@link replayRuns}: stored runs replayed with a new planner or policy set, compared (`npm run eval -- --against`).
 * - {@link matchesTrajectory}: a run's tool calls against an expected trajectory, in four modes (docs/replay.md §Trajectories).
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
export {
  type ChangedCall,
  type CompareOptions,
  compareRuns,
  type Label,
  type RunComparison,
  type StepComparison,
  type StepField,
} from './runtime/compare-runs.ts';
export {
  type CallRecord,
  type RecordedRun,
  type RunLike,
  type RunRecord,
  recordedRun,
  runRecord,
  type StepRecord,
} from './runtime/run-record.ts';
export {
  type ActualCall,
  type ExpectedCall,
  type InputMatcher,
  matchesTrajectory,
  type Trajectory,
  type TrajectoryMatch,
  type TrajectoryMismatch,
  type TrajectoryMode,
} from './testing/match-trajectory.ts';
export {
  ReplayDivergedError,
  type ReplayedRun,
  type ReplayOptions,
  type ReplayReport,
  replayRuns,
  replayStoredRun,
} from './testing/replay-runs.ts';
