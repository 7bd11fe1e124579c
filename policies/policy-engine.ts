import type { InDoubtCall, RunContext } from '../machines/run-context.ts';
import type { Message } from '../run/message.ts';
import { NO_EFFECTS, type PolicyEffects } from '../run/policy-effects.ts';
import type { Tool } from '../tools/define-tool.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { type ToolResultJSON, toolResultFromJSON } from '../tools/tool-result.ts';
import {
  anyRepeatsEarlier,
  earlierCalls,
  type findCall,
  findCalls,
  type ProposedCall,
} from './call-history.ts';
import {
  isPolicy,
  type Policy,
  PolicyDefinitionError,
  type PolicyHookName,
  type PolicyHookResult,
} from './define-policy.ts';
import {
  Consultation,
  type DecisionSubject,
  type PolicyRunContext,
  type ToolDirectory,
  type ToolInfo,
} from './policy-consultation.ts';
import { PolicyError, PolicyTimeoutError } from './policy-error.ts';
import { deepFreeze, frozenCopy, type JsonValue } from './policy-json.ts';
import type { BatchCall, PolicyRunner, RunStartEffects, RunStartInput } from './policy-runner.ts';
import { readEngineState } from './policy-state.ts';

/** The default limit for one async hook call, in ms (docs/policies.md "time limit"). */
export const DEFAULT_POLICY_TIMEOUT_MS = 1_000;

/** What {@link createPolicyEngine} takes. */
export interface PolicyEngineOptions {
  /** In registration order: the runtime's own, then each plugin's. Names must be unique. */
  policies: readonly Policy[];
  /** The runtime's tools (or catalog), so policies see tags and `ctx.tools`. */
  tools?: ToolCatalog | Iterable<Tool | ToolInfo>;
  /** Limit for each async hook call, in ms, for policies that set none. Default 1 000. */
  timeoutMs?: number;
  /** The clock policies read through `ctx.now()`. Default `Date.now`. */
  now?: () => number;
}

/**
 * The policy engine: a {@link PolicyRunner} with every hook, plus the policies it runs. It reads
 * only the parts of the run context policies see ({@link PolicyRunContext}).
 */
export interface PolicyEngine extends Required<PolicyRunner> {
  readonly policies: readonly Policy[];
  /**
   * Whether a policy wants the run's next batch (`onToolBatch`, its gate `consultBatchWhen` open):
   * synchronous, read from the run's policy state, so a run skips the step when none does.
   */
  consultsBatch(context: Pick<PolicyRunContext, 'policyState'>): boolean;
  /**
   * Whether a policy wants to review the batch just folded (`onToolResult` for its results; a
   * `repeatKey` policy only when a call repeats an earlier one; `onRetryHint` for its hints).
   */
  reviewsResults(context: RunContext): boolean;
  onToolBatch(context: PolicyRunContext, calls: BatchCall[]): Promise<PolicyEffects>;
  onResults(
    context: PolicyRunContext,
    results: ToolResultJSON[],
    hints: PolicyRetryHint[],
  ): Promise<PolicyEffects>;
  /** Whether a policy has `onInDoubt`: when none has, calls in doubt wait for a person unasked. */
  consultsInDoubt(): boolean;
  onInDoubt(context: PolicyRunContext, calls: readonly InDoubtCall[]): Promise<PolicyEffects>;
}

