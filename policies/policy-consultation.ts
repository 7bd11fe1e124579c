import type { RunContext } from '../machines/run-context.ts';
import { deadlineAt as runDeadline } from '../machines/run-updates.ts';
import type { Caps } from '../run/caps.ts';
import type { AwaitClarification } from '../run/planner.ts';
import type { InDoubtAction, PolicyEffects } from '../run/policy-effects.ts';
import type { PolicyDecisionRecord } from '../run/run-events.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import { clarificationFromHint } from './clarification-from-hint.ts';
import {
  type PendingEffects,
  type Policy,
  type PolicyContext,
  type PolicyDecision,
  PolicyDecisionSchema,
  type PolicyHookName,
  type PolicyToolState,
} from './define-policy.ts';
import { PolicyError } from './policy-error.ts';
import { deepFreeze, frozenCopy, type JsonValue, nonJsonPath } from './policy-json.ts';
import { type PolicyEngineState, readEngineState } from './policy-state.ts';

/** What a consultation starts from: the run as the machine holds it (a RunContext fits). */
export type ConsultationRun = Pick<
  RunContext,
  | 'runId'
  | 'sessionId'
  | 'agent'
  | 'labels'
  | 'turn'
  | 'startedAt'
  | 'ceilings'
  | 'caps'
  | 'toolCalls'
  | 'consecutiveFailures'
  | 'toolStats'
  | 'disabledTools'
  | 'restrictTo'
  | 'policyState'
> & { flow?: Pick<RunContext['flow'], 'awaitedMs'> };

/** What the engine reads of a run: a {@link RunContext} fits; so does the policy harness's run. */
export type PolicyRunContext = ConsultationRun & Pick<RunContext, 'hints'>;

/** What the engine knows of a tool: its id and tags (from the runtime's catalog). */
export interface ToolInfo {
  id: string;
  tags: readonly string[];
}

/** Tool lookup for policy contexts. */
export interface ToolDirectory {
  get(id: string): ToolInfo | undefined;
  ids(): readonly string[];
}

/** What a decision is about, for its record and its default clarification. */
export interface DecisionSubject {
  toolCallId?: string;
  tool?: string;
  hint?: PolicyRetryHint;
}

const EFFECT_KINDS = [
  'caps',
  'disableTools',
  'enableTools',
  'restrictToTool',
  'backoffMs',
  'awaitClarification',
  'confirm',
  'refuse',
  'hint',
  'inDoubt',
  'finalize',
  'fail',
  'labels',
] as const;

/** What `onRunStart` may decide (the run's initial caps, tools, labels): the rest concerns a turn or a batch. */
const RUN_START_KINDS: ReadonlySet<string> = new Set(['caps', 'disableTools', 'labels', 'fail']);

/**
 * What `onInDoubt` may decide: the fate of the calls, finishing or failing the run, and the run's
 * caps, tools and labels. The rest concerns the next turn, which only a settled batch has.
 */
const IN_DOUBT_KINDS: ReadonlySet<string> = new Set([
  'caps',
  'disableTools',
  'enableTools',
  'inDoubt',
  'finalize',
  'fail',
  'labels',
]);

/** How careful each in-doubt action is: the most careful of several choices about a call wins. */
const IN_DOUBT_CARE: Record<InDoubtAction, number> = { ask: 2, tell_model: 1, rerun: 0 };

/**
 * One consultation of the policies (one `onRunStart`, `onToolBatch` or `onResults` call of the
 * engine): the running merge of their decisions, in registration order, under docs/policies.md §Merge rules.
 * Each policy reads the state after the previous ones through {@link contextFor}.
 *
 * | effect               | rule                                                              |
 * |----------------------|-------------------------------------------------------------------|
 * | caps                 | min; a value above the current cap is ignored (so never above the ceilings) |
 * | disabled tools       | union; each tool remembers every policy that disabled it          |
 * | enableTools          | removes only the deciding policy from the tool's disablers; `app`, `retry_cap` and other policies stay |
 * | restrictions         | intersection (starting from the run's current one)                |
 * | backoff              | max                                                               |
 * | clarification, finalize, fail | first decided wins                                       |
 * | outcome              | fail > finalize > awaitClarification > backoff > continue         |
 * | in-doubt calls       | per call, the most careful choice: ask > tell_model > rerun       |
 * | labels               | later policies override keys                                      |
 *
 * A fail (decided, or a policy error) ends the consultation: the engine stops asking.
 */
