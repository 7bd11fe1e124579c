/**
 * `toolwarden/temporal`: runs on Temporal (docs/temporal.md). The same run machine as a durable
 * workflow; planner turns, validation, tool calls and policy reviews as activities. Needs the
 * optional peers `@temporalio/client`, `@temporalio/worker`, `@temporalio/workflow`,
 * `@temporalio/activity` (1.24).
 *
 * @module
 */
export {
  createActivities,
  HEARTBEAT_INTERVAL_MS,
  type PlanStepInput,
  type ToolwardenActivities,
} from './activities.ts';
export { writeWorkflowBundle } from './bundle.ts';
export {
  DEFAULT_INLINE_BYTES,
  DEFAULT_MAX_INLINE_BYTES,
  folderPayloadStore,
  isPayloadRef,
  memoryPayloadStore,
  PayloadMissingError,
  type PayloadOptions,
  type PayloadRef,
  type PayloadStore,
} from './payload-store.ts';
export { RUN_MEMO, type RunMemo } from './run-visibility.ts';
export {
  TemporalRunAnswerError,
  type TemporalRunHandle,
  TemporalRunIdInUseError,
  type TemporalRuntime,
  type TemporalRuntimeOptions,
  type TemporalStartOptions,
  temporalRuntime,
} from './temporal-runtime.ts';
export type { ArchiveTranscriptInput } from './transcript-archive.ts';
export { TranscriptCache, TranscriptMismatchError } from './transcript-cache.ts';
export type { ArchivedTranscript, TranscriptChunk, TranscriptPage, TranscriptRef } from './transcript-ref.ts';
export {
  createTemporalWorker,
  type TemporalWorkerOptions,
  WORKER_DEFAULTS,
  WORKFLOWS_PATH,
} from './worker.ts';
export {
  type ContinuedRun,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_RESULT_TOOL_RESULTS,
  RUN_WORKFLOW,
  type RunEventsPage,
  type RunWorkflowInput,
  type RunWorkflowResult,
  type RunWorkflowStatus,
  SEARCH_ATTRIBUTES,
} from './workflow-types.ts';
