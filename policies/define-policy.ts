import { z } from 'zod';
import type { InDoubtCall } from '../machines/run-context.ts';
import type { Caps, CapsState } from '../run/caps.ts';
import { CapsSchema } from '../run/caps.ts';
import { type AwaitClarification, AwaitClarificationSchema } from '../run/planner.ts';
import type { InDoubtAction } from '../run/policy-effects.ts';
import { lazySchema } from '../tools/lazy-schema.ts';
import { type PolicyRetryHint, type RetryReason, RetryReasonSchema } from '../tools/retry-hint.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import type { ProposedCall } from './call-history.ts';
import type { JsonValue } from './policy-json.ts';
import type { BatchCall } from './policy-runner.ts';

/**
 * What one policy decides at one consultation (docs/policies.md). Every field is optional; returning
 * nothing (or `{}`) means "no opinion". How the engine merges decisions:
 *
 * | field                | merged by                           | note                                        |
 * |----------------------|-------------------------------------|---------------------------------------------|
 * | `caps`               | min, never above the configured ceilings | a higher value is ignored (noted)      |
 * | `disableTools`       | union                               | removed from advertised tools; calls get `tool_unavailable` |
 * | `enableTools`        | only tools this same policy disabled | never the app's, another policy's, `retry_cap` |
 * | `restrictToTool`     | intersection                        | the next planner turn sees only these tools |
 * | `backoffMs`          | max                                 | waits in `awaiting.backoff`                 |
 * | `awaitClarification` | first, in registration order         | `true`: question built from the hint        |
 * | `finalize` / `fail`  | first, in registration order         | precedence fail > finalize > awaitClarification > backoff > continue |
 * | `inDoubt`            | per call: ask > tell_model > rerun  | `onInDoubt` only; a call no policy names is asked about |
 * | `labels`             | later policies override keys        | merged into the run's labels                |
 * | `state`              | per policy, replaced                | the policy's own JSON memory, persisted     |
 */
export interface PolicyDecision {
  /** Tighten only: merged by min, never above the configured ceilings. */
  caps?: Partial<Caps>;
  /** Removed from the advertised tools; calls to them become `tool_unavailable` without executing. */
  disableTools?: string[];
  /** Re-enables tools that this same policy disabled (e.g. a half-open circuit breaker). */
  enableTools?: string[];
  /** The next planner turn sees only this tool (restrictions of several policies intersect). */
  restrictToTool?: string;
  /** Wait this long, in ms, in `awaiting.backoff` before the next planner turn. */
  backoffMs?: number;
  /**
   * Ask a person; the run waits in `awaiting.clarification`. `true`, or any part of an
   * {@link AwaitClarification}: what is left out comes from the hint (its clarifyingQuestion,
   * missingFields, exampleInput, and its tool when the hint has `restrictToTool`).
   */
  awaitClarification?: true | Partial<AwaitClarification>;
  /**
   * `onToolBatch` only: these calls of the batch wait for a person's approval
   * (`awaiting.confirmation`) before they run. `calls`: toolCallIds or tool ids of the batch
   * (absent: every call); `prompt` and `details` are what the person is shown (first policy's
   * win; calls are unioned). E.g. approve refunds above 100 EUR (docs/policies.md §Conditional approval).
   */
  confirm?: { calls?: string[]; prompt?: string; details?: unknown };
  /**
   * `onToolBatch` only: these calls of the batch are not run (toolCallIds or tool ids; absent:
   * every call). Each gets a result `executed: false` whose error says `message`, with a
   * RetryHint of `reason` (default `no_progress`) the planner reads; the rest of the batch runs.
   * Refusals of several policies add up. E.g. "not run: made 5 times with the same result"
   * (docs/policies.md §No progress).
   */
  refuse?: { calls?: string[]; message: string; reason?: RetryReason };
  /**
   * `onToolResult` and `onRetryHint` only: a RetryHint the planner reads with the result being
   * reviewed (added to its tool message, the planner's `toolResults`, `ctx.hints` and a
   * `retry_hint` event). E.g. `{ reason: 'no_progress', message: 'called 3 times, same result' }`.
   */
  hint?: { reason: RetryReason; message: string };
  /**
   * `onInDoubt` only: what becomes of calls in doubt (docs/durability.md §Effects). `calls`:
   * toolCallIds or tool ids of the calls in doubt (absent: every call). `ask` (what happens to a
   * call no policy names): the run waits in `awaiting.inDoubt` for `resolveInDoubt`; `rerun`: the
   * call runs again, under the same idempotency key (the policy vouches that a second run is
   * harmless); `tell_model`: the planner gets the call's result as an error with a RetryHint of
   * reason `outcome_unknown` and decides. Several choices about one call: the most careful wins
   * (ask > tell_model > rerun). An array gives different calls different actions.
   */
  inDoubt?: InDoubtChoice | InDoubtChoice[];
  /**
   * Finish: the planner is asked for a final answer with no tools (`finalizing`). From
   * `onInDoubt`, the calls in doubt stay in doubt in the run's record (`toolResults[i].inDoubt`)
   * and the planner reads them as errors that say their outcome is unknown.
   */
  finalize?: { reason: string };
  /** Fail the run (`failed`, a `PolicyError` naming this policy). */
  fail?: { reason: string };
  labels?: Record<string, string>;
  /** Why; shown in `policy_decision` events and spans. */
  note?: string;
  /**
   * The fingerprint of the call the decision is about (`callFingerprint(tool, input)`, policies/call-fingerprint.ts),
   * shown on the `policy_decision` event (`decision.fingerprint`) and its span event
   * (`toolwarden.tool_call.fingerprint`).
   */
  fingerprint?: string;
  /**
   * This policy's new memory (JSON), handed back as `ctx.state` next time and persisted in the
   * run's snapshot. Absent: unchanged. A decision that only sets `state` is not an event.
   */
  state?: JsonValue;
}

