import type { RetryHint } from '../../tools/retry-hint.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import type { Message } from '../message.ts';
import type { PlanInput, PlannedToolCall, Planner, PlanResult, PlanResumeInput } from '../planner.ts';
import { repairCall, withAnswers } from './repair-call.ts';

/** What {@link hintRepairPlanner} takes. */
export interface HintRepairPlannerOptions {
  /** The calls of the first turn (in an evaluation: the model's calls, mistakes and all). */
  firstCalls: (input: PlanInput) => PlannedToolCall[];
  /**
   * Answers a clarification as the user would: values by dotted path, or undefined when the
   * user cannot say. Without it the planner never asks and fills from `exampleInput` instead.
   */
  answer?: (hint: RetryHint, input: PlanResumeInput) => Record<string, unknown> | undefined;
  /** Repairs of one call before the planner gives up on it. Default 3. */
  maxRepairs?: number;
  /** The final text, from the last successful results. */
  finalText?: (results: ToolResult[]) => string;
}

const CLARIFY_PREFIX = 'clarify:';

/**
 * A planner with no LLM that repairs failed calls from their RetryHints ({@link repairCall} is the
 * table of repairs), asks a person through an AwaitClarification when fields are missing and
 * someone can answer, and finishes when every call has succeeded or been given up on.
 *
 * It reads the run the way an LLM planner would: from `toolResults` and the transcript. The one
 * thing it remembers per run is the repairs it put off while a question was open.
 */
export function hintRepairPlanner(options: HintRepairPlannerOptions): Planner {
  const maxRepairs = options.maxRepairs ?? 3;
  const deferred = new Map<string, PlannedToolCall[]>();
  const repairs = new Map<string, number>();
  const succeeded = new Map<string, ToolResult[]>();

  const finish = (runId: string, text?: string): PlanResult => {
    const results = succeeded.get(runId) ?? [];
    deferred.delete(runId);
    succeeded.delete(runId);
    for (const key of [...repairs.keys()]) if (key.startsWith(`${runId}|`)) repairs.delete(key);
    return {
      finalResponse: {
        text: text ?? options.finalText?.(results) ?? summarize(results),
        data: results.map((r) => r.result),
      },
    };
  };

  return {
    async planStart(input) {
      return { toolCalls: options.firstCalls(input) };
    },

    async planResume(input) {
      const { runId } = input;
      if (input.finalize) return finish(runId, `Stopped (${input.finalize.reason}).`);
      const ok = input.toolResults.filter((result) => !result.error);
      succeeded.set(runId, [...(succeeded.get(runId) ?? []), ...ok]);
      const calls: PlannedToolCall[] = [...(deferred.get(runId) ?? [])];
      deferred.delete(runId);
      const notes: string[] = [];

      if (input.clarification?.id.startsWith(CLARIFY_PREFIX)) {
        const toolCallId = input.clarification.id.slice(CLARIFY_PREFIX.length);
        const hint = hintInTranscript(input.messages, toolCallId);
        if (hint) {
          const answers = parseAnswer(input.clarification.answer);
          calls.unshift({ name: hint.tool, input: withAnswers(hint.priorInput ?? {}, answers) });
          notes.push(`answer for ${hint.tool}: ${Object.keys(answers).join(', ')}`);
        }
      }

      let question: { hint: RetryHint; toolCallId: string } | undefined;
      for (const result of input.toolResults.filter((r) => r.error)) {
        const key = `${runId}|${result.name}`;
        const count = (repairs.get(key) ?? 0) + 1;
        repairs.set(key, count);
        if (count > maxRepairs) {
          notes.push(`gave up on ${result.name} after ${maxRepairs} repairs`);
          continue;
        }
        const canAsk = options.answer !== undefined && question === undefined;
        const repair = repairCall(result, { advertised: input.tools.map((tool) => tool.name), canAsk });
        notes.push(repair.note);
        if (repair.kind === 'call') calls.push(repair.call);
        else if (repair.kind === 'ask') {
          const answers = options.answer?.(repair.hint, input);
          if (answers) question = { hint: repair.hint, toolCallId: result.toolCallId };
          else calls.push(...fallbackFill(result));
        }
      }

      if (question) {
        if (calls.length > 0) deferred.set(runId, calls);
        const { hint, toolCallId } = question;
        return {
          await: {
            clarification: {
              id: `${CLARIFY_PREFIX}${toolCallId}`,
              question: hint.clarifyingQuestion ?? `Please provide: ${hint.missingFields.join(', ')}`,
              missingFields: hint.missingFields,
              restrictToTool: hint.tool,
              exampleInput: hint.exampleInput,
            },
          },
          notes,
        };
      }
      if (calls.length > 0) return { toolCalls: calls, notes };
      return { ...finish(runId), notes };
    },
  };
}

/** Missing fields nobody can supply: fill them from the example, as `repairCall` does. */
function fallbackFill(result: ToolResult): PlannedToolCall[] {
  const repair = repairCall(result, { advertised: [], canAsk: false });
  return repair.kind === 'call' ? [repair.call] : [];
}

/** The hint of a failed call, as the transcript's tool message carries it. */
function hintInTranscript(messages: Message[], toolCallId: string): RetryHint | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'tool' && message.toolCallId === toolCallId) {
      return (message.content as { retryHint?: RetryHint } | null)?.retryHint;
    }
  }
  return undefined;
}

/** A clarification answer is JSON (`{"city": "Paris"}`) when it names fields, else plain text. */
function parseAnswer(answer: string): Record<string, unknown> {
  try {
    const value = JSON.parse(answer);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // plain text: not a field map
  }
  return {};
}

function summarize(results: ToolResult[]): string {
  if (results.length === 0) return 'No tool call succeeded.';
  return `Done: ${results.map((result) => result.name).join(', ')}.`;
}
