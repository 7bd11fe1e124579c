import { type PendingCall, type RunContext, toolCallMeta } from '../../machines/run-context.ts';
import type { RunPort, ValidateBatchInput, ValidateBatchOutput } from '../../machines/run-ports.ts';
import { deadlineAt } from '../../machines/run-updates.ts';
import type { PolicyEffects } from '../../run/policy-effects.ts';
import type { PolicyDecisionRecord } from '../../run/run-events.ts';
import { type PreparedCall, prepareToolCall } from '../../tools/call-tool.ts';
import { parseArguments } from '../../tools/parse-arguments.ts';
import { type PolicyRetryHint, toPolicyRetryHint } from '../../tools/retry-hint.ts';
import { ToolError } from '../../tools/tool-error.ts';
import { type ToolResult, type ToolResultJSON, toolResultToJSON } from '../../tools/tool-result.ts';
import { approvalFactsOf, permissionDeniedHint } from './approval-facts.ts';
import { rememberedApprovalFor, rememberedDecision, withRememberable } from './remembered-approvals.ts';
import type { RunDeps } from './run-deps.ts';
import { OUT_OF_BUDGET_EFFECTS, withinBudget } from './within-budget.ts';

/**
 * The `validateBatch` port (docs/architecture.md `validating`, when the runtime has policies or
 * the batch has more than {@link SYNC_VALIDATION_MAX_CALLS} calls): `onToolBatch` policies see the
 * whole batch first (they may disable tools, finalize, fail), then {@link validateCalls} checks
 * each call against the tool boundary, in slices for a large batch ({@link validateCallsInSlices}).
 */
export function createValidateBatchPort(deps: RunDeps): RunPort<ValidateBatchInput, ValidateBatchOutput> {
  return async ({ input }) => {
    const { context } = input;
    // A hook that never settles holds the run no longer than its time budget (issue 24 item 6).
    const effects = await withinBudget(
      deps.policies.onToolBatch(
        context,
        context.batch.pending.map(({ toolCallId, name, input: callInput, attempt }) => ({
          toolCallId,
          name,
          input: callInput,
          attempt,
        })),
      ),
      deadlineAt(context),
      undefined,
      () => OUT_OF_BUDGET_EFFECTS,
    );
    const large = context.batch.pending.length > SYNC_VALIDATION_MAX_CALLS;
    const output = large
      ? await validateCallsInSlices(deps, context, effects)
      : validateCalls(deps, context, effects);
    const answer = markRunAhead(deps, await confirmWhereAsked(deps, context, output, effects));
    // A large batch's output is answered after a macrotask: the run's next step (the batch
    // admitted and its calls scheduled, O(calls)) starts a stretch of its own (issue 36 item 5).
    if (large) await nextMacrotask();
    return answer;
  };
}

/**
 * Marks the admitted calls that run while others of the batch wait for approval (`runAhead`, docs/policies.md
 * §Mixed batches): when some call waits (`confirm`), each admitted call whose tool's
 * `approvals.runUnapproved`, else the runtime's, is `parallel`. External calls (the app runs
 * them) always wait with the approval. The batch as it is when no call waits or none runs ahead.
 */
function markRunAhead(deps: RunDeps, output: ValidateBatchOutput): ValidateBatchOutput {
  const { pending } = output;
  if (!pending.some((call) => call.status === 'confirm')) return output;
  const fallback = deps.approvals?.runUnapproved ?? 'wait';
  let marked: PendingCall[] | undefined;
  for (const [index, call] of pending.entries()) {
    if (call.status !== 'admitted' || call.external || call.runAhead) continue;
    const mode = deps.catalog.get(call.name)?.approvals?.runUnapproved ?? fallback;
    if (mode !== 'parallel') continue;
    marked ??= pending.slice();
    marked[index] = { ...call, runAhead: true };
  }
  return marked ? { ...output, pending: marked } : output;
}

/**
 * Asks each conditional `requiresConfirmation` (a function of the input and meta; AI SDK 6's
 * `needsApproval`) about its call: `false` admits the call, `true`, a throw or no answer within
 * the time budget keeps it waiting for approval. A call a policy's `confirm` names waits
 * whatever the tool says. In call order, one at a time.
 */
