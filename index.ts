/**
 * toolwarden's core API: the runtime, the tool boundary, policies, plugins and the run's
 * vocabulary. The contract is in `docs/` (start with `docs/architecture.md`); each module's
 * docstring names the section it implements.
 *
 * Integrations with heavy dependencies live on their own subpaths so an app pays only for what
 * it uses: `toolwarden/sqlite`, `toolwarden/postgres`, `toolwarden/inspector`,
 * `toolwarden/diagram`, `toolwarden/telemetry`, `toolwarden/telemetry/setup`, `toolwarden/testing`.
 *
 * @packageDocumentation
 */

export {
  createRuntime,
  type Runtime,
  type RuntimeListFilter,
  type RuntimeOptions,
  type StartOptions,
} from './create-runtime.ts';
export type { RunAwaiting } from './machines/run-awaiting.ts';
export type { InDoubtCall, InDoubtResolution, RunContext } from './machines/run-context.ts';
// --- The run machine (docs/architecture.md): for diagrams, inspectors and durable engines -----
export { PARENT_RUN_LABEL, PARENT_TOOL_CALL_LABEL } from './machines/run-context.ts';
export {
  type RunActorRef,
  type RunMachine,
  type RunMachineEvent,
  runMachine,
} from './machines/run-machine.ts';
export type {
  RunMachineAction,
  RunMachineActionName,
  RunMachineGuard,
  RunMachineGuardName,
  RunStateValue,
} from './machines/run-machine-types.ts';
export {
  type EffectCall,
  initialRunTransition,
  type PersistedRunSnapshot,
  type RunEffect,
  type RunStep,
  restoredRunEffects,
  runTransition,
} from './machines/run-transition.ts';
export {
  BUDGET_EXHAUSTED,
  CostBudgetError,
  type CostBudgetOptions,
  costBudget,
} from './plugins/cost-budget.ts';
// --- Plugins (docs/policies.md §Plugins) ------------------------------------------------------
export {
  definePlugin,
  type PlanInvocation,
  type Plugin,
  PluginDefinitionError,
  type RunInfo,
  type ToolInvocation,
} from './plugins/define-plugin.ts';
export {
  fromLabel,
  fromMeta,
  type InjectedFieldSource,
  type InjectionNote,
  injectFields,
} from './plugins/inject-fields.ts';
// --- Policies (docs/policies.md) ---------------------------------------------------------------
export {
  type AskOnMissingFieldsOptions,
  askOnMissingFields,
} from './policies/builtins/ask-on-missing-fields.ts';
export { type CircuitBreakerOptions, circuitBreaker } from './policies/builtins/circuit-breaker.ts';
export {
  type CostBalance,
  type CostHold,
  type CostLedger,
  CostLedgerInputError,
  type CostReservationRequest,
  memoryCostLedger,
} from './policies/builtins/cost-ledger.ts';
export { estimatePromptTokens, type ModelPrice } from './policies/builtins/cost-prices.ts';
export { type NoProgressOptions, noProgress } from './policies/builtins/no-progress.ts';
export { type RateLimitBackoffOptions, rateLimitBackoff } from './policies/builtins/rate-limit-backoff.ts';
export {
  type RepeatedInvalidCallOptions,
  repeatedInvalidCall,
} from './policies/builtins/repeated-invalid-call.ts';
export {
  type RestrictOnInvalidArgumentsOptions,
  restrictOnInvalidArguments,
} from './policies/builtins/restrict-on-invalid-arguments.ts';
export { type TimeBudgetOptions, timeBudget } from './policies/builtins/time-budget.ts';
export { type ToolListOptions, toolAllowlist, toolDenylist } from './policies/builtins/tool-allowlist.ts';
export {
  type CanonicalOptions,
  callFingerprint,
  canonicalJson,
  valueFingerprint,
} from './policies/call-fingerprint.ts';
export { clarificationFromHint } from './policies/clarification-from-hint.ts';
export { defaultPolicies } from './policies/default-policies.ts';
export {
  definePolicy,
  type InDoubtAction,
  type InDoubtChoice,
  type Policy,
  type PolicyContext,
  type PolicyDecision,
  PolicyDecisionSchema,
  type PolicyDefinition,
  PolicyDefinitionError,
  type PolicyHookName,
  type PolicyHookResult,
  type PolicyToolState,
} from './policies/define-policy.ts';
export type { PolicyRunContext, ToolInfo } from './policies/policy-consultation.ts';
export { DEFAULT_POLICY_TIMEOUT_MS } from './policies/policy-engine.ts';
export { PolicyError, PolicyTimeoutError } from './policies/policy-error.ts';
export type { JsonValue } from './policies/policy-json.ts';
export type { ToolSelector } from './policies/tool-selector.ts';
export { matchesTool } from './policies/tool-selector.ts';
// --- The run's vocabulary: planner contract, awaits, events, caps, messages ------------------
export {
  type Caps,
  CapsSchema,
  type CapsState,
  CapsStateSchema,
  DEFAULT_CAPS,
  type FinalizeReason,
} from './run/caps.ts';
export { type FinalizeNotice, finalizeMessage, type NotMadeCall } from './run/finalize-notice.ts';
export { type Message, MessageSchema } from './run/message.ts';
export {
  type AwaitClarification,
  AwaitClarificationSchema,
  type AwaitConfirmation,
  AwaitConfirmationSchema,
  type AwaitExternalTools,
  AwaitExternalToolsSchema,
  type ParsedPlanResult,
  type PlanInput,
  type PlannedToolCall,
  PlannedToolCallSchema,
  type Planner,
  type PlannerModel,
  type PlanResult,
  PlanResultSchema,
  type PlanResumeInput,
} from './run/planner.ts';
export {
  type ApprovalRememberedEvent,
  type ApprovalRevokedEvent,
  type AwaitClarificationEvent,
  type AwaitConfirmationEvent,
  type AwaitExternalToolsEvent,
  type PlannerNoteEvent,
  type PolicyDecisionEvent,
  type PolicyDecisionRecord,
  PolicyDecisionRecordSchema,
  type RememberedApproval,
  RememberedApprovalSchema,
  type RetryHintEvent,
  type RunCanceledEvent,
  type RunCompletedEvent,
  type RunEvent,
  type RunEventBase,
  RunEventSchema,
  type RunEventType,
  type RunFailedEvent,
  type RunForkedEvent,
  type RunResumedEvent,
  type RunStartedEvent,
  type RunStatus,
  RunStatusSchema,
  type StateChangedEvent,
  type TextDeltaEvent,
  type ToolCallDeltaEvent,
  type ToolCallScheduledEvent,
  type ToolProgressEvent,
  type ToolResultEvent,
} from './run/run-events.ts';
// --- Runtime: create one, start runs, answer them, read them back (docs/architecture.md) --------
export {
  type AgentToolOptions,
  type AgentToolResult,
  agentTool,
} from './runtime/agent-tool.ts';
export { type ApprovalEdit, ApprovalEditRefusedError } from './runtime/approval-edits.ts';
export { SessionBusyError } from './runtime/continue-session.ts';
export {
  type DurableOptions,
  type MigrateSnapshotOptions,
  migrateSnapshot,
  type PersistedSnapshotJson,
  type PersistedWrite,
  type PersistenceStatus,
  type RecoveredRuns,
  type RecoverOptions,
  RunConflictError,
  type RunEventsOptions,
  RunPersistenceError,
  SNAPSHOT_FORMAT,
  SnapshotFormatTooNewError,
  SnapshotMigrationError,
  type SnapshotMigrator,
} from './runtime/durable/index.ts';
export {
  type ProvidedToolResult,
  RunAnswerError,
  RunHandle,
  type RunOutcome,
  type RunStorage,
  stateName,
} from './runtime/run-handle.ts';
export { StartOptionsError } from './runtime/start-input.ts';
export type { ApprovalOptions } from './runtime/steps/remembered-approvals.ts';
// From the stores' own modules, not their index: the index re-exports the SQLite and PostgreSQL
// stores too, and importing it would load both (~55 KB) with every `import('toolwarden')`
// (docs/packaging.md §Cost); they are `toolwarden/sqlite` and `toolwarden/postgres`.
export { type MemoryStoreOptions, memoryStore } from './stores/memory-store.ts';
export {
  type NewRun,
  type NewRunEvent,
  type ReadEventsOptions,
  RUN_STATUSES,
  type RunEventRecord,
  type RunListFilter,
  type RunStore,
  type RunUpdate,
  type StoredRun,
} from './stores/run-store.ts';
export {
  RunExistsError,
  RunLeasedError,
  RunNotFoundError,
  RunStoreClosedError,
  RunStoreError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from './stores/run-store-errors.ts';
// --- The tool boundary (docs/tool-boundary.md) -------------------------------------------------
export {
  callTool,
  type ExecuteOptions,
  elicit,
  type PrepareOptions,
  reportToolProgress,
  type ToolCallRequest,
  type ToolProgress,
} from './tools/call-tool.ts';
export {
  defineTool,
  type JSONSchema,
  type ReconcileOutcome,
  type RunUnapproved,
  TOOL_ID_PATTERN,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  ToolDefinitionError,
  type ToolOutput,
  toolOutput,
} from './tools/define-tool.ts';
export type { ElicitationAnswer, ElicitationRequest } from './tools/elicitation.ts';
export { idempotencyKey } from './tools/idempotency-key.ts';
export {
  type JsonSchemaFunction,
  type JsonSchemaToolOptions,
  toolFromJsonSchema,
} from './tools/json-schema-tool.ts';
export * as policy from './tools/policy-namespace.ts';
export {
  type FieldIssue,
  FieldIssueSchema,
  type PolicyRetryHint,
  PolicyRetryHintSchema,
  type RetryHint,
  RetryHintSchema,
  type RetryReason,
  RetryReasonSchema,
  toPolicyRetryHint,
} from './tools/retry-hint.ts';
export { type ToolCallMeta, ToolCallMetaSchema } from './tools/tool-call-meta.ts';
export { ToolCatalog, type ToolDescriptor } from './tools/tool-catalog.ts';
export {
  MalformedResponseError,
  RateLimitedError,
  ToolArgumentsRejectedError,
  ToolError,
  type ToolErrorJSON,
  ToolErrorJSONSchema,
  ToolTimeoutError,
  ToolUnavailableError,
} from './tools/tool-error.ts';
export {
  type Artifact,
  ArtifactSchema,
  type Bounds,
  BoundsSchema,
  type ToolResult,
  type ToolResultJSON,
  ToolResultJSONSchema,
  toolResultFromJSON,
  toolResultToJSON,
} from './tools/tool-result.ts';
