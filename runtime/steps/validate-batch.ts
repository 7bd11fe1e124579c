import { type PendingCall, type RunContext, toolCallMeta } from '../../machines/run-context.ts';
import type { RunPort, ValidateBatchInput, ValidateBatchOutput } from '../../machines/run-ports.ts';
import { deadlineAt } from '../../machines/run-updates.ts';
import type { PolicyEffects } from '../../run/policy-effects.ts';
import { type PreparedCall, prepareToolCall } from '../../tools/call-tool.ts';
import { type PolicyRetryHint, toPolicyRetryHint } from '../../tools/retry-hint.ts';
import { ToolError } from '../../tools/tool-error.ts';
import { type ToolResultJSON, toolResultToJSON } from '../../tools/tool-result.ts';
import type { RunDeps } from './run-deps.ts';
import { OUT_OF_BUDGET_EFFECTS, withinBudget } from './within-budget.ts';

/**
 * The `validateBatch` port (docs/architecture.md `validating`, when the runtime has policies): `onToolBatch`
 * policies see the whole batch first (they may disable tools, finalize, fail), then
 * {@link validateCalls} checks each call against the tool boundary.
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
    return confirmWhereAsked(deps, context, validateCalls(deps, context, effects), effects);
  };
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
 * 4. a tool declared `requiresConfirmation`, or a call a policy's `confirm` names, waits for approval.
 *
 * Rejected calls get their ToolResult (with hint) here; admitted calls carry the validated input.
 * `effects` are the batch policies' (`NO_EFFECTS` with none); the returned effects carry the full
 * map of disabled tools when this check disabled one. Synchronous, so a runtime without policies
 * runs it as the machine's `validateCalls` action instead of an actor.
 */
export function validateCalls(
  deps: RunDeps,
  context: RunContext,
  effects: PolicyEffects,
): ValidateBatchOutput {
  // `effects.disabledTools` is the full map after the policies ran (a policy may have re-enabled
  // a tool it disabled); tools the app disabled stay disabled whatever it says.
  const disabled: Record<string, string> = effects.disabledTools
    ? { ...effects.disabledTools, ...appDisabled(context.disabledTools) }
    : { ...context.disabledTools };
  let retryCapped = false;
  const offered = context.batch.restrictedTo ? new Set(context.batch.restrictedTo) : undefined;
  const results: (ToolResultJSON | null)[] = [];
  const hints: PolicyRetryHint[] = [];
  const pending = context.batch.pending.map((call): PendingCall => {
    const capped = exceedsRetryCap(context, call);
    if (capped) {
      disabled[call.name] = 'retry_cap';
      retryCapped = true;
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
      results.push(toolResultToJSON(result));
      if (result.retryHint) hints.push(toPolicyRetryHint(result.retryHint, metaFor(context, call)));
      return { ...call, status: 'rejected' };
    }
    results.push(null);
    // Object.assign: members added after a spread cost ~0.5 µs each on Node 20 (run-updates.ts).
    return Object.assign({}, call, {
      // A conditional requiresConfirmation counts as `true` here (ask); the port asks it (confirmWhereAsked).
      status:
        prepared.tool.requiresConfirmation || policyConfirms(effects, call)
          ? ('confirm' as const)
          : ('admitted' as const),
      preparedInput: prepared.input,
      droppedFields: prepared.droppedFields.length > 0 ? prepared.droppedFields : undefined,
      ...(prepared.tool.execute === undefined ? { external: true as const } : {}),
    });
  });
  return {
    pending,
    results,
    hints,
    effects: retryCapped || effects.disabledTools ? { ...effects, disabledTools: disabled } : effects,
  };
}

/** The tool boundary's check of one call; a throw (a bug) becomes a result, never a crashed run. */
function prepare(deps: RunDeps, call: PendingCall, disabled: Record<string, string>): PreparedCall {
  try {
    return prepareToolCall(
      deps.catalog,
      { name: call.name, toolCallId: call.toolCallId, input: call.input },
      { isEnabled: enabledUnless(disabled), limits: deps.limits },
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