async function confirmWhereAsked(
  deps: RunDeps,
  context: RunContext,
  output: ValidateBatchOutput,
  effects: PolicyEffects,
): Promise<ValidateBatchOutput> {
  let pending: PendingCall[] | undefined;
  for (const [index, call] of output.pending.entries()) {
    if (call.status !== 'confirm' || policyConfirms(effects, call)) continue;
    const check = deps.catalog.get(call.name)?.requiresConfirmation;
    if (typeof check !== 'function') continue;
    let ask = true;
    try {
      ask = await withinBudget(
        check(call.preparedInput ?? {}, metaFor(context, call)),
        deadlineAt(context),
        undefined,
        () => true,
      );
    } catch {
      ask = true;
    }
    if (ask !== false) continue;
    pending ??= output.pending.slice();
    pending[index] = { ...call, status: 'admitted' };
  }
  return pending ? { ...output, pending } : output;
}

/** Whether a policy's `confirm` (from `onToolBatch`) names this call: its toolCallId, its tool, or `*`. */
function policyConfirms(effects: PolicyEffects, call: Pick<PendingCall, 'toolCallId' | 'name'>): boolean {
  const calls = effects.confirm?.calls;
  return (
    calls !== undefined &&
    (calls.includes('*') || calls.includes(call.toolCallId) || calls.includes(call.name))
  );
}

/**
 * Checks each proposed call of the batch, in order:
 *
 * 1. the tool must be known, enabled — by the app, the policies, the retry cap — and offered
 *    this turn when a policy restricted it (`tool_unavailable` otherwise);
 * 2. a tool past `maxRetriesPerTool` repairs in a row is refused and disabled for the run;
 * 3. the input must pass the tool's schema (`missing_fields` / `invalid_arguments`);
 * 4. a tool declaring `permissions` the run was not granted (`grants`) is refused,
 *    `permission_denied`, unless a policy's `confirm` names the call (then it waits for approval);
 * 5. a tool declared `requiresConfirmation`, or a call a policy's `confirm` names, waits for approval.
 *
 * Before all of these, a call a policy's `refuse` names is not run: its result carries the
 * policy's message and a hint of its reason (`no_progress`, docs/policies.md §No progress).
 *
 * Rejected calls get their ToolResult (with hint) here; admitted calls carry the validated input.
 * `effects` are the batch policies' (`NO_EFFECTS` with none); the returned effects carry the full
 * map of disabled tools when this check disabled one. Synchronous, so a runtime without policies
 * runs it as the machine's `validateCalls` action instead of an actor, for batches of at most
 * {@link SYNC_VALIDATION_MAX_CALLS} calls; larger ones go through the port, which checks them with
 * {@link validateCallsInSlices}.
 */
export function validateCalls(
  deps: RunDeps,
  context: RunContext,
  effects: PolicyEffects,
): ValidateBatchOutput {
  const check = new BatchCheck(deps, context, effects);
  return markRunAhead(deps, check.output(context.batch.pending.map((call) => check.call(call))));
}

/**
 * Most calls of a batch validated synchronously, in the machine's own step: a larger batch is
 * validated by the `validateBatch` port in slices (issue 36 item 5: a 4,000-call answer blocked
 * the event loop for every run in the process while its calls were checked in one go).
 */
export const SYNC_VALIDATION_MAX_CALLS = 64;

/** How long one slice of {@link validateCallsInSlices} runs before the event loop gets a turn, in ms. */
export const VALIDATION_SLICE_MS = 8;

/**
 * {@link validateCalls}, the same checks in the same order with the same output, in slices of at
 * most {@link VALIDATION_SLICE_MS} ms of checks, each slice after a macrotask when the one before
 * ran long: the event loop runs timers and I/O between them (other runs' steps, lease renewals).
 * The first slice, too, waits for a macrotask: the step that asked (the planner's answer recorded,
 * O(calls) itself) had the event loop to itself already (issue 36 item 5).
 */
export async function validateCallsInSlices(
  deps: RunDeps,
  context: RunContext,
  effects: PolicyEffects,
): Promise<ValidateBatchOutput> {
  await nextMacrotask();
  const check = new BatchCheck(deps, context, effects);
  const calls = context.batch.pending;
  const pending: PendingCall[] = new Array(calls.length);
  let sliceStartedAt = performance.now();
  for (let index = 0; index < calls.length; index++) {
    if ((index & 15) === 0 && performance.now() - sliceStartedAt >= VALIDATION_SLICE_MS) {
      await nextMacrotask();
      sliceStartedAt = performance.now();
    }
    pending[index] = check.call(calls[index]!);
  }
  return check.output(pending);
}

const nextMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One batch's check, call by call: what the calls so far disabled, their results and hints. */
class BatchCheck {
  private readonly disabled: Record<string, string>;
  private retryCapped = false;
  private readonly offered: Set<string> | undefined;
  private readonly results: (ToolResultJSON | null)[] = [];
  private readonly hints: PolicyRetryHint[] = [];
  /** `approved_by: 'remembered'` decisions of calls a remembered approval admitted. */
  private readonly decisions: PolicyDecisionRecord[] = [];

  constructor(
    private readonly deps: RunDeps,
    private readonly context: RunContext,
    private readonly effects: PolicyEffects,
  ) {
    // `effects.disabledTools` is the full map after the policies ran (a policy may have re-enabled
    // a tool it disabled); tools the app disabled stay disabled whatever it says.
    this.disabled = effects.disabledTools
      ? { ...effects.disabledTools, ...appDisabled(context.disabledTools) }
      : { ...context.disabledTools };
    this.offered = context.batch.restrictedTo ? new Set(context.batch.restrictedTo) : undefined;
  }

  /** Checks the next call of the batch (in order): the call with its status. */
  call(call: PendingCall): PendingCall {
    const { deps, context, effects, disabled, offered } = this;
    const refusal = effects.refuse === undefined ? undefined : refusalOf(effects.refuse, call);
    if (refusal) {
      const result = refusedResult(call, refusal);
      this.results.push(toolResultToJSON(result));
      this.hints.push(toPolicyRetryHint(result.retryHint!, metaFor(context, call)));
      return { ...call, status: 'rejected' };
    }
    const capped = exceedsRetryCap(context, call);
    if (capped) {
      disabled[call.name] = 'retry_cap';
      this.retryCapped = true;
    }
    const prepared = prepare(deps, call, offered ? notOffered(disabled, offered, deps) : disabled);
    if (!prepared.ok) {
      const result = prepared.result;
      if (capped && result.error) {
        result.error = new ToolError(
          `${result.error.message} (${call.name} failed ${context.caps.maxRetriesPerTool + 1} times in a row: maxRetriesPerTool reached)`,
          { recoverable: result.error.recoverable },
        );
      }
      this.results.push(toolResultToJSON(result));
      if (result.retryHint) this.hints.push(toPolicyRetryHint(result.retryHint, metaFor(context, call)));
      return { ...call, status: 'rejected' };
    }
    const confirmedByPolicy = policyConfirms(effects, call);
    const approval = withRememberable(
      approvalFactsOf(prepared.tool, prepared.input, metaFor(context, call), context.flow.grants),
      deps.approvals,
    );
    // A permission the run lacks refuses the call, unless a policy sends it for approval instead.
    if (approval?.missing && !confirmedByPolicy) {
      const hint = permissionDeniedHint(prepared.tool.id, approval.missing, prepared.input);
      const result: ToolResult = {
        name: prepared.tool.id,
        toolCallId: call.toolCallId,
        executed: false,
        error: new ToolError(hint.message, { recoverable: true }),
        retryHint: hint,
      };
      this.results.push(toolResultToJSON(result));
      this.hints.push(toPolicyRetryHint(hint, metaFor(context, call)));
      return { ...call, status: 'rejected' };
    }
    this.results.push(null);
    const asks = Boolean(prepared.tool.requiresConfirmation) || confirmedByPolicy;
    // An approval remembered earlier in the run or its thread lets the call run without asking.
    const remembered = asks
      ? rememberedApprovalFor(context.flow.approvals, prepared.tool.id, prepared.input, approval)
      : undefined;
    if (remembered) this.decisions.push(rememberedDecision(call, remembered));
    // Object.assign: members added after a spread cost ~0.5 µs each on Node 20 (run-updates.ts).
    return Object.assign({}, call, {
      // A conditional requiresConfirmation counts as `true` here (ask); the port asks it (confirmWhereAsked).
      status: asks && !remembered ? ('confirm' as const) : ('admitted' as const),
      ...(remembered === undefined
        ? {}
        : {
            remembered: {
              how: 'applied' as const,
              approvalId: remembered.id,
              scope: remembered.scope,
              ...(remembered.by === undefined ? {} : { by: remembered.by }),
            },
          }),
      preparedInput: prepared.input,
      droppedFields: prepared.droppedFields.length > 0 ? prepared.droppedFields : undefined,
      ...(prepared.tool.execute === undefined ? { external: true as const } : {}),
      ...(approval === undefined ? {} : { approval }),
    });
  }