export class Consultation {
  caps: Caps;
  restrictTo: string[] | null;
  backoffMs = 0;
  awaitClarification?: AwaitClarification & { missingFields: string[] };
  finalize?: { reason: string };
  confirm?: NonNullable<PolicyEffects['confirm']>;
  readonly refuse: NonNullable<PolicyEffects['refuse']> = [];
  readonly resultHints: NonNullable<PolicyEffects['resultHints']> = [];
  /** `onInDoubt`: the calls in doubt being decided on, and what each policy chose for them. */
  inDoubtCalls: readonly { toolCallId: string; name: string }[] = [];
  private readonly inDoubt = new Map<string, { action: InDoubtAction; policy: string }>();
  fail?: { reason: string };
  /** The error that failed the consultation, when a policy broke its contract or decided `fail`. */
  error?: PolicyError;
  readonly decisions: PolicyDecisionRecord[] = [];
  /** Effects of `onToolBatch` kept for the review of the batch's results. */
  carry: PolicyEngineState['carry'];
  private readonly labels: Record<string, string>;
  private readonly labelChanges: Record<string, string> = {};
  /** Tool id → who disabled it: `app`, `retry_cap`, policy names; the run's label first. */
  private readonly owners = new Map<string, string[]>();
  private readonly memory: Record<string, JsonValue>;
  private readonly hints: PolicyRetryHint[];

  constructor(
    private readonly run: ConsultationRun,
    private readonly policyNames: ReadonlySet<string>,
    private readonly directory: ToolDirectory,
    private readonly clock: () => number,
    priorHints: readonly PolicyRetryHint[],
  ) {
    const state = readEngineState(run.policyState);
    this.memory = state.memory;
    this.carry = state.carry;
    this.caps = minCaps(run.caps, run.ceilings);
    this.restrictTo = run.restrictTo ? [...run.restrictTo] : null;
    this.labels = { ...run.labels };
    this.hints = priorHints.map((hint) => frozenCopy(hint));
    for (const [tool, who] of Object.entries(run.disabledTools)) {
      const policies = (state.disabledBy[tool] ?? []).filter((name) => this.policyNames.has(name));
      this.owners.set(tool, policies.includes(who) ? policies : [who, ...policies]);
    }
  }

  get now(): number {
    return this.clock();
  }

  get turnId(): string {
    return `${this.run.runId}:t${this.run.turn}`;
  }

  /** Makes `hint` part of `ctx.hints` from now on. */
  addHint(hint: PolicyRetryHint): void {
    this.hints.push(frozenCopy(hint));
  }