export type { InDoubtAction } from '../run/policy-effects.ts';

/** What an `onInDoubt` policy chooses for calls in doubt ({@link PolicyDecision.inDoubt}). */
export interface InDoubtChoice {
  action: InDoubtAction;
  /** toolCallIds or tool ids of the calls in doubt; absent: every call. */
  calls?: string[];
}

const InDoubtChoiceSchema = lazySchema(() =>
  z
    .object({ action: z.enum(['ask', 'tell_model', 'rerun']), calls: z.array(z.string().min(1)).optional() })
    .strict(),
);

/** Checks a decision a policy returned; a decision that fails it is a policy error. */
export const PolicyDecisionSchema = lazySchema(() =>
  z
    .object({
      caps: CapsSchema.partial().strict(),
      disableTools: z.array(z.string().min(1)),
      enableTools: z.array(z.string().min(1)),
      restrictToTool: z.string().min(1),
      backoffMs: z.number().finite().nonnegative(),
      awaitClarification: z.union([z.literal(true), AwaitClarificationSchema.partial()]),
      confirm: z
        .object({ calls: z.array(z.string().min(1)), prompt: z.string().min(1), details: z.unknown() })
        .partial()
        .strict(),
      refuse: z
        .object({
          calls: z.array(z.string().min(1)).optional(),
          message: z.string().min(1).max(4_096),
          reason: RetryReasonSchema.optional(),
        })
        .strict(),
      hint: z.object({ reason: RetryReasonSchema, message: z.string().min(1).max(4_096) }).strict(),
      inDoubt: z.union([InDoubtChoiceSchema, z.array(InDoubtChoiceSchema).max(1_000)]),
      finalize: z.object({ reason: z.string().min(1) }),
      fail: z.object({ reason: z.string().min(1) }),
      labels: z.record(z.string(), z.string()),
      note: z.string(),
      fingerprint: z.string().min(1).max(128),
      state: z.unknown(),
    })
    .partial()
    .strict(),
);

/** One tool as a policy sees it (`ctx.tools[id]`). Counts include the batch being reviewed. */
export interface PolicyToolState {
  id: string;
  /** In the runtime's catalog. */
  known: boolean;
  tags: readonly string[];
  /** Not disabled (by the app, a policy or the retry cap) at this point of the consultation. */
  enabled: boolean;
  /** Who disabled it: `app`, `retry_cap`, or a policy name (the first, when several did). */
  disabledBy?: string;
  calls: number;
  failures: number;
  /** Failed calls of this tool in a row. */
  consecutiveFailures: number;
  lastHint?: PolicyRetryHint;
}

