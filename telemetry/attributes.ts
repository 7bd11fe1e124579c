/**
 * Names of toolwarden's spans, attributes, span events and metrics (docs/telemetry.md), in one place so the
 * telemetry plugin, the tests and users' dashboards agree on them.
 *
 * GenAI names come from the OpenTelemetry semantic conventions (`gen_ai.*`, `error.type`); the
 * rest are toolwarden's own under the `toolwarden.` prefix. The GenAI names are written out here
 * rather than imported from `@opentelemetry/semantic-conventions/incubating`: that entry point
 * costs ~25 ms to load and several MB to install, for thirteen strings. The conventions are still
 * "development" status and may rename them: `test/telemetry-attributes.test.ts` checks each name
 * against the installed semantic-conventions package (a development dependency), so a rename
 * fails there rather than in someone's Jaeger query.
 *
 * | span | name | kind | attributes |
 * |---|---|---|---|
 * | run segment (root) | `invoke_agent {gen_ai.agent.name}` | INTERNAL | operation name, agent id/name, conversation id, run id, run status |
 * | planner turn | `plan {gen_ai.agent.name}` | INTERNAL | turn id, plan kind, plan result kind |
 * | tool call | `execute_tool {gen_ai.tool.name}` | INTERNAL | operation name, tool name/call id/type/description, ToolCallMeta, `error.type` on failure |
 *
 * Span events: `toolwarden.retry_hint` on the tool span of the call that got the hint;
 * `toolwarden.policy_decision` on the run segment's root span (a decision concerns the run: its
 * caps, tools and next turn, even when a hint triggered it; the event names the call).
 */
// --- Instrumentation scope ------------------------------------------------------------------------

/** Name of the tracer and meter toolwarden obtains from `@opentelemetry/api`. */
export const INSTRUMENTATION_SCOPE = 'toolwarden';

// --- GenAI semantic conventions (re-exported under the names the plugin uses) ---------------------

/** `error.type` (stable convention): the retry reason or the error's class on a failed span. */
export const ATTR_ERROR_TYPE = 'error.type';
/** `gen_ai.agent.id` */
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id';
/** `gen_ai.agent.name` */
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
/** `gen_ai.conversation.id`: the run's sessionId. */
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
/** `gen_ai.operation.name`: `invoke_agent` or `execute_tool`. */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** `gen_ai.tool.call.arguments` (only with `captureContent`). */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** `gen_ai.tool.call.id` */
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** `gen_ai.tool.call.result` (only with `captureContent`). */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
/** `gen_ai.tool.description` */
export const ATTR_GEN_AI_TOOL_DESCRIPTION = 'gen_ai.tool.description';
/** `gen_ai.tool.name` */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** `gen_ai.tool.type` */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/**
 * `gen_ai.usage.input_tokens` (int): on a segment's `invoke_agent` span, the sum of its planner
 * turns' `PlanResult.usage.inputTokens` (set only when a turn reported usage).
 */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
/** `gen_ai.usage.output_tokens` (int): as {@link ATTR_GEN_AI_USAGE_INPUT_TOKENS}, for output tokens. */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/**
 * `gen_ai.usage.cache_read.input_tokens` (int): input tokens served from the provider's cache, on
 * `chat` spans (latest GenAI conventions only).
 */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
/**
 * `gen_ai.usage.cache_write.input_tokens` (int): input tokens written to the provider's cache, on
 * `chat` spans (latest GenAI conventions only). semantic-conventions-genai renamed it from
 * `gen_ai.usage.cache_creation.input_tokens` (changelog.d/440.breaking.md); toolwarden never
 * emitted the old name.
 */
export const ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS = 'gen_ai.usage.cache_write.input_tokens';
/** `gen_ai.usage.reasoning.output_tokens` (int): output tokens spent reasoning, on `chat` spans (latest only). */
export const ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = 'gen_ai.usage.reasoning.output_tokens';
/** `gen_ai.provider.name`: on `chat` spans and the inference metrics (never on `invoke_agent`). */
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
/** `gen_ai.request.model`, on `chat` spans and the inference metrics. */
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
/** `gen_ai.response.model`, on `chat` spans and the inference metrics. */
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
/** `gen_ai.token.modality` on the usage counters: `unknown` here (the providers give no breakdown). */
export const ATTR_GEN_AI_TOKEN_MODALITY = 'gen_ai.token.modality';
/** `plan`, the value of `gen_ai.operation.name` on a planner turn's span (latest GenAI conventions only). */
export const GEN_AI_OPERATION_NAME_VALUE_PLAN = 'plan';
/** `chat`, the value of `gen_ai.operation.name` on a model call's span. */
export const GEN_AI_OPERATION_NAME_VALUE_CHAT = 'chat';
/**
 * `gen_ai.execution.state.changed`: a span event on the run segment's `invoke_agent` span for each
 * step boundary that changed the run's state (latest GenAI conventions only;
 * semantic-conventions-genai docs/gen-ai/gen-ai-execution.md). Never for a restore (replay) nor an
 * unchanged snapshot; it carries no state values.
 */