/**
 * Builds the policy engine (docs/policies.md), the {@link PolicyRunner} the run machine calls.
 *
 * | the run…                          | engine call   | policy hooks, in order                                       |
 * |-----------------------------------|---------------|--------------------------------------------------------------|
 * | starts (before its first turn)    | `onRunStart`  | `onRunStart` of each policy (synchronous)                     |
 * | is about to admit a batch         | `onToolBatch` | `onToolBatch` of each policy                                  |
 * | reviews a batch's results         | `onResults`   | per result, in call order: `onToolResult` of each policy, then `onRetryHint` of each policy for the result's hint |
 * | has calls in doubt (a restore)    | `onInDoubt`   | `onInDoubt` of each policy, with every call of the batch in doubt |
 *
 * Policies run in registration order; each sees, through its context, the state after the ones
 * before it (see {@link Consultation} for the merge rules). A policy that throws, does not settle
 * within its time limit, or returns something that is not a decision fails the run closed
 * (`fail`, naming the policy) unless it is `failOpen`, in which case the error is recorded and
 * ignored. An async hook that ignores its time limit keeps running in the background; a
 * synchronous hook cannot be interrupted.
 *
 * `onToolBatch` acts on the batch itself through `caps`, `disableTools`, `finalize` and `fail`
 * (the batch is then not run); its `restrictToTool`, `backoffMs` and `awaitClarification` concern
 * the turn after the batch and take effect when the batch's results are reviewed.
 *
 * Stateless across runs: everything a run needs (each policy's memory, who disabled what, the
 * deferred effects) is JSON in the run context's `policyState`, handed in and handed back in
 * `PolicyEffects.policyState`, so a restored run keeps its disabled tools, caps and breakers.
 *
 * @throws PolicyDefinitionError when an entry is not a `definePolicy` value or two share a name.
 */
export function createPolicyEngine(options: PolicyEngineOptions): PolicyEngine {
  const parts = engineParts(options);
  return {
    policies: parts.policies,
    consultsBatch: (context) => batchPolicies(parts, context.policyState).length > 0,
    reviewsResults: (context) => reviewsResults(parts, context),
    onRunStart: (input) => runStart(parts, input),
    onToolBatch: (context, calls) => toolBatch(parts, context, calls),
    consultsInDoubt: () => having(parts, 'onInDoubt').length > 0,
    onInDoubt: (context, calls) => inDoubt(parts, context, calls),
    onResults: (context, results, hints) => reviewBatch(parts, context, results, hints),
  };
}

/** What every step of the engine reads: the policies (checked), their names, tools, limits, clock. */
interface EngineParts {
  readonly policies: readonly Policy[];
  readonly names: ReadonlySet<string>;
  readonly directory: ToolDirectory;
  readonly defaultTimeoutMs: number;
  readonly now: () => number;
  /** The policies with each hook, in registration order, made on first use. */
  readonly byHook: Map<PolicyHookName, Policy[]>;
}

/** Step 1: the options checked. @throws PolicyDefinitionError (see {@link createPolicyEngine}). */
function engineParts(options: PolicyEngineOptions): EngineParts {
  const policies = [...options.policies];
  const names = new Set<string>();
  for (const [index, policy] of policies.entries()) {
    if (!isPolicy(policy)) {
      throw new PolicyDefinitionError(`policies[${index}] is not a policy; build it with definePolicy()`);
    }
    if (names.has(policy.name)) {
      throw new PolicyDefinitionError(
        `Two policies are named "${policy.name}"; give one a different name (built-ins take a \`name\` option)`,
      );
    }
    names.add(policy.name);
  }
  return {
    policies,
    names,
    directory: toolDirectory(options.tools),
    defaultTimeoutMs: options.timeoutMs ?? DEFAULT_POLICY_TIMEOUT_MS,
    now: options.now ?? Date.now,
    byHook: new Map(),
  };
}

/** The policies that have `hook`, in registration order. */
function having(parts: EngineParts, hook: PolicyHookName): Policy[] {
  let found = parts.byHook.get(hook);
  if (!found) {
    found = parts.policies.filter((policy) => typeof policy[hook] === 'function');
    parts.byHook.set(hook, found);
  }
  return found;
}

/** The `onToolBatch` policies whose gate (`consultBatchWhen`) lets them see this run's next batch. */
function batchPolicies(parts: EngineParts, policyState: unknown): Policy[] {
  return having(parts, 'onToolBatch').filter((policy) => batchGateOpen(policy, policyState));
}

function consultationOf(
  parts: EngineParts,
  run: ConstructorParameters<typeof Consultation>[0],
  prior: readonly PolicyRetryHint[],
): Consultation {
  return new Consultation(run, parts.names, parts.directory, parts.now, prior);
}

