import { z } from 'zod';
import { lazySchema } from '../tools/lazy-schema.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import { PolicyRetryHintSchema } from '../tools/retry-hint.ts';
import { type ToolErrorJSON, ToolErrorJSONSchema } from '../tools/tool-error.ts';
import { type ToolResultJSON, ToolResultJSONSchema } from '../tools/tool-result.ts';
import { exactSchema } from './exact-type.ts';
import {
  AwaitClarificationSchema,
  AwaitConfirmationSchema,
  type AwaitExternalTools,
  AwaitExternalToolsSchema,
} from './planner.ts';

/** A run's status as its handle reports it (docs/architecture.md). */
export const RunStatusSchema = lazySchema(() =>
  z.enum(['running', 'awaiting', 'completed', 'failed', 'canceled']),
);
/** A run's status: `running`, `awaiting`, `completed`, `failed`, `canceled`. */
export type RunStatus = z.infer<typeof RunStatusSchema>;

const base = { runId: z.string(), at: z.number() };

/** One recorded policy decision: who decided what, and why (docs/policies.md). */
export const PolicyDecisionRecordSchema = lazySchema(() =>
  z.object({
    policy: z.string(),
    hook: z.enum(['onRunStart', 'onRetryHint', 'onToolBatch', 'onToolResult', 'onInDoubt']),
    /** The kinds of effect in the decision: `caps`, `disableTools`, `finalize`, ... */
    kinds: z.array(z.string()),
    decision: z.record(z.string(), z.unknown()),
    toolCallId: z.string().optional(),
    tool: z.string().optional(),
    note: z.string().optional(),
    /** The fingerprint of the call the decision is about (tool and input), when the policy gave one. */
    fingerprint: z.string().optional(),
  }),
);
/** A policy decision as recorded on `policy_decision` events: the policy, the hook, the decision (docs/policies.md). */
export type PolicyDecisionRecord = z.infer<typeof PolicyDecisionRecordSchema>;

// The events' types are written out (issue 28 item 4): inferred from the schema, tsc printed the
// whole zod object shape of every event into RunEventSchema's declaration (8.2 KB). The schema
// below is checked to have exactly these types as its output.

/** What every {@link RunEvent} carries: its run and when (epoch ms). */
export interface RunEventBase {
  runId: string;
  at: number;
}
/** A run started (`run_started`). */
export interface RunStartedEvent extends RunEventBase {
  type: 'run_started';
  agentId: string;
  sessionId?: string | undefined;
  labels: Record<string, string>;
}
/** The run's state changed (`state_changed`): `state` and `previous` are state names (`awaiting.confirmation`). */
export interface StateChangedEvent extends RunEventBase {
  type: 'state_changed';
  state: string;
  previous?: string | undefined;
}
/** The run was restored from the store into a runtime (`owner`) in `state`, after a restart or an eviction. */
export interface RunResumedEvent extends RunEventBase {
  type: 'run_resumed';
  state: string;
  owner: string;
}
/** A tool call starts (`tool_call_scheduled`). */
export interface ToolCallScheduledEvent extends RunEventBase {
  type: 'tool_call_scheduled';
  turnId: string;
  toolCallId: string;
  tool: string;
  attempt: number;
  /**
   * The person who approved the call edited its input (approve with edits): the validated input
   * before (`original`), the edit (`input`), who (`by`). The call runs with the edit.
   */
  edited?:
    | { original?: Record<string, unknown> | undefined; input: unknown; by?: string | undefined }
    | undefined;
}
/** A tool call's result (`tool_result`). */
export interface ToolResultEvent extends RunEventBase {
  type: 'tool_result';
  turnId: string;
  result: ToolResultJSON;
}
/** A retry hint for a failed call (`retry_hint`). */
export interface RetryHintEvent extends RunEventBase {
  type: 'retry_hint';
  hint: PolicyRetryHint;
}
/** A policy decided something (`policy_decision`). */
export interface PolicyDecisionEvent extends RunEventBase {
  type: 'policy_decision';
  turnId: string;
  decision: PolicyDecisionRecord;
}
/** The run waits for a person's answer (`await_clarification`). */
export interface AwaitClarificationEvent extends RunEventBase {
  type: 'await_clarification';
  clarification: z.output<typeof AwaitClarificationSchema>;
}
/** The run waits for the results of calls the app runs (`await_external_tools`). */
export interface AwaitExternalToolsEvent extends RunEventBase {
  type: 'await_external_tools';
  externalTools: AwaitExternalTools;
}
/** One call a confirmation holds, as the approver sees it (issue 35 item 3). */
export const ConfirmationCallSchema = lazySchema(() =>
  z.object({
    toolCallId: z.string(),
    tool: z.string(),
    input: z.unknown(),
    summary: z.string().optional(),
    risk: z.enum(['low', 'medium', 'high']).optional(),
    permissions: z.array(z.string()).optional(),
    missing: z.array(z.string()).optional(),
    /** `false`: a `remember` with the approval is not recorded for this call (high risk). */
    rememberable: z.literal(false).optional(),
  }),
);
/** One call a confirmation holds: id, tool, input, summary, risk, permissions (those missing). */
export type ConfirmationCallJSON = z.infer<typeof ConfirmationCallSchema>;