export const EVENT_GEN_AI_EXECUTION_STATE_CHANGED = 'gen_ai.execution.state.changed';
/** `gen_ai.execution.state.changed_key.count` (int): run-context keys the step changed. */
export const ATTR_GEN_AI_EXECUTION_STATE_CHANGED_KEY_COUNT = 'gen_ai.execution.state.changed_key.count';
/**
 * `gen_ai.execution.state.version` (string): the run's version in its store after the write that
 * holds the change (the runtime's own version, never synthesized; high-cardinality: not on metrics).
 */
export const ATTR_GEN_AI_EXECUTION_STATE_VERSION = 'gen_ai.execution.state.version';
/** `execute_tool`, the value of `gen_ai.operation.name` on a tool span. */
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = 'execute_tool';
/** `invoke_agent`, the value of `gen_ai.operation.name` on a run's root span. */
export const GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT = 'invoke_agent';

/**
 * `gen_ai.tool.type` for tools the agent calls itself (the convention's `function`; the semconv
 * package 1.45 has no constant for the value).
 */
export const GEN_AI_TOOL_TYPE_VALUE_FUNCTION = 'function';

// --- Span names -----------------------------------------------------------------------------------

/** First word of the root span's name; the GenAI convention is `invoke_agent {gen_ai.agent.name}`. */
export const SPAN_INVOKE_AGENT = GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT;
/** First word of a planner turn's span name (toolwarden's own operation). */
export const SPAN_PLAN = 'plan';
/** First word of a tool call's span name; the GenAI convention is `execute_tool {gen_ai.tool.name}`. */
export const SPAN_EXECUTE_TOOL = GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL;

/** `invoke_agent {agentName}`. */
export function invokeAgentSpanName(agentName: string): string {
  return `${SPAN_INVOKE_AGENT} ${agentName}`;
}

/** `plan {agentName}`. */
export function planSpanName(agentName: string): string {
  return `${SPAN_PLAN} ${agentName}`;
}

/** `execute_tool {toolName}`, the tool's id such as `crm.upsert_profile`. */
export function executeToolSpanName(toolName: string): string {
  return `${SPAN_EXECUTE_TOOL} ${toolName}`;
}

// --- toolwarden attributes ------------------------------------------------------------------------

/**
 * The agent's id (`AgentConfig.id`) on `invoke_agent` spans. The latest GenAI conventions reserve
 * `gen_ai.agent.id` for a hosted agent resource's stable id and leave it off the in-process
 * `invoke_agent` span; toolwarden's own id goes here, in every mode.
 */
export const ATTR_TOOLWARDEN_AGENT_ID = 'toolwarden.agent.id';
/** ToolCallMeta.runId; on every span of the run. */
export const ATTR_TOOLWARDEN_RUN_ID = 'toolwarden.run.id';
/**
 * On the span link from a forked run's first `invoke_agent` span to its parent's span
 * (`runtime.fork`, issue 27 item 4): the parent's run id.
 */
export const ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID = 'toolwarden.fork.parent_run_id';
/** On that link: the parent's event the run was forked at (its `seq`, int). */
export const ATTR_TOOLWARDEN_FORK_AT_EVENT = 'toolwarden.fork.at_event';
/**
 * On the span link from a resumed segment's `invoke_agent` span to the segment before it: true
 * when the run came back from its store in between (`runtime.resume` after a restart or an
 * eviction, `durable: { recover }`), false when this process saw that segment end. The GenAI
 * conventions leave resume link attributes to later (docs/gen-ai/gen-ai-execution.md §Causal links).
 */
export const ATTR_TOOLWARDEN_RESUME_RESTORED = 'toolwarden.resume.restored';
/**
 * On that link: the run's state when the segment before stopped: the await it ended in
 * (`awaiting.clarification`), or the state the run was restored in, a working one (`executing`)
 * when that segment was cut short (a crash).
 */