/** One async hook of one policy, within its time limit; its decision (or its error) applied to `c`. */
async function ask(
  parts: EngineParts,
  c: Consultation,
  policy: Policy,
  hook: Exclude<PolicyHookName, 'onRunStart'>,
  call: () => PolicyHookResult,
  subject: DecisionSubject = {},
): Promise<void> {
  try {
    const decision = await withTimeout(call, policy.timeoutMs ?? parts.defaultTimeoutMs, policy.name, hook);
    c.apply(policy, hook, decision, subject);
  } catch (err) {
    c.policyError(policy, hook, err, subject);
  }
}

/** `reviewsResults`: whether a policy wants the batch just folded (see {@link PolicyEngine}). */
function reviewsResults(parts: EngineParts, context: RunContext): boolean {
  const { newResults, newHints } = context.batch;
  if (newHints.length > 0 && having(parts, 'onRetryHint').length > 0) return true;
  if (newResults.length === 0) return false;
  const messages = messagesOf(context);
  for (const policy of having(parts, 'onToolResult')) {
    if (!policy.repeatKey) return true;
    const ids = newResults.map((result) => result.toolCallId);
    if (anyRepeatsEarlier(messages, ids, repeatKeyOf(policy))) return true;
  }
  return false;
}

/** `onRunStart`: each policy's synchronous `onRunStart`. @throws PolicyError (fail closed). */
function runStart(parts: EngineParts, input: RunStartInput): RunStartEffects {
  const consulted = having(parts, 'onRunStart');
  // What a consultation of no policy gives, without building one (every run starts here).
  if (consulted.length === 0) {
    return {
      decisions: [],
      caps: input.caps,
      disabledTools: input.disabledTools,
      labels: { ...input.labels },
    };
  }
  const c = consultationOf(parts, runStartContext(input), []);
  for (const policy of consulted) {
    try {
      const decision = policy.onRunStart!.call(policy, c.contextFor(policy));
      if (isPromiseLike(decision)) {
        throw new PolicyError(
          policy.name,
          'onRunStart',
          `Policy "${policy.name}": onRunStart must be synchronous`,
        );
      }
      c.apply(policy, 'onRunStart', decision);
    } catch (err) {
      c.policyError(policy, 'onRunStart', err);
    }
    if (c.error) throw c.error;
  }
  const effects = c.effects();
  return {
    decisions: effects.decisions,
    caps: effects.caps ?? input.caps,
    disabledTools: effects.disabledTools ?? input.disabledTools,
    labels: { ...input.labels, ...effects.labels },
  };
}

/** What `onRunStart` policies see of a run that has not taken a turn. */
function runStartContext(input: RunStartInput): ConstructorParameters<typeof Consultation>[0] {
  return {
    runId: input.runId,
    sessionId: input.sessionId,
    agent: input.agent,
    labels: input.labels,
    turn: 0,
    startedAt: input.startedAt,
    ceilings: input.caps,
    caps: input.caps,
    toolCalls: 0,
    consecutiveFailures: 0,
    toolStats: {},
    disabledTools: input.disabledTools,
    restrictTo: null,
    policyState: null,
  };
}

/** `onToolBatch`: the gated policies' `onToolBatch`, in order, until one fails the run. */
async function toolBatch(
  parts: EngineParts,
  context: PolicyRunContext,
  calls: BatchCall[],
): Promise<PolicyEffects> {
  const consulted = batchPolicies(parts, context.policyState);
  if (consulted.length === 0) return NO_EFFECTS;
  const c = consultationOf(parts, context, context.hints);
  const batch = frozenCopy(calls);
  for (const policy of consulted) {
    await ask(parts, c, policy, 'onToolBatch', () =>
      policy.onToolBatch!.call(policy, batch, c.contextFor(policy)),
    );
    if (c.fail) break;
  }
  c.holdUnmatchedConfirm(batch);
  c.deferTurnEffects();
  return c.effects();
}