/**
 * An approval a person asked the run to remember (docs/policies.md §Sticky approvals): later
 * calls it covers (`scope: 'tool'`: every call of `tool`; `'arguments'`: those whose canonical
 * input has `fingerprint`), in the run and its thread's later runs, run without asking.
 */
export interface RememberedApproval {
  /** `<confirmation id>/<toolCallId>` of the approval that recorded it. */
  id: string;
  scope: 'tool' | 'arguments';
  tool: string;
  /** `arguments` only: `callFingerprint(tool, validated input)`. */
  fingerprint?: string | undefined;
  /** `arguments` only: the validated input approved. */
  input?: Record<string, unknown> | undefined;
  by?: string | undefined;
  /** When it was recorded, epoch ms. */
  at: number;
  /** The run that recorded it (this one, or an earlier run of the thread). */
  runId: string;
  toolCallId: string;
}
const rememberedApprovalSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    scope: z.enum(['tool', 'arguments']),
    tool: z.string(),
    fingerprint: z.string().optional(),
    input: z.record(z.string(), z.unknown()).optional(),
    by: z.string().optional(),
    at: z.number(),
    runId: z.string(),
    toolCallId: z.string(),
  }),
);
/** Schema of {@link RememberedApproval}. */
export const RememberedApprovalSchema: z.ZodType<RememberedApproval> =
  exactSchema<RememberedApproval>()(rememberedApprovalSchema);

/**
 * A confirmation's approval was remembered (`approval_remembered`): the approvals recorded, and
 * the held calls a `remember` did not cover, with why (`high_risk`).
 */
export interface ApprovalRememberedEvent extends RunEventBase {
  type: 'approval_remembered';
  confirmationId: string;
  approvals: RememberedApproval[];
  notRemembered?: { toolCallId: string; tool: string; reason: 'high_risk' }[] | undefined;
}
/** A remembered approval was revoked (`approval_revoked`, `runtime.revokeApproval`): its calls ask again. */
export interface ApprovalRevokedEvent extends RunEventBase {
  type: 'approval_revoked';
  approvalId: string;
  tool: string;
  scope: 'tool' | 'arguments';
  by?: string | undefined;
}
/** The run waits for an approval (`await_confirmation`). */
export interface AwaitConfirmationEvent extends RunEventBase {
  type: 'await_confirmation';
  confirmation: {
    id: string;
    prompt: string;
    details?: unknown;
    toolCallIds?: string[] | undefined;
    /** A descriptor per held call: `{ toolCallId, tool, input, summary?, risk?, permissions?, missing? }`. */
    calls?: ConfirmationCallJSON[] | undefined;
    /**
     * What a person approves or denies: the name `run.awaiting.question` and clarifications use
     * (issue 28 item 7). `prompt` holds the same text, kept for existing readers (deprecated);
     * absent in events stored before it was added.
     */
    question?: string | undefined;
  };
}
/**
 * The run waits for calls whose outcome is unknown to be resolved (`await_in_doubt`,
 * docs/durability.md §Effects): each call, its validated input, when it was started, and why.
 */