/** Effects decided earlier in the same consultation, as later policies see them. */
export interface PendingEffects {
  /** The tools the next turn is restricted to; absent when unrestricted. */
  restrictTo?: readonly string[];
  backoffMs?: number;
  awaitClarification?: AwaitClarification;
  finalize?: { reason: string };
}

/**
 * What a policy reads (docs/policies.md). Read-only (deeply frozen) and, within one consultation, the
 * state after the policies registered before it: their caps, disabled tools, labels and effects.
 */
export interface PolicyContext {
  /** Effective caps with usage so far. */
  readonly caps: Readonly<CapsState>;
  /** The configured caps; no decision can go above them. */
  readonly ceilings: Readonly<Caps>;
  /** Every tool in the catalog, and any other tool the run has called or disabled, by id. */
  readonly tools: Readonly<Record<string, Readonly<PolicyToolState>>>;
  /** `tools[id]`, or the state of a tool the run has never seen. */
  tool(id: string): Readonly<PolicyToolState>;
  readonly run: Readonly<{
    runId: string;
    sessionId?: string;
    agentId: string;
    labels: Readonly<Record<string, string>>;
    /** Planner turns taken so far (0 before the first). */
    turn: number;
    turnId: string;
    /** Epoch ms. */
    startedAt: number;
  }>;
  /**
   * The run's recent hints, the one being considered included, oldest first: a bounded window
   * (the newest 32 to 64, machines/hint-window.ts); `tools` counts every failure per tool.
   */
  readonly hints: readonly PolicyRetryHint[];
  /** This policy's memory: the last `state` it decided, or undefined. */
  readonly state: Readonly<JsonValue> | undefined;
  readonly effects: Readonly<PendingEffects>;
  /** Epoch ms (a test clock under the policy harness). */
  now(): number;
}

type Decided = PolicyDecision | undefined;
/** What a hook returns: a decision, nothing, or a promise of either. */
export type PolicyHookResult = Decided | Promise<Decided>;

/** What `definePolicy` takes. Every hook is optional, but a policy needs at least one. */
export interface PolicyDefinition {
  /** Unique within a runtime; names the policy in events, errors and disabled tools. */
  name: string;
  description?: string;
  /** When true, a throw or time-out of this policy is recorded and ignored; else the run fails. */
  failOpen?: boolean;
  /** Limit for each async hook call, in ms. Default: the engine's (1 000). */
  timeoutMs?: number;
  /**
   * When a run starts, before its first planner turn (so disabled tools are never advertised).
   * Synchronous. Only `caps`, `disableTools`, `labels`, `note` and `fail` apply (they set the
   * run's initial caps, disabled tools and labels); a `fail` here makes `runtime.start` throw a
   * `PolicyError`.
   */
  onRunStart?(ctx: PolicyContext): Decided;
  /** For every hint (validation and execution alike), after its result's `onToolResult`. */
  onRetryHint?(hint: PolicyRetryHint, ctx: PolicyContext): PolicyHookResult;
  /** Before a batch is admitted: may disable tools, tighten caps, finalize or fail. */
  onToolBatch?(batch: readonly BatchCall[], ctx: PolicyContext): PolicyHookResult;
  /**
   * A cheap, synchronous gate on `onToolBatch`, given this policy's memory (`ctx.state`): `false`
   * skips the hook for this batch, and when no policy needs the batch the run skips the step
   * (its `steps` round trip and state) altogether. E.g. `noProgress` consults batches only once a
   * call is due to be refused. A throw counts as `true`.
   */
  consultBatchWhen?(state: Readonly<JsonValue> | undefined): boolean;
  /**
   * After each result of a batch, in call order (rejected calls included). `call` is the call as
   * the planner proposed it (its name and input, before validation), when the run still has it.
   */
  onToolResult?(result: ToolResult, ctx: PolicyContext, call?: ProposedCall): PolicyHookResult;
  /**
   * Makes `onToolResult` a hook for repeated calls only: it is consulted for the result of a call
   * whose key (`repeatKey(tool, input)`, e.g. {@link callFingerprint}) equals an earlier call's in
   * the transcript, and gets those earlier calls with their results (`call.earlier`). A run whose
   * calls do not repeat then skips the review step for this policy (noProgress: on by default at no
   * cost to such runs). Synchronous; a throw counts as "no repeat".
   */
  repeatKey?(tool: string, input: unknown): string;
  /**
   * The calls of a batch whose outcome is unknown (docs/durability.md §Effects: restored after a
   * crash, a takeover or a lost Temporal worker, started and never recorded finished, and neither
   * re-runnable by declaration nor settled by `reconcile`), before the run waits for a person.
   * Decides with `inDoubt` (ask, rerun, tell_model; per call), `finalize` (finish the run: a
   * final answer, the calls left in doubt) or `fail`; `labels`, `state` and `note` apply too.
   * No decision: the run waits in `awaiting.inDoubt`, as it does without policies.
   */
  onInDoubt?(calls: readonly InDoubtCall[], ctx: PolicyContext): PolicyHookResult;
}

