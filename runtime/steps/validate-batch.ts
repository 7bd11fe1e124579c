import { fromPromise } from 'xstate';
import type { ValidateBatchInput, ValidateBatchOutput } from '../../machines/run-actors.ts';
import { type PendingCall, type RunContext, turnId } from '../../machines/run-context.ts';
import { prepareToolCall } from '../../tools/call-tool.ts';
import { type PolicyRetryHint, toPolicyRetryHint } from '../../tools/retry-hint.ts';
import { ToolError } from '../../tools/tool-error.ts';
import { type ToolResultJSON, toolResultToJSON } from '../../tools/tool-result.ts';
import type { RunDeps } from './run-deps.ts';

/**
 * The `validateBatch` actor (SPEC §4 `validating`): for each proposed call, in order —
 *
 * 1. `onToolBatch` policies see the whole batch first (they may disable tools, finalize, fail);
 * 2. the tool must be known and enabled (`tool_unavailable` otherwise);
 * 3. a tool past `maxRetriesPerTool` repairs in a row is refused and disabled for the run;
 * 4. the input must pass the tool's schema (`missing_fields` / `invalid_arguments`);
 * 5. a tool declared `requiresConfirmation` waits for approval.
 *
 * Rejected calls get their ToolResult (with hint) here; admitted calls carry the validated input.
 */
export function createValidateBatchActor(deps: RunDeps) {
  return fromPromise<ValidateBatchOutput, ValidateBatchInput>(async ({ input }) => {
    const { context } = input;
    const effects = await deps.policies.onToolBatch(
      context,
      context.pending.map(({ toolCallId, name, input: callInput, attempt }) => ({
        toolCallId,
        name,
        input: callInput,
        attempt,
      })),
    );
    const disabled = { ...context.disabledTools, ...effects.disabledTools };
    const results: (ToolResultJSON | null)[] = [];
    const hints: PolicyRetryHint[] = [];
    const pending = context.pending.map((call): PendingCall => {
      const retryCapped = exceedsRetryCap(context, call);
      if (retryCapped) disabled[call.name] = 'retry_cap';
      const prepared = prepareToolCall(
        deps.catalog,
        { name: call.name, toolCallId: call.toolCallId, input: call.input },
        { isEnabled: (id) => disabled[id] === undefined, limits: deps.limits },
      );
      if (!prepared.ok) {
        const result = prepared.result;
        if (retryCapped && result.error) {
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
      return {
        ...call,
        status: prepared.tool.requiresConfirmation ? 'confirm' : 'admitted',
        preparedInput: prepared.input,
        droppedFields: prepared.droppedFields.length > 0 ? prepared.droppedFields : undefined,
      };
    });
    const disabledChanged = Object.keys(disabled).length !== Object.keys(context.disabledTools).length;
    return {
      pending,
      results,
      hints,
      effects: disabledChanged ? { ...effects, disabledTools: disabled } : effects,
    };
  });
}

/**
 * A call is past the cap when its tool already failed `maxRetriesPerTool + 1` times in a row:
 * the first attempt plus that many repairs were all spent.
 */
function exceedsRetryCap(context: RunContext, call: PendingCall): boolean {
  return (context.toolStats[call.name]?.consecutiveFailures ?? 0) > context.caps.maxRetriesPerTool;
}

export function metaFor(context: RunContext, call: Pick<PendingCall, 'toolCallId' | 'attempt'>) {
  return {
    runId: context.runId,
    sessionId: context.sessionId,
    turnId: turnId(context),
    toolCallId: call.toolCallId,
    agentId: context.agent.id,
    attempt: call.attempt,
  };
}