export interface AwaitInDoubtEvent extends RunEventBase {
  type: 'await_in_doubt';
  inDoubt: {
    calls: {
      toolCallId: string;
      name: string;
      input: Record<string, unknown>;
      startedAt?: number | undefined;
      cause: 'restored' | 'retried' | 'canceled';
    }[];
  };
}
/** A note from the planner (`planner_note`). */
export interface PlannerNoteEvent extends RunEventBase {
  type: 'planner_note';
  turnId: string;
  note: string;
}
/**
 * A planner turn ended (`planner_turn`): the model's side of the run (machines/planner-turn.ts).
 * The planner was sent the run's first `messages` transcript messages (any later snapshot's
 * `context.messages.slice(0, messages)`) and the `tools` advertised; `result` is its answer as
 * the run keeps it (a PlanResult's JSON: tool calls, final response, await, notes, usage), or
 * `error` why it failed (with causes). `startedAt` epoch ms, `durationMs` ms.
 */
export interface PlannerTurnEvent extends RunEventBase {
  type: 'planner_turn';
  turnId: string;
  kind: 'start' | 'resume' | 'finalize';
  messages: number;
  tools?: string[] | undefined;
  result?: unknown;
  error?: ToolErrorJSON | undefined;
  timedOut?: boolean | undefined;
  usage?: { inputTokens: number; outputTokens: number; cachedInputTokens?: number | undefined } | undefined;
  /**
   * What the turn cost (`PlanResult.cost`, docs/policies.md §Money): `amount` this turn's, `spent`
   * the run's so far with it, `limit` the budget, in `currency` units. Absent: nothing priced it.
   */
  cost?:
    | { currency: string; amount: number; spent?: number | undefined; limit?: number | undefined }
    | undefined;
  startedAt?: number | undefined;
  durationMs?: number | undefined;
  /** A fork's recorded replay reused the parent's turn of this id instead of asking the planner. */
  replayedFrom?: string | undefined;
}
/** Ephemeral: text a streaming planner's model is writing (on `run.events$` only, never stored). */
export interface TextDeltaEvent extends RunEventBase {
  type: 'text_delta';
  turnId: string;
  delta: string;
}
/** Ephemeral: a fragment of a tool call's JSON input as the model writes it (on `run.events$` only). */
export interface ToolCallDeltaEvent extends RunEventBase {
  type: 'tool_call_delta';
  turnId: string;
  toolCallId: string;
  tool: string;
  delta: string;
}
/** Ephemeral: how far a running tool call got, as the tool reports it (`reportToolProgress`; on `run.events$` only). */
export interface ToolProgressEvent extends RunEventBase {
  type: 'tool_progress';
  turnId: string;
  toolCallId: string;
  tool: string;
  progress?: number | undefined;
  total?: number | undefined;
  message?: string | undefined;
}
/** The run completed (`run_completed`). */
export interface RunCompletedEvent extends RunEventBase {
  type: 'run_completed';
  finalResponse: { text: string; data?: unknown };
  finalizeReason?: string | undefined;
}
/** The run failed (`run_failed`). */
export interface RunFailedEvent extends RunEventBase {
  type: 'run_failed';
  error: ToolErrorJSON;
}
/** The run was canceled (`run_canceled`). */
export interface RunCanceledEvent extends RunEventBase {
  type: 'run_canceled';
  reason?: string | undefined;
}
/** A run was forked from the parent's event `atEvent` (runtime.fork): in both runs' logs. */
export interface RunForkedEvent extends RunEventBase {
  type: 'run_forked';
  parentRunId: string;
  childRunId: string;
  atEvent: number;
  /** What the fork changed: a tool call's `input`, or a clarification's `answer`. */
  edit?: 'input' | 'answer' | undefined;
  /** The fork's name (`runtime.fork(…, { name })`). */
  name?: string | undefined;
  /** `recorded`: the fork replays the parent's recorded results while it matches (runtime/run-fork.ts). */
  replay?: 'recorded' | undefined;
}

