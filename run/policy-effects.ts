import type { RetryReason } from '../tools/retry-hint.ts';
import type { Caps } from './caps.ts';
import type { AwaitClarification } from './planner.ts';
import type { PolicyDecisionRecord } from './run-events.ts';

/**
 * The merged outcome of consulting the policies at one point of a run, as the run machine
 * applies it. Produced by the policy engine (docs/policies.md §Merge rules); the machine never sees
 * individual policies. Every field is optional: `{ decisions: [] }` means "carry on".
 */
export interface PolicyEffects {
  /** Every decision taken, in registration order, for `policy_decision` events and spans. */
  decisions: PolicyDecisionRecord[];
  /** The effective caps after tightening (already merged by min under the ceilings). */
  caps?: Caps;
  /** The full map of disabled tools after this step: tool id → who disabled it. */
  disabledTools?: Record<string, string>;
  /** Tools the next planner turn may see (intersection of restrictions); absent = no change. */
  restrictTo?: string[];
  /** Wait this long (ms) in `awaiting.backoff` before the next planner turn. */
  backoffMs?: number;
  awaitClarification?: AwaitClarification;
  /**
   * From `onToolBatch`: calls of the batch (toolCallIds or tool ids; `['*']` every call) that wait
   * for approval, with the prompt and details the person is shown, and the policy that asked.
   */
  confirm?: {
    calls: string[];
    prompt?: string;
    details?: unknown;
    policy: string;
    /** Set when the policy named calls not in the batch: the whole batch waits (fail closed). */
    error?: string;
  };
  /**
   * From `onToolBatch`: calls not run, each with the message of its result and the reason of its
   * hint, and the policy that refused it (`toolCallIds`; `['*']` every call; tool ids match too).
   */
  refuse?: { calls: string[]; message: string; reason: RetryReason; policy: string }[];
  /** From the review of results: hints the planner reads with those results (`onToolResult`, `onRetryHint`). */
  resultHints?: { toolCallId: string; tool: string; reason: RetryReason; message: string; policy: string }[];
  /**
   * From `onInDoubt`: what becomes of each call in doubt that a policy named, by toolCallId, with
   * the policy whose choice it is (the most careful of several). A call not listed waits for a
   * person (`ask`).
   */
  inDoubt?: Record<string, { action: InDoubtAction; policy: string }>;
  finalize?: { reason: string };
  fail?: { reason: string };
  labels?: Record<string, string>;
  /** The engine's own state (per-policy memory), persisted with the run. JSON only. */
  policyState?: unknown;
}

/**
 * What becomes of a call in doubt (docs/durability.md §Effects), most careful first: `ask` a person
 * (`awaiting.inDoubt`), `tell_model` (an `outcome_unknown` hint to the planner), `rerun` it.
 */
export type InDoubtAction = 'ask' | 'tell_model' | 'rerun';

/** The effects of consulting no policies. */
export const NO_EFFECTS: PolicyEffects = Object.freeze({ decisions: [] }) as PolicyEffects;