  /** The read-only context `policy` is given now. */
  contextFor(policy: Policy): PolicyContext {
    const tools: Record<string, PolicyToolState> = {};
    const ids = new Set([...this.directory.ids(), ...Object.keys(this.run.toolStats), ...this.owners.keys()]);
    for (const id of ids) tools[id] = this.toolState(id);
    const deadlineAt = runDeadline({ startedAt: this.run.startedAt, caps: this.caps, flow: this.run.flow });
    const effects: PendingEffects = {};
    if (this.restrictTo) effects.restrictTo = [...this.restrictTo];
    if (this.backoffMs > 0) effects.backoffMs = this.backoffMs;
    if (this.awaitClarification) effects.awaitClarification = structuredClone(this.awaitClarification);
    if (this.finalize) effects.finalize = { ...this.finalize };
    const memory = this.memory[policy.name];
    const context: PolicyContext = {
      caps: {
        ...this.caps,
        toolCalls: this.run.toolCalls,
        remainingToolCalls: Math.max(0, this.caps.maxToolCalls - this.run.toolCalls),
        consecutiveFailedToolCalls: this.run.consecutiveFailures,
        deadlineAt,
      },
      ceilings: { ...this.run.ceilings },
      tools,
      tool: (id: string) => tools[id] ?? deepFreeze(this.toolState(id)),
      run: {
        runId: this.run.runId,
        sessionId: this.run.sessionId,
        agentId: this.run.agent.id,
        labels: { ...this.labels },
        turn: this.run.turn,
        turnId: this.turnId,
        startedAt: this.run.startedAt,
      },
      hints: [...this.hints],
      state: memory === undefined ? undefined : structuredClone(memory),
      effects,
      now: this.clock,
    };
    return deepFreeze(context);
  }