/**
 * Everything a run reports, a discriminated union on `type` (docs/architecture.md). Each event carries
 * `runId` and `at` (epoch ms). Streamed on `run.events$`, written to the store's event log,
 * turned into span events by telemetry and shown by the inspector; except the deltas of a
 * streaming planner (`text_delta`, `tool_call_delta`) and a running tool's `tool_progress`, which
 * only `run.events$` carries (for UIs).
 */
export type RunEvent =
  | RunStartedEvent
  | StateChangedEvent
  | RunResumedEvent
  | ToolCallScheduledEvent
  | ToolResultEvent
  | RetryHintEvent
  | PolicyDecisionEvent
  | AwaitClarificationEvent
  | AwaitExternalToolsEvent
  | AwaitConfirmationEvent
  | ApprovalRememberedEvent
  | ApprovalRevokedEvent
  | AwaitInDoubtEvent
  | PlannerNoteEvent
  | PlannerTurnEvent
  | TextDeltaEvent
  | ToolCallDeltaEvent
  | ToolProgressEvent
  | RunCompletedEvent
  | RunFailedEvent
  | RunCanceledEvent
  | RunForkedEvent;

// Its members in two lists, each built with the schema (on first use): a run's start, state, calls,
// policies and waits; then its turns, deltas, progress and end.
const runAndCallEvents = () =>
  [
    z.object({
      type: z.literal('run_started'),
      ...base,
      agentId: z.string(),
      sessionId: z.string().optional(),
      labels: z.record(z.string(), z.string()),
    }),
    z.object({
      type: z.literal('state_changed'),
      ...base,
      state: z.string(),
      previous: z.string().optional(),
    }),
    /** The run was restored from the store into a runtime (`owner`) in `state`, after a restart or an eviction. */
    z.object({ type: z.literal('run_resumed'), ...base, state: z.string(), owner: z.string() }),
    z.object({
      type: z.literal('tool_call_scheduled'),
      ...base,
      turnId: z.string(),
      toolCallId: z.string(),
      tool: z.string(),
      attempt: z.number().int(),
      /**
       * The person who approved the call edited its input (approve with edits): the validated input
       * before (`original`), the edit (`input`), who (`by`). The call runs with the edit.
       */
      edited: z
        .object({
          original: z.record(z.string(), z.unknown()).optional(),
          input: z.unknown(),
          by: z.string().optional(),
        })
        .optional(),
    }),
    z.object({ type: z.literal('tool_result'), ...base, turnId: z.string(), result: ToolResultJSONSchema }),
    z.object({ type: z.literal('retry_hint'), ...base, hint: PolicyRetryHintSchema }),
    z.object({
      type: z.literal('policy_decision'),
      ...base,
      turnId: z.string(),
      decision: PolicyDecisionRecordSchema,
    }),
    z.object({ type: z.literal('await_clarification'), ...base, clarification: AwaitClarificationSchema }),
    z.object({ type: z.literal('await_external_tools'), ...base, externalTools: AwaitExternalToolsSchema }),
    z.object({
      type: z.literal('await_confirmation'),
      ...base,
      confirmation: AwaitConfirmationSchema.extend({
        toolCallIds: z.array(z.string()).optional(),
        calls: z.array(ConfirmationCallSchema).optional(),
        /**
         * What a person approves or denies: the name `run.awaiting.question` and clarifications use
         * (issue 28 item 7). `prompt` holds the same text, kept for existing readers (deprecated);
         * absent in events stored before it was added.
         */
        question: z.string().optional(),
      }),
    }),
    z.object({
      type: z.literal('approval_remembered'),
      ...base,
      confirmationId: z.string(),
      approvals: z.array(rememberedApprovalSchema),
      notRemembered: z
        .array(z.object({ toolCallId: z.string(), tool: z.string(), reason: z.literal('high_risk') }))
        .optional(),
    }),
    z.object({
      type: z.literal('approval_revoked'),
      ...base,
      approvalId: z.string(),
      tool: z.string(),
      scope: z.enum(['tool', 'arguments']),
      by: z.string().optional(),
    }),
    z.object({
      type: z.literal('await_in_doubt'),
      ...base,
      inDoubt: z.object({
        calls: z.array(
          z.object({
            toolCallId: z.string(),
            name: z.string(),
            input: z.record(z.string(), z.unknown()),
            startedAt: z.number().optional(),
            cause: z.enum(['restored', 'retried', 'canceled']),
          }),
        ),
      }),
    }),
  ] as const;