  /** The batch's output once every call was checked, `pending` in call order. */
  output(pending: PendingCall[]): ValidateBatchOutput {
    const { effects, disabled, decisions } = this;
    const withDisabled =
      this.retryCapped || effects.disabledTools ? { ...effects, disabledTools: disabled } : effects;
    return {
      pending,
      results: this.results,
      hints: this.hints,
      effects:
        decisions.length === 0
          ? withDisabled
          : { ...withDisabled, decisions: [...withDisabled.decisions, ...decisions] },
    };
  }
}

type Refusal = NonNullable<PolicyEffects['refuse']>[number];

/** The first policy refusal (`refuse`, from `onToolBatch`) naming this call: its toolCallId, its tool, or `*`. */
function refusalOf(
  refusals: readonly Refusal[],
  call: Pick<PendingCall, 'toolCallId' | 'name'>,
): Refusal | undefined {
  return refusals.find(
    ({ calls }) => calls.includes('*') || calls.includes(call.toolCallId) || calls.includes(call.name),
  );
}

/** A call a policy refused: not run, its error the policy's message, a hint of the policy's reason. */
function refusedResult(call: PendingCall, refusal: Refusal): ToolResult {
  const parsed = parseArguments(call.input);
  const priorInput =
    parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)
      ? (parsed.value as Record<string, unknown>)
      : undefined;
  const message = `${refusal.message} (policy ${refusal.policy})`;
  return {
    name: String(call.name),
    toolCallId: call.toolCallId,
    executed: false,
    error: new ToolError(message, { recoverable: true }),
    retryHint: {
      reason: refusal.reason,
      tool: String(call.name),
      restrictToTool: false,
      missingFields: [],
      message,
      ...(priorInput === undefined ? {} : { priorInput }),
    },
  };
}

/** The tool boundary's check of one call; a throw (a bug) becomes a result, never a crashed run. */
function prepare(deps: RunDeps, call: PendingCall, disabled: Record<string, string>): PreparedCall {
  try {
    return prepareToolCall(
      deps.catalog,
      { name: call.name, toolCallId: call.toolCallId, input: call.input },
      { isEnabled: enabledUnless(disabled), limits: deps.limits, forbiddenKeys: call.forbiddenKeys },
    );
  } catch (err) {
    return {
      ok: false,
      result: {
        name: String(call.name),
        toolCallId: call.toolCallId,
        executed: false,
        error: ToolError.from(err),
      },
    };
  }
}

/** Whether a tool is enabled: not in `disabled`. Made here, not inline, so tsx names no closure per call. */
function enabledUnless(disabled: Record<string, string>): (id: string) => boolean {
  return (id) => disabled[id] === undefined;
}

/**
 * A turn restricted to some tools (a policy's `restrictToTool`) only offers those: every other
 * tool is unavailable for that batch, as if disabled, so what the planner is shown is what it can
 * call (docs/policies.md).
 */
function notOffered(
  disabled: Record<string, string>,
  offered: Set<string>,
  deps: RunDeps,
): Record<string, string> {
  const out = { ...disabled };
  for (const id of deps.catalog.ids) if (!offered.has(id) && out[id] === undefined) out[id] = 'restriction';
  return out;
}

function appDisabled(disabled: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, by] of Object.entries(disabled)) if (by === 'app') out[id] = by;
  return out;
}

/**
 * A call is past the cap when its tool already failed `maxRetriesPerTool + 1` times in a row:
 * the first attempt plus that many repairs were all spent.
 */
function exceedsRetryCap(context: RunContext, call: PendingCall): boolean {
  return (context.toolStats[call.name]?.consecutiveFailures ?? 0) > context.caps.maxRetriesPerTool;
}

export function metaFor(context: RunContext, call: Pick<PendingCall, 'toolCallId' | 'attempt'>) {
  return toolCallMeta(context, call);
}