  /**
   * Merges one decision. Checks it whole before changing anything, so a bad decision leaves the
   * merge untouched.
   *
   * @throws PolicyError when the decision is not a {@link PolicyDecision} or its state not JSON.
   */
  apply(policy: Policy, hook: PolicyHookName, raw: unknown, subject: DecisionSubject = {}): void {
    if (raw === undefined || raw === null) return;
    const parsed = PolicyDecisionSchema.safeParse(raw);
    if (!parsed.success) {
      const detail = parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new PolicyError(
        policy.name,
        hook,
        `Policy "${policy.name}" returned an invalid decision from ${hook}: ${detail}`,
      );
    }
    const decision = raw as PolicyDecision;
    if (decision.state !== undefined) {
      const bad = nonJsonPath(decision.state);
      if (bad) {
        throw new PolicyError(
          policy.name,
          hook,
          `Policy "${policy.name}" returned a state that is not JSON (at ${bad}) from ${hook}`,
        );
      }
    }
    const name = policy.name;
    const ignored: string[] = [];
    const allowed = (kind: string) => {
      const kinds =
        hook === 'onRunStart' ? RUN_START_KINDS : hook === 'onInDoubt' ? IN_DOUBT_KINDS : undefined;
      if (kinds === undefined || kinds.has(kind)) return true;
      ignored.push(`${kind} ignored in ${hook}`);
      return false;
    };

    if (decision.caps && allowed('caps')) {
      for (const [key, value] of Object.entries(decision.caps) as [keyof Caps, number][]) {
        // An absent cap (maxTotalTokens) is no limit: any value tightens it.
        const current = this.caps[key] ?? Number.POSITIVE_INFINITY;
        if (value < current) this.caps[key] = value;
        else if (value > current) ignored.push(`caps.${key} ${value} is not below ${current}`);
      }
    }
    if (decision.enableTools && allowed('enableTools')) {
      for (const tool of decision.enableTools) {
        const owners = this.owners.get(tool);
        if (!owners) continue;
        if (!owners.includes(name)) {
          ignored.push(`enableTools ${tool}: disabled by ${owners.join(', ')}, not by ${name}`);
          continue;
        }
        const rest = owners.filter((owner) => owner !== name);
        if (rest.length === 0) this.owners.delete(tool);
        else {
          this.owners.set(tool, rest);
          ignored.push(`enableTools ${tool}: still disabled by ${rest.join(', ')}`);
        }
      }
    }
    if (decision.disableTools && allowed('disableTools')) {
      for (const tool of decision.disableTools) {
        const owners = this.owners.get(tool) ?? [];
        if (!owners.includes(name)) this.owners.set(tool, [...owners, name]);
      }
    }
    if (decision.restrictToTool !== undefined && allowed('restrictToTool')) {
      const tool = decision.restrictToTool;
      this.restrictTo = this.restrictTo === null ? [tool] : this.restrictTo.filter((id) => id === tool);
    }
    if (decision.backoffMs !== undefined && allowed('backoffMs')) {
      this.backoffMs = Math.max(this.backoffMs, decision.backoffMs);
    }
    if (decision.awaitClarification !== undefined && allowed('awaitClarification')) {
      if (this.awaitClarification) ignored.push('awaitClarification: an earlier policy already asks');
      else {
        this.awaitClarification = clarificationFromHint(decision.awaitClarification, subject.hint, {
          policy: name,
          turnId: this.turnId,
        });
      }
    }
    if (decision.confirm) {
      if (hook !== 'onToolBatch') ignored.push(`confirm ignored in ${hook} (onToolBatch only)`);
      else {
        const calls = decision.confirm.calls ?? ['*'];
        this.confirm = this.confirm
          ? { ...this.confirm, calls: [...new Set([...this.confirm.calls, ...calls])] }
          : {
              calls: [...calls],
              policy: name,
              ...(decision.confirm.prompt === undefined ? {} : { prompt: decision.confirm.prompt }),
              ...(decision.confirm.details === undefined
                ? {}
                : { details: structuredClone(decision.confirm.details) }),
            };
      }
    }
    if (decision.refuse) {
      if (hook !== 'onToolBatch') ignored.push(`refuse ignored in ${hook} (onToolBatch only)`);
      else {
        const { calls, message, reason } = decision.refuse;
        this.refuse.push({
          calls: calls ? [...calls] : ['*'],
          message,
          reason: reason ?? 'no_progress',
          policy: name,
        });
      }
    }
    if (decision.hint) {
      if ((hook !== 'onToolResult' && hook !== 'onRetryHint') || subject.toolCallId === undefined)
        ignored.push(`hint ignored in ${hook} (onToolResult and onRetryHint only)`);
      else {
        this.resultHints.push({
          toolCallId: subject.toolCallId,
          tool: subject.tool ?? '',
          reason: decision.hint.reason,
          message: decision.hint.message,
          policy: name,
        });
      }
    }
    if (decision.inDoubt) {
      if (hook !== 'onInDoubt') ignored.push(`inDoubt ignored in ${hook} (onInDoubt only)`);
      else this.chooseInDoubt(name, decision.inDoubt, ignored);
    }
    if (decision.finalize && allowed('finalize')) this.finalize ??= { ...decision.finalize };
    if (decision.fail && allowed('fail')) {
      const reason = `${decision.fail.reason} (policy ${name})`;
      this.fail ??= { reason };
      this.error ??= new PolicyError(name, hook, `Policy "${name}" failed the run in ${hook}: ${reason}`);
    }
    if (decision.labels && allowed('labels')) {
      Object.assign(this.labels, decision.labels);
      Object.assign(this.labelChanges, decision.labels);
    }
    if (decision.state !== undefined) {
      // A run's memory starts with its first consultation; nothing carries it from the start.
      if (hook === 'onRunStart') ignored.push('state ignored in onRunStart');
      else this.memory[name] = structuredClone(decision.state);
    }

    const kinds = EFFECT_KINDS.filter((kind) => decision[kind] !== undefined);
    const note = [decision.note, ...ignored].filter((part) => part !== undefined && part !== '').join('; ');
    if (kinds.length === 0 && note === '') return;
    const { state: _memory, ...shown } = decision;
    this.record(name, hook, kinds, structuredClone(shown) as Record<string, unknown>, subject, note);
    if (decision.fingerprint !== undefined) this.decisions.at(-1)!.fingerprint = decision.fingerprint;
  }