/** A defined policy (a value of {@link definePolicy}). */
export interface Policy extends Readonly<PolicyDefinition> {
  readonly kind: 'policy';
}

/** The hooks a policy may define (docs/policies.md). */
export type PolicyHookName = 'onRunStart' | 'onRetryHint' | 'onToolBatch' | 'onToolResult' | 'onInDoubt';

/** Thrown by {@link definePolicy} and the engine for a policy that can never work. */
export class PolicyDefinitionError extends Error {
  override readonly name = 'PolicyDefinitionError';
}

/** Names the engine uses for disablers that are not policies. */
export const RESERVED_POLICY_NAMES: readonly string[] = ['app', 'retry_cap'];

/**
 * Defines a policy (docs/policies.md): a name and hooks that return {@link PolicyDecision}s.
 *
 * ```ts
 * const strictWrites = definePolicy({
 *   name: 'strict-writes',
 *   onRetryHint(hint, ctx) {
 *     if (!ctx.tool(hint.tool).tags.includes('write')) return;
 *     if (hint.reason === 'malformed_response') return { disableTools: [hint.tool], note: 'bad output' };
 *   },
 * });
 * ```
 *
 * @throws PolicyDefinitionError for a missing or reserved name (`app`, `retry_cap`), no hooks,
 *   or a `timeoutMs` that is not a positive number.
 */
export function definePolicy(definition: PolicyDefinition): Policy {
  const { name } = definition;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new PolicyDefinitionError('A policy needs a non-empty name');
  }
  if (RESERVED_POLICY_NAMES.includes(name)) {
    throw new PolicyDefinitionError(`Policy name "${name}" is reserved`);
  }
  const hooks: PolicyHookName[] = ['onRunStart', 'onRetryHint', 'onToolBatch', 'onToolResult', 'onInDoubt'];
  if (!hooks.some((hook) => typeof definition[hook] === 'function')) {
    throw new PolicyDefinitionError(`Policy "${name}" has no hooks (${hooks.join(', ')})`);
  }
  if (definition.repeatKey !== undefined && typeof definition.onToolResult !== 'function') {
    throw new PolicyDefinitionError(`Policy "${name}": repeatKey gates onToolResult, which it lacks`);
  }
  if (definition.consultBatchWhen !== undefined && typeof definition.onToolBatch !== 'function') {
    throw new PolicyDefinitionError(`Policy "${name}": consultBatchWhen gates onToolBatch, which it lacks`);
  }
  if (definition.timeoutMs !== undefined && !(definition.timeoutMs > 0)) {
    throw new PolicyDefinitionError(`Policy "${name}": timeoutMs must be a positive number of ms`);
  }
  return Object.freeze({ ...definition, kind: 'policy' as const });
}

export function isPolicy(value: unknown): value is Policy {
  return typeof value === 'object' && value !== null && (value as Policy).kind === 'policy';
}