const turnAndEndEvents = () =>
  [
    z.object({ type: z.literal('planner_note'), ...base, turnId: z.string(), note: z.string() }),
    z.object({
      type: z.literal('planner_turn'),
      ...base,
      turnId: z.string(),
      kind: z.enum(['start', 'resume', 'finalize']),
      messages: z.number().int(),
      tools: z.array(z.string()).optional(),
      result: z.unknown().optional(),
      error: ToolErrorJSONSchema.optional(),
      timedOut: z.boolean().optional(),
      usage: z
        .object({
          inputTokens: z.number(),
          outputTokens: z.number(),
          cachedInputTokens: z.number().optional(),
        })
        .optional(),
      cost: z
        .object({
          currency: z.string(),
          amount: z.number(),
          spent: z.number().optional(),
          limit: z.number().optional(),
        })
        .optional(),
      startedAt: z.number().optional(),
      durationMs: z.number().optional(),
      replayedFrom: z.string().optional(),
    }),
    /** Ephemeral: text a streaming planner's model is writing (on `run.events$` only, never stored). */
    z.object({ type: z.literal('text_delta'), ...base, turnId: z.string(), delta: z.string() }),
    /** Ephemeral: how far a running tool call got, as the tool reports it (`reportToolProgress`; on `run.events$` only). */
    z.object({
      type: z.literal('tool_progress'),
      ...base,
      turnId: z.string(),
      toolCallId: z.string(),
      tool: z.string(),
      progress: z.number().optional(),
      total: z.number().optional(),
      message: z.string().optional(),
    }),
    /** Ephemeral: a fragment of a tool call's JSON input as the model writes it (on `run.events$` only). */
    z.object({
      type: z.literal('tool_call_delta'),
      ...base,
      turnId: z.string(),
      toolCallId: z.string(),
      tool: z.string(),
      delta: z.string(),
    }),
    z.object({
      type: z.literal('run_completed'),
      ...base,
      finalResponse: z.object({ text: z.string(), data: z.unknown().optional() }),
      finalizeReason: z.string().optional(),
    }),
    z.object({ type: z.literal('run_failed'), ...base, error: ToolErrorJSONSchema }),
    z.object({ type: z.literal('run_canceled'), ...base, reason: z.string().optional() }),
    /** A run was forked from the parent's event `atEvent` (runtime.fork): in both runs' logs. */
    z.object({
      type: z.literal('run_forked'),
      ...base,
      parentRunId: z.string(),
      childRunId: z.string(),
      atEvent: z.number().int(),
      /** What the fork changed: a tool call's `input`, or a clarification's `answer`. */
      edit: z.enum(['input', 'answer']).optional(),
      name: z.string().optional(),
      replay: z.literal('recorded').optional(),
    }),
  ] as const;
const runEventSchema = lazySchema(() =>
  z.discriminatedUnion('type', [...runAndCallEvents(), ...turnAndEndEvents()]),
);
/** Schema of {@link RunEvent}: validates events at process boundaries; `parse` returns a `RunEvent`. */
export const RunEventSchema: z.ZodType<RunEvent> = lazySchema(() => exactSchema<RunEvent>()(runEventSchema));

/** The `type` of a {@link RunEvent}. */
export type RunEventType = RunEvent['type'];
