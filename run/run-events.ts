import { z } from 'zod';
import { PolicyRetryHintSchema } from '../tools/retry-hint.ts';
import { ToolErrorJSONSchema } from '../tools/tool-error.ts';
import { ToolResultJSONSchema } from '../tools/tool-result.ts';
import { AwaitClarificationSchema, AwaitConfirmationSchema, AwaitExternalToolsSchema } from './planner.ts';

/** A run's status as its handle reports it (docs/architecture.md). */
export const RunStatusSchema = z.enum(['running', 'awaiting', 'completed', 'failed', 'canceled']);
/** A run's status: `running`, `awaiting`, `completed`, `failed`, `canceled`. */
export type RunStatus = z.infer<typeof RunStatusSchema>;

const base = { runId: z.string(), at: z.number() };

/** One recorded policy decision: who decided what, and why (docs/policies.md). */
export const PolicyDecisionRecordSchema = z.object({
  policy: z.string(),
  hook: z.enum(['onRunStart', 'onRetryHint', 'onToolBatch', 'onToolResult']),
  /** The kinds of effect in the decision: `caps`, `disableTools`, `finalize`, ... */
  kinds: z.array(z.string()),
  decision: z.record(z.string(), z.unknown()),
  toolCallId: z.string().optional(),
  tool: z.string().optional(),
  note: z.string().optional(),
  /** The fingerprint of the call the decision is about (tool and input), when the policy gave one. */
  fingerprint: z.string().optional(),
});
/** A policy decision as recorded on `policy_decision` events: the policy, the hook, the decision (docs/policies.md). */
export type PolicyDecisionRecord = z.infer<typeof PolicyDecisionRecordSchema>;

/**
 * Everything a run reports, as a discriminated union on `type` (docs/architecture.md). Each event carries
 * `runId` and `at` (epoch ms). Streamed on `run.events$`, written to the store's event log,
 * turned into span events by telemetry and shown by the inspector; except the deltas of a
 * streaming planner (`text_delta`, `tool_call_delta`), which only `run.events$` carries (for UIs).
 */
export const RunEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('run_started'),
    ...base,
    agentId: z.string(),
    sessionId: z.string().optional(),
    labels: z.record(z.string(), z.string()),
  }),
  z.object({ type: z.literal('state_changed'), ...base, state: z.string(), previous: z.string().optional() }),
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
      /**
       * What a person approves or denies: the name `run.awaiting.question` and clarifications use
       * (issue 28 item 7). `prompt` holds the same text, kept for existing readers (deprecated);
       * absent in events stored before it was added.
       */
      question: z.string().optional(),
    }),
  }),
  z.object({ type: z.literal('planner_note'), ...base, turnId: z.string(), note: z.string() }),
  /** Ephemeral: text a streaming planner's model is writing (on `run.events$` only, never stored). */
  z.object({ type: z.literal('text_delta'), ...base, turnId: z.string(), delta: z.string() }),
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
  }),
]);
/** Everything a run reports, a discriminated union on `type` (docs/architecture.md §Run events). */
export type RunEvent = z.infer<typeof RunEventSchema>;
/** The `type` of a {@link RunEvent}. */
export type RunEventType = RunEvent['type'];