export const ATTR_TOOLWARDEN_RESUME_STATE = 'toolwarden.resume.state';
/** Final run status on the root span: `completed` | `failed` | `canceled` | `awaiting`. */
export const ATTR_TOOLWARDEN_RUN_STATUS = 'toolwarden.run.status';
/** ToolCallMeta.sessionId (the root span carries it as `gen_ai.conversation.id`). */
export const ATTR_TOOLWARDEN_SESSION_ID = 'toolwarden.session.id';
/** ToolCallMeta.turnId / the planner turn id. */
export const ATTR_TOOLWARDEN_TURN_ID = 'toolwarden.turn.id';
/** Which planner call a `plan` span is: see {@link PlanKind}. */
export const ATTR_TOOLWARDEN_PLAN_KIND = 'toolwarden.plan.kind';
/**
 * What the planner returned: `tool_calls` | `final_response` | `await`. docs/telemetry.md says "the result
 * kind" without a name; this one is chosen here.
 */
export const ATTR_TOOLWARDEN_PLAN_RESULT_KIND = 'toolwarden.plan.result_kind';
/**
 * ToolCallMeta.toolCallId, the run's own id for the call; `gen_ai.tool.call.id` is the model's
 * (`providerToolCallId`) when the planner gave one, else the same value.
 */
export const ATTR_TOOLWARDEN_TOOL_CALL_ID = 'toolwarden.tool_call.id';
/** The fingerprint (tool and input) of the call a policy decision is about, on `toolwarden.policy_decision` (issue 24 item 5). */
export const ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT = 'toolwarden.tool_call.fingerprint';
/** Who edited a call's input when approving it (approve with edits; issue 24 item 4), on `execute_tool`. */
export const ATTR_TOOLWARDEN_TOOL_CALL_EDITED_BY = 'toolwarden.tool_call.edited_by';
/** The call was approved with edits (boolean), on `execute_tool`; `gen_ai.tool.call.arguments` is the edit. */
export const ATTR_TOOLWARDEN_TOOL_CALL_EDITED = 'toolwarden.tool_call.edited';
/** The input before the approver's edit (JSON; only with `captureContent`, through `redact`), on `execute_tool`. */
export const ATTR_TOOLWARDEN_TOOL_CALL_ORIGINAL_ARGUMENTS = 'toolwarden.tool_call.original_arguments';
/** The call's approval risk (`low`/`medium`/`high`, its tool's `risk`; docs/policies.md §Permissions and risk), on `execute_tool`. */
export const ATTR_TOOLWARDEN_APPROVAL_RISK = 'toolwarden.approval.risk';
/** The permissions the call needs (string array, its tool's `permissions`), on `execute_tool`. */
export const ATTR_TOOLWARDEN_APPROVAL_PERMISSIONS = 'toolwarden.approval.permissions';
/** The approver's one line for the call (its tool's `summary`), on `execute_tool`. */
export const ATTR_TOOLWARDEN_APPROVAL_SUMMARY = 'toolwarden.approval.summary';
/** Who let a held call run: `person` (a confirmation) or `remembered` (§Sticky approvals), on `execute_tool`. */
export const ATTR_TOOLWARDEN_APPROVAL_APPROVED_BY = 'toolwarden.approval.approved_by';
/** ToolCallMeta.parentToolCallId, for calls of a child run (agent-as-tool). */
export const ATTR_TOOLWARDEN_TOOL_CALL_PARENT_ID = 'toolwarden.tool_call.parent_id';
/** ToolCallMeta.attempt: 1 for the first call in a repair chain, 2 after one repair, ... (int). */
export const ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT = 'toolwarden.tool_call.attempt';
/** ToolResult.executed: false when validation or policy stopped the call (boolean). */
export const ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED = 'toolwarden.tool_call.executed';
/** Outcome of a tool call, on `execute_tool` spans and the tool metrics: see {@link ToolCallOutcome}. */
export const ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME = 'toolwarden.tool_call.outcome';
/** RetryHint.reason, on `toolwarden.retry_hint` events and the `toolwarden.retry_hints` metric. */
export const ATTR_TOOLWARDEN_RETRY_HINT_REASON = 'toolwarden.retry_hint.reason';
/** Name of the policy that decided, on `toolwarden.policy_decision` events and its metric. */
export const ATTR_TOOLWARDEN_POLICY_NAME = 'toolwarden.policy.name';
/**
 * Kind of a policy decision: the effects it has, as the decision record names them (`caps`,
 * `disableTools`, `enableTools`, `restrictToTool`, `backoffMs`, `awaitClarification`, `finalize`,
 * `fail`, `labels`), joined with `,` in that order when there are several (`caps,disableTools`);
 * `note` for a decision that only explains itself. One value per decision, so
 * `toolwarden.policy.decisions` counts decisions.
 */