/** `onInDoubt`: every `onInDoubt` policy with the batch's calls in doubt. */
async function inDoubt(
  parts: EngineParts,
  context: PolicyRunContext,
  calls: readonly InDoubtCall[],
): Promise<PolicyEffects> {
  const consulted = having(parts, 'onInDoubt');
  if (consulted.length === 0 || calls.length === 0) return NO_EFFECTS;
  const c = consultationOf(parts, context, context.hints);
  c.inDoubtCalls = calls;
  const frozen = frozenCopy(calls);
  for (const policy of consulted) {
    await ask(parts, c, policy, 'onInDoubt', () =>
      policy.onInDoubt!.call(policy, frozen, c.contextFor(policy)),
    );
    if (c.fail) break;
  }
  return c.effects();
}

/**
 * `onResults`: per result, in call order, `onToolResult` of each policy, then `onRetryHint` of
 * each for the result's hints; then the hints no result carried. Stops once a policy fails the run.
 */
async function reviewBatch(
  parts: EngineParts,
  context: PolicyRunContext,
  results: ToolResultJSON[],
  hints: PolicyRetryHint[],
): Promise<PolicyEffects> {
  const carried = readEngineState(context.policyState).carry !== undefined;
  if (results.length === 0 && hints.length === 0 && !carried) return NO_EFFECTS;
  const review = new BatchReview(parts, context, results, hints);
  for (const result of results) {
    await review.result(result);
    if (review.c.fail) return review.c.effects();
  }
  await review.rest();
  return review.c.effects();
}

/** One review of a batch's results and hints (`reviewBatch`): the consultation and what it has seen. */
class BatchReview {
  readonly c: Consultation;
  private readonly onResult: Policy[];
  private readonly onHint: Policy[];
  private readonly unseen: Set<PolicyRetryHint>;
  /** By call id, once a review: looked up per result they cost O(calls²) for a large batch. */
  private readonly hintsOf = new Map<string, PolicyRetryHint[]>();
  private readonly calls: ReturnType<typeof findCalls> | undefined;

  constructor(
    private readonly parts: EngineParts,
    private readonly context: PolicyRunContext,
    results: readonly ToolResultJSON[],
    hints: PolicyRetryHint[],
  ) {
    this.c = consultationOf(parts, context, priorHints(context.hints, hints));
    this.c.restoreCarried();
    this.onResult = having(parts, 'onToolResult');
    this.onHint = having(parts, 'onRetryHint');
    this.unseen = new Set(hints);
    for (const hint of hints) {
      const own = this.hintsOf.get(hint.toolCallId);
      if (own) own.push(hint);
      else this.hintsOf.set(hint.toolCallId, [hint]);
    }
    // The calls the results answer, from the transcript, found once (only `onToolResult` needs them).
    this.calls =
      this.onResult.length > 0
        ? findCalls(
            messagesOf(context),
            results.map((result) => result.toolCallId),
          )
        : undefined;
  }

  /** One result: each `onToolResult` policy (a `repeatKey` one only for a repeated call), then its hints. */
  async result(result: ToolResultJSON): Promise<void> {
    const { c, parts } = this;
    const own = this.hintsOf.get(result.toolCallId) ?? [];
    for (const hint of own) c.addHint(hint);
    const subject = { toolCallId: result.toolCallId, tool: result.name, hint: own.at(-1) };
    const call = this.calls?.get(result.toolCallId);
    for (const policy of this.onResult) {
      const proposed = call && proposedFor(policy, messagesOf(this.context), call);
      // A policy for repeated calls only (`repeatKey`) is not asked about a first call.
      if (policy.repeatKey && !proposed?.earlier?.length) continue;
      // A fresh copy per policy: a ToolResult holds a ToolError instance, which structuredClone would not keep.
      const copy = deepFreeze(toolResultFromJSON(structuredClone(result)));
      await ask(
        parts,
        c,
        policy,
        'onToolResult',
        () => policy.onToolResult!.call(policy, copy, c.contextFor(policy), proposed),
        subject,
      );
      if (c.fail) return;
    }
    for (const hint of own) {
      await this.hint(hint);
      if (c.fail) return;
    }
  }