  /**
   * `onInDoubt`: each choice applies to the calls it names (toolCallIds or tool ids; none named:
   * all); a call keeps the most careful choice made about it. A name that matches no call in
   * doubt is noted and changes nothing (the call it meant is asked about).
   */
  private chooseInDoubt(
    policy: string,
    choices: NonNullable<PolicyDecision['inDoubt']>,
    ignored: string[],
  ): void {
    for (const { action, calls } of Array.isArray(choices) ? choices : [choices]) {
      const named = calls === undefined ? undefined : new Set(calls);
      for (const call of this.inDoubtCalls) {
        if (named && !named.has(call.toolCallId) && !named.has(call.name)) continue;
        const current = this.inDoubt.get(call.toolCallId);
        if (current === undefined || IN_DOUBT_CARE[action] > IN_DOUBT_CARE[current.action]) {
          this.inDoubt.set(call.toolCallId, { action, policy });
        }
      }
      const unmatched = (calls ?? []).filter(
        (id) => !this.inDoubtCalls.some((call) => call.toolCallId === id || call.name === id),
      );
      if (unmatched.length > 0) {
        const shown = unmatched.slice(0, 5).map((id) => JSON.stringify(id.slice(0, 100)));
        ignored.push(`inDoubt ${action}: no call in doubt is ${shown.join(', ')}`);
      }
    }
  }

  /**
   * A policy threw, timed out or returned garbage. A `failOpen` policy's error is recorded and
   * ignored; any other fails the consultation closed (docs/policies.md).
   */
  policyError(policy: Policy, hook: PolicyHookName, err: unknown, subject: DecisionSubject = {}): void {
    const error = err instanceof PolicyError ? err : PolicyError.thrown(policy.name, hook, err);
    if (policy.failOpen) {
      this.record(
        policy.name,
        hook,
        [],
        { error: error.message },
        subject,
        `failOpen, ignored: ${error.message}`,
      );
      return;
    }
    this.fail ??= { reason: error.message };
    this.error ??= error;
    this.record(policy.name, hook, ['fail'], { fail: { reason: error.message } }, subject, error.message);
  }

  /**
   * `onToolBatch`: a `confirm` naming calls that are not in the batch (neither a toolCallId nor a
   * tool id of its calls) is the policy's error, and fails closed (issue 35 item 5): the whole
   * batch waits for approval, and a decision record says which names matched nothing.
   */
  holdUnmatchedConfirm(batch: readonly { toolCallId: string; name: string }[]): void {
    const confirm = this.confirm;
    if (!confirm || confirm.calls.includes('*')) return;
    const known = new Set<string>();
    for (const call of batch) known.add(call.toolCallId).add(call.name);
    const unmatched = confirm.calls.filter((name) => !known.has(name));
    if (unmatched.length === 0) return;
    const names = unmatched.slice(0, 5).map((name) => JSON.stringify(name.slice(0, 100)));
    const error = `policy error: confirm names ${unmatched.length === 1 ? 'a call' : 'calls'} not in the batch (${names.join(', ')}${unmatched.length > 5 ? ', …' : ''}); the whole batch waits for approval`;
    this.confirm = { ...confirm, calls: ['*'], error };
    this.record(
      confirm.policy,
      'onToolBatch',
      ['confirm'],
      { confirm: { calls: ['*'] }, unmatched },
      {},
      error,
    );
  }

  /** `onToolBatch`: clarification and backoff concern the turn after the batch; keep them for its review. */
  deferTurnEffects(): void {
    if (this.fail || this.finalize) {
      this.carry = undefined;
    } else if (this.backoffMs > 0 || this.awaitClarification) {
      const until = this.backoffMs > 0 ? this.now + this.backoffMs : undefined;
      this.carry = {
        backoffUntil: Math.max(until ?? 0, this.carry?.backoffUntil ?? 0) || undefined,
        awaitClarification: this.carry?.awaitClarification ?? this.awaitClarification,
      };
    }
    this.backoffMs = 0;
    this.awaitClarification = undefined;
  }

  /** The review of a batch starts with what `onToolBatch` decided for the next turn. */
  restoreCarried(): void {
    if (!this.carry) return;
    if (this.carry.backoffUntil !== undefined) {
      this.backoffMs = Math.max(this.backoffMs, this.carry.backoffUntil - this.now);
    }
    if (this.carry.awaitClarification) {
      this.awaitClarification = { missingFields: [], ...this.carry.awaitClarification };
    }
    this.carry = undefined;
  }

