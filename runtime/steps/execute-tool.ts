import type { ExecuteToolInput, ExecuteToolOutput } from '../../machines/run-actors.ts';
import { fromTask } from '../../machines/task-actor.ts';
import { composeWrappers, type RunInfo, type ToolInvocation } from '../../plugins/define-plugin.ts';
import { executeToolCall } from '../../tools/call-tool.ts';
import { toPolicyRetryHint } from '../../tools/retry-hint.ts';
import { ToolError } from '../../tools/tool-error.ts';
import { type ToolResult, toolResultToJSON } from '../../tools/tool-result.ts';
import type { RunDeps } from './run-deps.ts';

/**
 * The `executeTool` actor: one child actor per admitted call (docs/architecture.md `executing`). Runs the
 * plugins' `wrapToolCall` hooks (where injected fields are filled and telemetry opens the span),
 * then the tool with its timeout. Stopping the actor (cancel) aborts the tool's signal. Never
 * rejects: every outcome is a ToolResult.
 */
export function createExecuteToolActor(deps: RunDeps, runInfoFor: (runId: string) => RunInfo) {
  const invoke = composeWrappers(
    deps.plugins.flatMap((plugin) => (plugin.wrapToolCall ? [plugin.wrapToolCall.bind(plugin)] : [])),
    (call: ToolInvocation): Promise<ToolResult> =>
      executeToolCall(call.tool, call.input, {
        meta: call.meta,
        labels: call.labels,
        signal: call.signal,
        defaultTimeoutMs: deps.defaultToolTimeoutMs,
      }),
  );
  return fromTask<ExecuteToolOutput, ExecuteToolInput>(async ({ input, controller }) => {
    const { call, meta, index, labels } = input;
    const tool = deps.catalog.get(call.name);
    let result: ToolResult;
    if (!tool) {
      result = {
        name: call.name,
        toolCallId: call.toolCallId,
        executed: false,
        error: new ToolError(`Unknown tool ${call.name}`),
      };
    } else {
      try {
        result = await invoke({
          tool,
          input: ownCopy(call.preparedInput ?? {}),
          meta,
          labels,
          droppedFields: call.droppedFields ?? [],
          run: runInfoFor(meta.runId),
          signal: controller.signal,
        });
      } catch (err) {
        result = { name: call.name, toolCallId: call.toolCallId, executed: true, error: ToolError.from(err) };
      }
    }
    return {
      index,
      result: toolResultToJSON(result),
      hint: result.retryHint ? toPolicyRetryHint(result.retryHint, meta) : undefined,
    };
  });
}

/**
 * A copy of the validated input the tool and `wrapToolCall` hooks may change (plugins fill
 * injected fields in place) without changing the run's context. Flat inputs, the common case,
 * are copied by spreading; nested ones are cloned.
 */
function ownCopy(input: Record<string, unknown>): Record<string, unknown> {
  for (const key in input) {
    const value = input[key];
    if (typeof value === 'object' && value !== null) return structuredClone(input);
  }
  return { ...input };
}