  /** The hints no result carried, after the results. */
  async rest(): Promise<void> {
    for (const hint of [...this.unseen]) {
      this.c.addHint(hint);
      await this.hint(hint);
      if (this.c.fail) return;
    }
  }

  /** One hint: each `onRetryHint` policy. */
  private async hint(hint: PolicyRetryHint): Promise<void> {
    const { c, parts } = this;
    this.unseen.delete(hint);
    const frozen = frozenCopy(hint);
    for (const policy of this.onHint) {
      await ask(
        parts,
        c,
        policy,
        'onRetryHint',
        () => policy.onRetryHint!.call(policy, frozen, c.contextFor(policy)),
        {
          toolCallId: hint.toolCallId,
          tool: hint.tool,
          hint,
        },
      );
      if (c.fail) return;
    }
  }
}

/** A policy's `consultBatchWhen` on its memory in `policyState`, read without copying; a throw opens it. */
function batchGateOpen(policy: Policy, policyState: unknown): boolean {
  if (policy.consultBatchWhen === undefined) return true;
  const memory = (policyState as { memory?: Record<string, JsonValue> } | null | undefined)?.memory;
  try {
    return policy.consultBatchWhen(memory?.[policy.name]) !== false;
  } catch {
    return true;
  }
}

/** The run's transcript (the policy harness's runs have none). */
function messagesOf(context: PolicyRunContext): readonly Message[] {
  return (context as { messages?: readonly Message[] }).messages ?? [];
}

/**
 * The call a result answers, as the planner proposed it (from the transcript: the batch's pending
 * calls are folded away by the time results are reviewed), frozen; with its earlier same-key calls
 * for a policy with a `repeatKey`.
 */
function proposedFor(
  policy: Policy,
  messages: readonly Message[],
  call: NonNullable<ReturnType<typeof findCall>>,
): ProposedCall {
  const proposed: ProposedCall = { name: call.toolName, input: structuredClone(call.input) };
  if (policy.repeatKey) proposed.earlier = structuredClone(earlierCalls(messages, call, repeatKeyOf(policy)));
  return deepFreeze(proposed);
}

/** The policy's `repeatKey`, bound (one function per policy, so transcript keys are cached per policy). */
const boundKeys = new WeakMap<Policy, (tool: string, input: unknown) => string>();
function repeatKeyOf(policy: Policy): (tool: string, input: unknown) => string {
  let key = boundKeys.get(policy);
  if (!key) {
    key = (tool, input) => policy.repeatKey!.call(policy, tool, input);
    boundKeys.set(policy, key);
  }
  return key;
}

/** The run's hints before this batch: `context.hints` ends with the batch's own (`newHints`). */
function priorHints(all: readonly PolicyRetryHint[], fresh: readonly PolicyRetryHint[]): PolicyRetryHint[] {
  const head = all.slice(0, Math.max(0, all.length - fresh.length));
  const tail = all.slice(head.length);
  const isTail =
    tail.length === fresh.length && tail.every((hint, i) => hint.toolCallId === fresh[i]?.toolCallId);
  return isTail
    ? head
    : all.filter((hint) => !fresh.some((f) => f.toolCallId === hint.toolCallId && f.at === hint.at));
}

async function withTimeout(
  call: () => PolicyHookResult,
  timeoutMs: number,
  policy: string,
  hook: PolicyHookName,
): Promise<unknown> {
  const out = call();
  if (!isPromiseLike(out)) return out;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      out,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PolicyTimeoutError(policy, hook, timeoutMs)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

function toolDirectory(tools: PolicyEngineOptions['tools']): ToolDirectory {
  if (tools instanceof ToolCatalog) {
    return {
      get: (id) => {
        const tool = tools.get(id);
        return tool ? { id: tool.id, tags: tool.tags ?? [] } : undefined;
      },
      ids: () => tools.ids,
    };
  }
  const byId = new Map<string, ToolInfo>();
  for (const tool of tools ?? []) byId.set(tool.id, { id: tool.id, tags: [...(tool.tags ?? [])] });
  return { get: (id) => byId.get(id), ids: () => [...byId.keys()] };
}