export const ATTR_TOOLWARDEN_POLICY_DECISION_KIND = 'toolwarden.policy.decision.kind';

/**
 * What a run segment ended waiting for, on a root span whose status is `awaiting`:
 * `clarification` | `external_tools` | `confirmation` | `backoff`.
 */
export const ATTR_TOOLWARDEN_RUN_AWAITING = 'toolwarden.run.awaiting';
/** Why a completed run finalized (`tool_cap`, `failure_cap`, `time_budget`, `policy`, ...), on the root span. */
export const ATTR_TOOLWARDEN_RUN_FINALIZE_REASON = 'toolwarden.run.finalize_reason';
/** RetryHint.missingFields (string[]), on `toolwarden.retry_hint` events. */
export const ATTR_TOOLWARDEN_RETRY_HINT_MISSING_FIELDS = 'toolwarden.retry_hint.missing_fields';
/** RetryHint.restrictToTool (boolean), on `toolwarden.retry_hint` events. */
export const ATTR_TOOLWARDEN_RETRY_HINT_RESTRICT_TO_TOOL = 'toolwarden.retry_hint.restrict_to_tool';
/** RetryHint.message, on `toolwarden.retry_hint` events. */
export const ATTR_TOOLWARDEN_RETRY_HINT_MESSAGE = 'toolwarden.retry_hint.message';
/** RetryHint.retryAfterMs (int, ms; `rate_limited`), on `toolwarden.retry_hint` events. */
export const ATTR_TOOLWARDEN_RETRY_HINT_RETRY_AFTER_MS = 'toolwarden.retry_hint.retry_after_ms';
/** The policy hook that decided (`onRetryHint`, `onToolBatch`, `onToolResult`), on `toolwarden.policy_decision`. */
export const ATTR_TOOLWARDEN_POLICY_HOOK = 'toolwarden.policy.hook';
/** The decision's `note` (why), on `toolwarden.policy_decision` events. */
export const ATTR_TOOLWARDEN_POLICY_NOTE = 'toolwarden.policy.note';
/** The decision itself as JSON (`{"restrictToTool":"crm.upsert_profile"}`), on `toolwarden.policy_decision`. */
export const ATTR_TOOLWARDEN_POLICY_DECISION_DETAIL = 'toolwarden.policy.decision.detail';

/** Values of {@link ATTR_TOOLWARDEN_PLAN_KIND} (docs/telemetry.md). */
export type PlanKind = 'start' | 'resume' | 'finalize';
/** Values of {@link ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME}: ran and succeeded, ran and failed, stopped before running. */
/** `in_doubt`: the call was started and its end never recorded (a crash, a lost worker, a cancel; docs/durability.md §Effects). */
export type ToolCallOutcome = 'success' | 'error' | 'rejected' | 'in_doubt';
/** Values of {@link ATTR_TOOLWARDEN_PLAN_RESULT_KIND}; `none` is a plan with nothing in it (the run fails). */
export type PlanResultKind = 'tool_calls' | 'await' | 'final_response' | 'none';
/** Values of {@link ATTR_TOOLWARDEN_RUN_STATUS} on a segment's root span. */
export type RunSegmentStatus = 'awaiting' | 'completed' | 'failed' | 'canceled';

// --- Span events ----------------------------------------------------------------------------------

/** A RetryHint produced for the call (attributes: reason, tool, missing fields, restrictToTool, message, retryAfterMs). */
export const EVENT_TOOLWARDEN_RETRY_HINT = 'toolwarden.retry_hint';
/** A policy decision (attributes: policy name, hook, decision kind and detail, note, and the call and tool it concerns). */
export const EVENT_TOOLWARDEN_POLICY_DECISION = 'toolwarden.policy_decision';

// --- Metrics --------------------------------------------------------------------------------------

