import type { z } from 'zod';
import { PARENT_RUN_LABEL, PARENT_TOOL_CALL_LABEL } from '../machines/run-context.ts';
import type { Message } from '../run/message.ts';
import { RunNotFoundError } from '../stores/run-store-errors.ts';
import { defineTool, type Tool, type ToolContext, toolOutput } from '../tools/define-tool.ts';
import { ToolError } from '../tools/tool-error.ts';
import type { Runtime } from './create-runtime.ts';
import type { RunOutcome } from './run-handle.ts';

/** What {@link agentTool} takes. */
export interface AgentToolOptions<I extends z.ZodType> {
  /** `"<toolset>.<tool>"`, as for any tool. */
  id: string;
  description: string;
  input: I;
  /** The runtime that hosts the child agent's runs (its own planner, tools and policies). */
  runtime: Runtime;
  /** The child run's opening messages, from the validated input. */
  messages: (input: z.output<I>) => Message[];
  /** Extra labels for the child run. */
  labels?: (input: z.output<I>) => Record<string, string>;
  /** Bounds the whole child run, in ms; the child is canceled when it runs out. */
  timeoutMs?: number;
  tags?: string[];
  examples?: z.input<I>[];
}

/** What the parent's planner gets back from a child run. */
export interface AgentToolResult {
  text: string;
  data?: unknown;
}

/**
 * Agent-as-tool (Goa-AI's toolsets guide, docs/sources.md §Names: "agent-as-tool"; docs/tool-boundary.md): a tool whose `execute`
 * runs another agent as a child run in `options.runtime`.
 *
 * - The child run is linked to the call: its labels carry the parent run id and the parent
 *   `toolCallId`, and every ToolCallMeta of the child has `parentToolCallId` set (so its spans
 *   carry `toolwarden.tool_call.parent_id`).
 * - The result is the child's final response; an artifact `{ kind: 'child_run' }` (never sent
 *   to the model) links the child run: its id, status and how many tool calls it made.
 * - A child that fails or is canceled makes the call fail with a ToolError whose cause is the
 *   child's error, so the chain survives the hop (Goa-AI, docs/sources.md: "Cause preserves chains across
 *   retries and agent-as-tool hops").
 * - Canceling the parent (or the call's timeout) cancels the child.
 * - The child's run id is derived from the parent's `toolCallId`, so a call re-run after a
 *   crash resumes the same child run instead of starting a second one.
 *
 * A child run that awaits a person keeps the call waiting; `timeoutMs` bounds it.
 */
export function agentTool<I extends z.ZodType>(options: AgentToolOptions<I>): Tool<I> {
  return defineTool({
    id: options.id,
    description: options.description,
    input: options.input,
    timeoutMs: options.timeoutMs,
    tags: options.tags,
    examples: options.examples,
    execute: async (input: z.output<I>, ctx: ToolContext) => {
      const outcome = await runChild(options, input, ctx);
      const artifact = {
        kind: 'child_run',
        title: `${options.id} run ${outcome.runId}`,
        data: { runId: outcome.runId, status: outcome.status, toolCalls: outcome.toolResults.length },
      };
      if (outcome.status !== 'completed') {
        const cause = outcome.error ? ToolError.fromJSON(outcome.error) : undefined;
        throw new ToolError(`Child run ${outcome.runId} of ${options.id} ${outcome.status}`, { cause });
      }
      const result: AgentToolResult = { text: outcome.finalResponse?.text ?? '' };
      if (outcome.finalResponse?.data !== undefined) result.data = outcome.finalResponse.data;
      return toolOutput(result, { artifacts: [artifact] });
    },
  });
}

async function runChild<I extends z.ZodType>(
  options: AgentToolOptions<I>,
  input: z.output<I>,
  ctx: ToolContext,
): Promise<RunOutcome> {
  const runId = `${ctx.meta.toolCallId}:child`;
  const child =
    options.runtime.get(runId) ??
    (await options.runtime.resume(runId).catch((err: unknown) => {
      if (!(err instanceof RunNotFoundError)) throw err;
      return options.runtime.start({
        runId,
        sessionId: ctx.meta.sessionId,
        messages: options.messages(input),
        labels: {
          ...options.labels?.(input),
          [PARENT_RUN_LABEL]: ctx.meta.runId,
          [PARENT_TOOL_CALL_LABEL]: ctx.meta.toolCallId,
        },
      });
    }));
  const cancel = () => child.cancel(`parent call ${ctx.meta.toolCallId} was aborted`);
  if (ctx.signal.aborted) cancel();
  ctx.signal.addEventListener('abort', cancel, { once: true });
  try {
    return await child.result();
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
  }
}
