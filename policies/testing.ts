import type { InDoubtCall, PendingCall } from '../machines/run-context.ts';
import { type Caps, CapsSchema, DEFAULT_CAPS, tightenCaps } from '../run/caps.ts';
import type { AwaitClarification } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import type { PolicyDecisionRecord } from '../run/run-events.ts';
import type { Tool } from '../tools/define-tool.ts';
import { type PolicyRetryHint, type RetryHint, toPolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import { ToolError } from '../tools/tool-error.ts';
import type { InDoubtCause, ToolResultJSON } from '../tools/tool-result.ts';
import type { Policy, PolicyToolState } from './define-policy.ts';
import type { PolicyRunContext, ToolInfo } from './policy-consultation.ts';
import { createPolicyEngine, type PolicyEngine } from './policy-engine.ts';
import type { JsonValue } from './policy-json.ts';
import { readEngineState } from './policy-state.ts';

/**
 * A test bench for policy authors (docs/architecture.md §Uses "tests it in isolation"): feed batches, results and
 * hints to one policy or a set, then read the decisions and the resulting caps and tool states.
 * No runtime, no actor, no timers: a fake clock you move with {@link PolicyHarness.advance}.
 *
 * It drives the same {@link createPolicyEngine} the runtime uses and keeps a run context the way
 * the run machine does (turns, counters, tool stats, hints, and effects applied with the same
 * rules: caps by min, app-disabled tools kept), so what passes here behaves the same in a run.
 *
 * ```ts
 * const h = policyHarness({ policies: [restrictOnInvalidArguments({ maxRetries: 1 })], tools: [upsert] });
 * await h.hint({ reason: 'invalid_arguments', tool: 'crm.upsert_profile' });
 * expect(h.restrictTo).toEqual(['crm.upsert_profile']);
 * await h.hint({ reason: 'invalid_arguments', tool: 'crm.upsert_profile' });
 * expect(h.tool('crm.upsert_profile').enabled).toBe(false);
 * ```
 */
export interface PolicyHarnessOptions {
  policies: readonly Policy[];
  /** The tools the run knows (ids and tags matter to policies). */
  tools?: ToolCatalog | readonly (Tool | ToolInfo)[];
  /** The configured caps (ceilings). Default: the runtime's defaults. */
  caps?: Partial<Caps>;
  /** Tools the app disabled for the run. */
  disabledTools?: string[];
  labels?: Record<string, string>;
  runId?: string;
  sessionId?: string;
  agentId?: string;
  /** The fake clock's start, epoch ms. Default 2025-01-01T00:00:00Z. */
  now?: number;
  /** Default limit of async hooks, ms (as the engine's `timeoutMs`). */
  timeoutMs?: number;
}

/** A proposed call for {@link PolicyHarness.batch}. */
export interface HarnessCall {
  name: string;
  input?: unknown;
  toolCallId?: string;
}

/** A call's outcome for {@link PolicyHarness.review}: a success (`result`) or a failure. */
export interface HarnessResult {
  name: string;
  toolCallId?: string;
  result?: unknown;
  /** A failure: its message, or a ToolError. Set from the hint's message when only a hint is given. */
  error?: string | ToolError;
  /** Default: false for validation and `tool_unavailable` hints, else true. */
  executed?: boolean;
  /** The hint the boundary attached; `tool` defaults to `name`, the rest to plain values. */
  retryHint?: Partial<RetryHint> & Pick<RetryHint, 'reason'>;
}

/** Where the run would go after a step (docs/policies.md §Merge rules precedence). */
export type HarnessOutcome = 'fail' | 'finalize' | 'awaitClarification' | 'backoff' | 'continue';

/** One consultation of the engine and what it decided. */
export interface HarnessStep {
  hook: 'onRunStart' | 'onToolBatch' | 'onResults' | 'onInDoubt';
  turn: number;
  effects: PolicyEffects;
  decisions: PolicyDecisionRecord[];
  outcome: HarnessOutcome;
}

/**
 * The run as the harness keeps it: the parts of the run machine's context that policies read,
 * plus the batch in flight and the hints not yet reviewed.
 */
export interface HarnessRun extends PolicyRunContext {
  pending: PendingCall[];
  lastResults: ToolResultJSON[];
  newHints: PolicyRetryHint[];
}

const VALIDATION = new Set(['invalid_arguments', 'missing_fields', 'tool_unavailable']);

/** The bench {@link policyHarness} returns: feed it hints, batches and results, read decisions, caps and tools. */
export class PolicyHarness {
  readonly engine: PolicyEngine;
  readonly steps: HarnessStep[] = [];
  /** What the run waits for after the last step, as the machine would enter it. */
  awaiting:
    | { kind: 'backoff'; until: number }
    | { kind: 'clarification'; clarification: AwaitClarification }
    | null = null;
  /** Set once a step failed or finalized the run. */
  ended: { outcome: 'fail' | 'finalize'; reason: string } | null = null;
  private ctx: HarnessRun;
  private clock: number;
  private batchOpen = false;

  /** @internal Use {@link policyHarness}; `restored` is a context from {@link PolicyHarness.snapshot}. */
  constructor(
    private readonly options: PolicyHarnessOptions,
    restored?: { context: HarnessRun; now: number },
  ) {
    this.clock = restored?.now ?? options.now ?? Date.UTC(2025, 0, 1);
    this.engine = createPolicyEngine({
      policies: options.policies,
      tools: options.tools,
      timeoutMs: options.timeoutMs,
      now: () => this.clock,
    });
    if (restored) {
      this.ctx = structuredClone(restored.context);
      return;
    }
    const caps = CapsSchema.parse({ ...DEFAULT_CAPS, ...options.caps });
    const start = this.engine.onRunStart({
      runId: options.runId ?? 'run-1',
      agent: { id: options.agentId ?? 'agent', name: options.agentId ?? 'agent' },
      sessionId: options.sessionId,
      labels: options.labels ?? {},
      caps,
      disabledTools: Object.fromEntries((options.disabledTools ?? []).map((id) => [id, 'app'])),
      startedAt: this.clock,
    });
    this.ctx = {
      runId: options.runId ?? 'run-1',
      agent: { id: options.agentId ?? 'agent', name: options.agentId ?? 'agent' },
      sessionId: options.sessionId,
      labels: start.labels,
      startedAt: this.clock,
      turn: 0,
      ceilings: start.caps,
      caps: start.caps,
      toolCalls: 0,
      consecutiveFailures: 0,
      toolStats: {},
      disabledTools: start.disabledTools,
      restrictTo: null,
      pending: [],
      lastResults: [],
      newHints: [],
      hints: [],
      policyState: null,
    };
    this.record('onRunStart', { decisions: start.decisions });
  }

  /** The run as the machine would hold it now (a copy of the parts policies read). */
  get context(): HarnessRun {
    return structuredClone(this.ctx);
  }

  /** Every decision so far, in order. */
  get decisions(): PolicyDecisionRecord[] {
    return this.steps.flatMap((step) => step.decisions);
  }

  get caps(): Caps {
    return { ...this.ctx.caps };
  }

  /** Tool id → who disabled it (`app`, `retry_cap`, a policy name). */
  get disabledTools(): Record<string, string> {
    return { ...this.ctx.disabledTools };
  }

  /** The tools the next turn is restricted to, or null. */
  get restrictTo(): string[] | null {
    return this.ctx.restrictTo ? [...this.ctx.restrictTo] : null;
  }

  get labels(): Record<string, string> {
    return { ...this.ctx.labels };
  }

  /** Every hint fed so far, in the runtime's (`policy.RetryHint`) form. */
  get hints(): PolicyRetryHint[] {
    return structuredClone(this.ctx.hints);
  }

  /** A tool's state as policies see it. */
  tool(id: string): Omit<PolicyToolState, 'known' | 'tags'> {
    const stats = this.ctx.toolStats[id];
    const disabledBy = this.ctx.disabledTools[id];
    return {
      id,
      enabled: disabledBy === undefined,
      ...(disabledBy !== undefined ? { disabledBy } : {}),
      calls: stats?.calls ?? 0,
      failures: stats?.failures ?? 0,
      consecutiveFailures: stats?.consecutiveFailures ?? 0,
      ...(stats?.lastHint ? { lastHint: structuredClone(stats.lastHint) } : {}),
    };
  }

  /** A policy's own memory (`ctx.state`), as persisted. */
  memory(policy: string): JsonValue | undefined {
    return readEngineState(this.ctx.policyState).memory[policy];
  }

  /** The fake clock, epoch ms. */
  now(): number {
    return this.clock;
  }

  /** Moves the fake clock forward. */
  advance(ms: number): this {
    this.clock += ms;
    return this;
  }

  /**
   * The planner proposes a batch (a new turn): `onToolBatch`. Calls count against
   * `maxToolCalls` as in the run. Follow with {@link review} for the batch's results.
   */
  async batch(calls: HarnessCall[]): Promise<HarnessStep> {
    this.startTurn();
    this.batchOpen = true;
    const batch = calls.map((call, index) => ({
      toolCallId: call.toolCallId ?? `${this.turnId}:c${index + 1}`,
      name: call.name,
      input: call.input ?? {},
      attempt: (this.ctx.toolStats[call.name]?.consecutiveFailures ?? 0) + 1,
    }));
    this.ctx.pending = batch.map((call) => ({ ...call, status: 'proposed' }));
    this.ctx.toolCalls += batch.length;
    const effects = await this.engine.onToolBatch(structuredClone(this.ctx), batch);
    return this.apply('onToolBatch', effects);
  }

  /**
   * Calls of the open {@link batch} (or new ones) come back in doubt after a restore
   * (docs/durability.md §Effects): `onInDoubt`. `startedAt` defaults to the fake clock, `cause`
   * to `restored`. What the policies chose per call is `step.effects.inDoubt` (a call not in it is
   * asked about).
   */
  async inDoubt(calls: (HarnessCall & { startedAt?: number; cause?: InDoubtCause })[]): Promise<HarnessStep> {
    const pending = this.ctx.pending;
    const inDoubt: InDoubtCall[] = calls.map((call, index) => ({
      toolCallId:
        call.toolCallId ??
        pending.find((p) => p.name === call.name)?.toolCallId ??
        `${this.turnId}:c${index + 1}`,
      name: call.name,
      input: (call.input ?? {}) as Record<string, unknown>,
      startedAt: call.startedAt ?? this.clock,
      cause: call.cause ?? 'restored',
    }));
    const effects = await this.engine.onInDoubt(structuredClone(this.ctx), inDoubt);
    return this.apply('onInDoubt', effects);
  }

  /**
   * A batch's results are reviewed: `onToolResult` for each, `onRetryHint` for each hint. Without
   * a {@link batch} before it, the results are a batch of their own (a new turn).
   */
  async review(results: HarnessResult[]): Promise<HarnessStep> {
    if (!this.batchOpen) {
      this.startTurn();
      this.ctx.toolCalls += results.length;
    }
    this.batchOpen = false;
    const pending = this.ctx.pending;
    const hints: PolicyRetryHint[] = [];
    const json = results.map((input, index): ToolResultJSON => {
      const call =
        pending.find((p) => p.toolCallId === input.toolCallId) ?? pending.find((p) => p.name === input.name);
      const toolCallId = input.toolCallId ?? call?.toolCallId ?? `${this.turnId}:c${index + 1}`;
      const attempt = (this.ctx.toolStats[input.name]?.consecutiveFailures ?? 0) + 1;
      const hint = input.retryHint ? fullHint(input.name, input.retryHint) : undefined;
      const error = input.error ?? (hint ? hint.message : undefined);
      if (hint) {
        hints.push(
          toPolicyRetryHint(
            hint,
            {
              runId: this.ctx.runId,
              sessionId: this.ctx.sessionId,
              turnId: this.turnId,
              toolCallId,
              agentId: this.ctx.agent.id,
              attempt,
            },
            this.clock,
          ),
        );
      }
      const out: ToolResultJSON = {
        name: input.name,
        toolCallId,
        executed: input.executed ?? !(hint && VALIDATION.has(hint.reason)),
      };
      if (error !== undefined) {
        out.error = (
          typeof error === 'string' ? new ToolError(error, { recoverable: true }) : error
        ).toJSON();
        if (hint) out.retryHint = hint;
      } else {
        out.result = input.result ?? null;
      }
      return out;
    });
    this.ctx.newHints = hints;
    this.ctx.hints = [...this.ctx.hints, ...hints];
    this.fold(json);
    const effects = await this.engine.onResults(structuredClone(this.ctx), this.ctx.lastResults, hints);
    this.ctx.newHints = [];
    return this.apply('onResults', effects);
  }

  /** Shorthand: one failed call with this hint, reviewed. `tool` names the tool. */
  hint(
    hint: Partial<RetryHint> & Pick<RetryHint, 'reason' | 'tool'>,
    extra: Omit<HarnessResult, 'name' | 'retryHint'> = {},
  ) {
    return this.review([{ ...extra, name: hint.tool, retryHint: hint }]);
  }

  /** Shorthand: one call's result, reviewed. */
  result(result: HarnessResult): Promise<HarnessStep> {
    return this.review([result]);
  }

  /** The persisted form of the run so far: what a store would hold. */
  snapshot(): { context: HarnessRun; now: number } {
    return { context: JSON.parse(JSON.stringify(this.ctx)) as HarnessRun, now: this.clock };
  }

  /**
   * A new harness (a new engine, as after a process restart) carrying on from {@link snapshot};
   * `options` replace the original ones (e.g. other policies, as after a redeploy).
   */
  restore(options: Partial<PolicyHarnessOptions> = {}): PolicyHarness {
    return new PolicyHarness({ ...this.options, ...options }, this.snapshot());
  }

  private get turnId(): string {
    return `${this.ctx.runId}:t${this.ctx.turn}`;
  }

  /** A planner turn took what was handed to it (the machine's `startTurn` + `clearTurnInputs`). */
  private startTurn(): void {
    this.ctx.turn += 1;
    this.ctx.restrictTo = null;
    this.ctx.pending = [];
    this.awaiting = null;
  }

  /** Counters and stats, as the machine folds a batch in `resuming`. */
  private fold(results: ToolResultJSON[]): void {
    for (const result of results) {
      const stats = {
        ...(this.ctx.toolStats[result.name] ?? { calls: 0, failures: 0, consecutiveFailures: 0 }),
      };
      stats.calls += 1;
      if (result.error) {
        stats.failures += 1;
        stats.consecutiveFailures += 1;
        this.ctx.consecutiveFailures += 1;
      } else {
        stats.consecutiveFailures = 0;
        this.ctx.consecutiveFailures = 0;
      }
      const hint = this.ctx.newHints.findLast((h) => h.toolCallId === result.toolCallId);
      if (hint) stats.lastHint = hint;
      this.ctx.toolStats[result.name] = stats;
    }
    this.ctx.lastResults = results;
    this.ctx.pending = [];
  }

  /** Effects applied as the run machine applies them (`applyEffects`). */
  private apply(hook: HarnessStep['hook'], effects: PolicyEffects): HarnessStep {
    const app = Object.fromEntries(Object.entries(this.ctx.disabledTools).filter(([, by]) => by === 'app'));
    this.ctx.caps = tightenCaps(this.ctx.caps, effects.caps);
    if (effects.disabledTools) this.ctx.disabledTools = { ...effects.disabledTools, ...app };
    if (effects.restrictTo) this.ctx.restrictTo = [...effects.restrictTo];
    if (effects.labels) this.ctx.labels = { ...this.ctx.labels, ...effects.labels };
    if (effects.policyState !== undefined) this.ctx.policyState = structuredClone(effects.policyState);
    if (effects.fail) this.ended = { outcome: 'fail', reason: effects.fail.reason };
    else if (effects.finalize) this.ended = { outcome: 'finalize', reason: effects.finalize.reason };
    else if (effects.awaitClarification) {
      this.awaiting = { kind: 'clarification', clarification: effects.awaitClarification };
    } else if (effects.backoffMs) this.awaiting = { kind: 'backoff', until: this.clock + effects.backoffMs };
    return this.record(hook, effects);
  }

  private record(hook: HarnessStep['hook'], effects: PolicyEffects): HarnessStep {
    const step: HarnessStep = {
      hook,
      turn: this.ctx.turn,
      effects,
      decisions: effects.decisions,
      outcome: effects.fail
        ? 'fail'
        : effects.finalize
          ? 'finalize'
          : effects.awaitClarification
            ? 'awaitClarification'
            : effects.backoffMs
              ? 'backoff'
              : 'continue',
    };
    this.steps.push(step);
    return step;
  }
}

/**
 * Starts a {@link PolicyHarness}: the policies' `onRunStart` runs at once.
 *
 * @throws PolicyError when a policy fails the run at its start; PolicyDefinitionError for bad
 *   policies (as `createRuntime` would).
 */
export function policyHarness(options: PolicyHarnessOptions): PolicyHarness {
  return new PolicyHarness(options);
}

function fullHint(tool: string, hint: Partial<RetryHint> & Pick<RetryHint, 'reason'>): RetryHint {
  return {
    tool,
    restrictToTool: hint.reason === 'invalid_arguments' || hint.reason === 'missing_fields',
    missingFields: [],
    message: `${hint.tool ?? tool}: ${hint.reason}`,
    ...hint,
  };
}
