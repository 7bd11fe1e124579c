import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';
import type { ToolCallMeta } from './tool-call-meta.ts';

/**
 * Why a call failed in a way the planner may repair (Goa-AI's retry-hints guide, docs/sources.md §Retry hints:
 * "Common RetryReason values"; docs/tool-boundary.md §Vocabulary).
 */
export const RetryReasonSchema = lazySchema(() =>
  z.enum([
    'invalid_arguments',
    'missing_fields',
    'malformed_response',
    'timeout',
    'rate_limited',
    'tool_unavailable',
    // Policy reasons (issue 35): the call repeats itself with the same result (docs/policies.md
    // §No progress); the run lacks a permission the tool needs (§Permissions and risk).
    'no_progress',
    'permission_denied',
    // The call was started and its outcome never recorded (issue 34, docs/durability.md §Effects).
    'outcome_unknown',
  ]),
);
/**
 * Why a call failed, for a planner: `invalid_arguments`, `missing_fields`, `malformed_response`,
 * `timeout`, `rate_limited`, `tool_unavailable` (the tool boundary's), `no_progress`,
 * `permission_denied` (policies'), `outcome_unknown` (a crash left the call's outcome unknown;
 * told only for tools declared `whenInDoubt: 'tell_model'`, docs/durability.md §Effects).
 */
export type RetryReason = z.infer<typeof RetryReasonSchema>;

/**
 * One field's problem, from a zod issue. `path` is dotted (`items.0.sku`, `''` for the root);
 * `constraint` names the rule broken (`missing`, `invalid_type`, `invalid_value`, `too_small`,
 * `too_big`, `invalid_format`, `unknown_field`, ...); `allowed` lists enum values or, for an
 * unknown field, the field names the tool accepts.
 */
export const FieldIssueSchema = lazySchema(() =>
  z.object({
    path: z.string(),
    constraint: z.string(),
    message: z.string(),
    expected: z.string().optional(),
    received: z.string().optional(),
    allowed: z.array(z.unknown()).optional(),
  }),
);
/** One field problem of a rejected call: path, constraint, expected type, allowed values (docs/tool-boundary.md). */
export type FieldIssue = z.infer<typeof FieldIssueSchema>;

/**
 * The planner-side hint that says how to repair a failed call (docs/tool-boundary.md §Vocabulary). Built by the tool
 * boundary; read by planners and, in its {@link PolicyRetryHint} form, by policies.
 */
export const RetryHintSchema = lazySchema(() =>
  z.object({
    reason: RetryReasonSchema,
    tool: z.string(),
    restrictToTool: z.boolean(),
    /** Dotted paths of required fields that were absent: `address.city`, `items.0.sku`. */
    missingFields: z.array(z.string()),
    exampleInput: z.record(z.string(), z.unknown()).optional(),
    priorInput: z.record(z.string(), z.unknown()).optional(),
    clarifyingQuestion: z.string().optional(),
    message: z.string(),
    issues: z.array(FieldIssueSchema).optional(),
    /** Milliseconds to wait before retrying (`rate_limited`). */
    retryAfterMs: z.number().nonnegative().optional(),
  }),
);
/** What a planner gets to repair a failed call: reason, tool, missing fields, issues, an example, the prior input, a question (docs/tool-boundary.md). */
export type RetryHint = z.infer<typeof RetryHintSchema>;

/**
 * `policy.RetryHint`: the runtime's form of a hint, given to policies and UIs: the planner hint
 * plus where it came from (Goa-AI, docs/sources.md: "The runtime converts planner hints into a runtime/policy form").
 * `at` is epoch milliseconds.
 */
export const PolicyRetryHintSchema = lazySchema(() =>
  RetryHintSchema.extend({
    runId: z.string(),
    turnId: z.string(),
    toolCallId: z.string(),
    attempt: z.number().int().min(1),
    at: z.number(),
  }),
);
/** `policy.RetryHint`: a RetryHint with its provenance (run, turn, call, attempt, time), as policies and UIs get it. */
export type PolicyRetryHint = z.infer<typeof PolicyRetryHintSchema>;

/** Adds provenance from the call's {@link ToolCallMeta}; `at` defaults to `Date.now()`. */
export function toPolicyRetryHint(
  hint: RetryHint,
  meta: ToolCallMeta,
  at: number = Date.now(),
): PolicyRetryHint {
  return {
    ...hint,
    runId: meta.runId,
    turnId: meta.turnId,
    toolCallId: meta.toolCallId,
    attempt: meta.attempt,
    at,
  };
}