  /** The merged outcome, in the form the run machine applies (only what changed is set). */
  effects(): PolicyEffects {
    const effects: PolicyEffects = { decisions: this.decisions };
    if ((Object.keys(this.caps) as (keyof Caps)[]).some((key) => this.caps[key] !== this.run.caps[key])) {
      effects.caps = { ...this.caps };
    }
    const disabledTools = this.disabledTools();
    if (!sameJson(disabledTools, this.run.disabledTools)) effects.disabledTools = disabledTools;
    if (this.restrictTo && !sameJson(this.restrictTo, this.run.restrictTo))
      effects.restrictTo = [...this.restrictTo];
    if (this.confirm) effects.confirm = this.confirm;
    if (this.refuse.length > 0) effects.refuse = this.refuse;
    if (this.resultHints.length > 0) effects.resultHints = this.resultHints;
    if (this.inDoubt.size > 0) effects.inDoubt = Object.fromEntries(this.inDoubt);
    if (this.fail) effects.fail = this.fail;
    else if (this.finalize) effects.finalize = this.finalize;
    else if (this.awaitClarification) effects.awaitClarification = this.awaitClarification;
    else if (this.backoffMs > 0) effects.backoffMs = this.backoffMs;
    if (Object.keys(this.labelChanges).length > 0) effects.labels = { ...this.labelChanges };
    const state = this.engineState();
    if (!sameJson(state, this.run.policyState)) effects.policyState = state;
    return effects;
  }

  private disabledTools(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [tool, owners] of this.owners) out[tool] = this.labelOf(tool, owners);
    return out;
  }

  /** The run's label for a disabled tool: kept while its disabler still holds it (`app` stays `app`). */
  private labelOf(tool: string, owners: string[]): string {
    const who = this.run.disabledTools[tool];
    return who !== undefined && owners.includes(who) ? who : owners[0]!;
  }

  private engineState(): PolicyEngineState {
    const disabledBy: Record<string, string[]> = {};
    for (const [tool, owners] of this.owners) {
      const policies = owners.filter((owner) => this.policyNames.has(owner));
      if (policies.length > 0) disabledBy[tool] = policies;
    }
    const state: PolicyEngineState = { version: 1, memory: this.memory, disabledBy };
    if (this.carry) state.carry = this.carry;
    return structuredClone(state);
  }

  private toolState(id: string): PolicyToolState {
    const info = this.directory.get(id);
    const owners = this.owners.get(id);
    const stats = this.run.toolStats[id];
    const state: PolicyToolState = {
      id,
      known: info !== undefined,
      tags: [...(info?.tags ?? [])],
      enabled: owners === undefined,
      calls: stats?.calls ?? 0,
      failures: stats?.failures ?? 0,
      consecutiveFailures: stats?.consecutiveFailures ?? 0,
    };
    if (owners) state.disabledBy = this.labelOf(id, owners);
    if (stats?.lastHint) state.lastHint = structuredClone(stats.lastHint);
    return state;
  }

  private record(
    policy: string,
    hook: PolicyHookName,
    kinds: string[],
    decision: Record<string, unknown>,
    subject: DecisionSubject,
    note: string,
  ): void {
    const record: PolicyDecisionRecord = {
      policy,
      hook: hook as PolicyDecisionRecord['hook'],
      kinds,
      decision,
    };
    if (subject.toolCallId !== undefined) record.toolCallId = subject.toolCallId;
    if (subject.tool !== undefined) record.tool = subject.tool;
    if (note !== '') record.note = note;
    this.decisions.push(record);
  }
}

function minCaps(caps: Caps, ceilings: Caps): Caps {
  const out = { ...caps };
  for (const key of Object.keys(out) as (keyof Caps)[]) {
    const ceiling = ceilings[key];
    if (typeof ceiling === 'number' && ceiling < (out[key] ?? Number.POSITIVE_INFINITY)) out[key] = ceiling;
  }
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