/** Counter of tool calls; attributes `gen_ai.tool.name`, `toolwarden.tool_call.outcome`. */
export const METRIC_TOOLWARDEN_TOOL_CALLS = 'toolwarden.tool.calls';
/** Histogram of tool call durations in seconds; attributes as {@link METRIC_TOOLWARDEN_TOOL_CALLS}. */
export const METRIC_TOOLWARDEN_TOOL_DURATION = 'toolwarden.tool.duration';
/** Counter of retry hints; attributes `toolwarden.retry_hint.reason`, `gen_ai.tool.name`. */
export const METRIC_TOOLWARDEN_RETRY_HINTS = 'toolwarden.retry_hints';
/** Counter of policy decisions; attributes `toolwarden.policy.name`, `toolwarden.policy.decision.kind`. */
export const METRIC_TOOLWARDEN_POLICY_DECISIONS = 'toolwarden.policy.decisions';
/**
 * Counter of finished run segments; attribute `toolwarden.run.status`. A run that awaits once
 * counts `awaiting` then its final status, so `status=completed` counts completed runs.
 */
export const METRIC_TOOLWARDEN_RUNS = 'toolwarden.runs';
/** Up-down counter of runs in progress in this process: segments open, not awaiting (no attributes). */
export const METRIC_TOOLWARDEN_RUNS_ACTIVE = 'toolwarden.runs.active';

/** How each metric is created: instrument kind, UCUM unit (OTel metric conventions), description. */
export interface MetricDescriptor {
  name: string;
  instrument: 'counter' | 'histogram' | 'updowncounter';
  unit: string;
  description: string;
  attributes: readonly string[];
}

/** The six metrics of docs/telemetry.md, keyed by name. */
export const TOOLWARDEN_METRICS: Readonly<Record<string, MetricDescriptor>> = Object.freeze({
  [METRIC_TOOLWARDEN_TOOL_CALLS]: {
    name: METRIC_TOOLWARDEN_TOOL_CALLS,
    instrument: 'counter',
    unit: '{call}',
    description: 'Tool calls, by tool and outcome.',
    attributes: [ATTR_GEN_AI_TOOL_NAME, ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME],
  },
  [METRIC_TOOLWARDEN_TOOL_DURATION]: {
    name: METRIC_TOOLWARDEN_TOOL_DURATION,
    instrument: 'histogram',
    unit: 's',
    description: 'Duration of tool calls, from admission to result.',
    attributes: [ATTR_GEN_AI_TOOL_NAME, ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME],
  },
  [METRIC_TOOLWARDEN_RETRY_HINTS]: {
    name: METRIC_TOOLWARDEN_RETRY_HINTS,
    instrument: 'counter',
    unit: '{hint}',
    description: 'Retry hints produced at the tool boundary, by reason and tool.',
    attributes: [ATTR_TOOLWARDEN_RETRY_HINT_REASON, ATTR_GEN_AI_TOOL_NAME],
  },
  [METRIC_TOOLWARDEN_POLICY_DECISIONS]: {
    name: METRIC_TOOLWARDEN_POLICY_DECISIONS,
    instrument: 'counter',
    unit: '{decision}',
    description: 'Policy decisions, by policy and kind.',
    attributes: [ATTR_TOOLWARDEN_POLICY_NAME, ATTR_TOOLWARDEN_POLICY_DECISION_KIND],
  },
  [METRIC_TOOLWARDEN_RUNS]: {
    name: METRIC_TOOLWARDEN_RUNS,
    instrument: 'counter',
    unit: '{run}',
    description: 'Run segments that ended, by status.',
    attributes: [ATTR_TOOLWARDEN_RUN_STATUS],
  },
  [METRIC_TOOLWARDEN_RUNS_ACTIVE]: {
    name: METRIC_TOOLWARDEN_RUNS_ACTIVE,
    instrument: 'updowncounter',
    unit: '{run}',
    description: 'Runs in progress in this process.',
    attributes: [],
  },
});

// --- Run labels the plugin reads --------------------------------------------------------------------

/**
 * Labels a forked run carries (`runtime.fork`, runtime/run-fork.ts): its parent's id and the
 * parent's event it was forked at. Here, not in the runtime, so the telemetry entry point keeps
 * depending on `@opentelemetry/api` alone.
 */
export const FORK_PARENT_LABEL = 'toolwarden.fork.parent';
export const FORK_AT_LABEL = 'toolwarden.fork.at';
/**
 * The parent's W3C `traceparent` at the step, when it was traced: the fork's first `invoke_agent`
 * span links it ({@link ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID}, {@link ATTR_TOOLWARDEN_FORK_AT_EVENT}).
 */
export const FORK_TRACEPARENT_LABEL = 'toolwarden.fork.traceparent';
