import type { Message } from '../../run/message.ts';
import type { PlanInput, PlannedToolCall, Planner, PlanResult } from '../../run/planner.ts';
import type { RetryHint } from '../../tools/retry-hint.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import { type Question, repairCall, withAnswers } from './repair-call.ts';

/** What {@link hintRepairPlanner} takes. */
export interface HintRepairPlannerOptions {
  /** The calls of the first turn (in an evaluation: the model's calls, mistakes and all). */
  firstCalls: (input: PlanInput) => PlannedToolCall[];
  /**
   * A question to ask before any call, when the request itself lacks something (BFCL's
   * `multi_turn_miss_param`): the run awaits the answer, whose values fill `call`; `alongside`
   * is sent with it. Undefined: start with {@link firstCalls}.
   */
  firstQuestion?: (input: PlanInput) => FirstQuestion | undefined;
  /**
   * Whether a person can be asked for a hint's missing fields (AwaitClarification; the app
   * answers with `run.provideClarification`). Default false: fill them from `exampleInput`.
   */
  ask?: boolean | ((hint: RetryHint) => boolean);
  /** Repairs of one tool per run before the planner gives up on it. Default 3. */
  maxRepairs?: number;
  /** The final text, from the successful results. */
  finalText?: (results: ToolResult[]) => string;
}

export interface FirstQuestion {
  question: string;
  /** Dotted paths the answer is expected to give values for (may be empty). */
  missingFields: string[];
  call: PlannedToolCall;
  alongside?: PlannedToolCall[];
}

/**
 * A planner with no LLM that repairs failed calls from their RetryHints ({@link repairCall} is the
 * table of repairs), asks a person when fields are missing and someone can answer, and finishes
 * when every call has succeeded or been given up on. It reads the run the way an LLM planner
 * would: `toolResults`, the transcript, and the tools advertised this turn.
 *
 * What each turn does:
 *
 * | the turn's input                          | the planner                                           |
 * |-------------------------------------------|-------------------------------------------------------|
 * | start                                      | {@link HintRepairPlannerOptions.firstQuestion}, else `firstCalls` |
 * | `finalize`                                 | the final response (no tools)                         |
 * | an answer to its own question             | the call asked about, with the answer's values, and the calls put off |
 * | an answer to a policy's question (`clarify:<toolCallId>`, e.g. `askOnMissingFields`) | the asked-about call (found in the transcript) with the answer's values; that result is not repaired again |
 * | a failed result                            | its repair ({@link repairCall}); the first repair that is a question is asked when `ask` allows, the other gaps are filled from `exampleInput` |
 * | a call for a tool not advertised this turn (a policy restricted the turn) | put off to the next turn, unless nothing else would be sent |
 * | nothing left to send                      | the final response                                    |
 *
 * An answer is the user's text; the values for the missing fields are read from it when it is a
 * JSON object or ends with a line holding one (`The city is Paris.\n{"city": "Paris"}`): this
 * planner has no model to read prose with.
 *
 * Per run it remembers only what an LLM's context would hold anyway: its open question with the
 * calls put off for it, the repairs made per tool, and the results that succeeded.
 */
export function hintRepairPlanner(options: HintRepairPlannerOptions): Planner {
  const maxRepairs = options.maxRepairs ?? 3;
  const runs = new Map<string, RunMemory>();
  const memoryOf = (runId: string): RunMemory => {
    let memory = runs.get(runId);
    if (!memory) {
      memory = { questions: new Map(), putOff: [], repairs: new Map(), succeeded: [] };
      runs.set(runId, memory);
    }
    return memory;
  };
  const canAsk = (hint: RetryHint) =>
    typeof options.ask === 'function' ? options.ask(hint) : options.ask === true;

  const finish = (runId: string, text?: string): PlanResult => {
    const results = runs.get(runId)?.succeeded ?? [];
    runs.delete(runId);
    return {
      finalResponse: {
        text: text ?? options.finalText?.(results) ?? summarize(results),
        data: results.map((r) => r.result),
      },
    };
  };

  return {
    async planStart(input) {
      const first = options.firstQuestion?.(input);
      if (!first) return { toolCalls: options.firstCalls(input) };
      const id = `clarify:${input.turnId}`;
      memoryOf(input.runId).questions.set(id, { call: first.call, putOff: first.alongside ?? [] });
      return {
        await: { clarification: { id, question: first.question, missingFields: first.missingFields } },
        notes: [`asked before calling: ${first.missingFields.join(', ') || first.question}`],
      };
    },

    async planResume(input) {
      const { runId } = input;
      if (input.finalize) return finish(runId, `Stopped (${input.finalize.reason}).`);
      const memory = memoryOf(runId);
      memory.succeeded.push(...input.toolResults.filter((result) => !result.error));
      const calls: PlannedToolCall[] = memory.putOff.splice(0);
      const notes: string[] = [];

      // 1. An answer: the call it was about, completed with the answer's values.
      let answeredCallId: string | undefined;
      if (input.clarification) {
        const { id, answer } = input.clarification;
        const values = valuesInAnswer(answer);
        const own = memory.questions.get(id);
        memory.questions.delete(id);
        if (own) {
          calls.unshift({ ...own.call, input: withAnswers(asRecord(own.call.input), values) }, ...own.putOff);
        } else if (id.startsWith(CLARIFY_PREFIX)) {
          // A policy asked about a failed call; its result is in this turn's toolResults too.
          answeredCallId = id.slice(CLARIFY_PREFIX.length);
          const hint = hintInTranscript(input.messages, answeredCallId);
          if (hint) {
            const prior = hint.priorInput ?? asRecord(sentInput(input.messages, answeredCallId));
            calls.unshift({ name: hint.tool, input: withAnswers(prior, values) });
          }
        }
        notes.push(`answer to ${id}: ${Object.keys(values).join(', ') || '(no values)'}`);
      }

      // 2. Failed results: one repair each, or one question for the run.
      let question: (Question & { id: string }) | undefined;
      const advertised = input.tools.map((tool) => tool.name);
      for (const result of input.toolResults) {
        if (!result.error || result.toolCallId === answeredCallId) continue;
        const count = (memory.repairs.get(result.name) ?? 0) + 1;
        memory.repairs.set(result.name, count);
        if (count > maxRepairs) {
          notes.push(`gave up on ${result.name} after ${maxRepairs} repairs`);
          continue;
        }
        const hint = result.retryHint;
        const repair = repairCall(result, {
          advertised,
          canAsk: hint !== undefined && question === undefined && canAsk(hint),
          sent: sentInput(input.messages, result.toolCallId),
          inputSchema: input.tools.find((tool) => tool.name === result.name)?.inputSchema,
        });
        notes.push(repair.note);
        if (repair.kind === 'call') calls.push(repair.call);
        else if (repair.kind === 'ask') {
          question = { ...repair.question, id: `${CLARIFY_PREFIX}${result.toolCallId}` };
        }
      }

      if (question) {
        const { id, call, ...asked } = question;
        memory.questions.set(id, { call, putOff: calls });
        return {
          await: {
            clarification: {
              id,
              question: asked.question,
              missingFields: asked.missingFields,
              restrictToTool: call.name,
              exampleInput: asked.exampleInput,
            },
          },
          notes,
        };
      }

      // 3. Send what this turn may call; put off calls of tools a policy hid for this turn.
      const now = calls.filter((call) => advertised.includes(call.name));
      const later = calls.filter((call) => !advertised.includes(call.name));
      if (now.length > 0) {
        memory.putOff.push(...later);
        if (later.length > 0) notes.push(`put off to the next turn: ${later.map((c) => c.name).join(', ')}`);
        return { toolCalls: now, notes };
      }
      if (later.length > 0) return { toolCalls: later, notes };
      return { ...finish(runId), notes };
    },
  };
}

const CLARIFY_PREFIX = 'clarify:';

interface RunMemory {
  /** Open questions by clarification id: the call each is about and the calls put off for it. */
  questions: Map<string, { call: PlannedToolCall; putOff: PlannedToolCall[] }>;
  /** Calls for the next turn. */
  putOff: PlannedToolCall[];
  /** Repairs made, per tool id. */
  repairs: Map<string, number>;
  succeeded: ToolResult[];
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

/** The input a call sent, as the transcript's assistant message records it. */
function sentInput(messages: Message[], toolCallId: string): unknown {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const call = message.toolCalls?.find((c) => c.toolCallId === toolCallId);
    if (call) return call.input;
  }
  return undefined;
}

/**
 * The values an answer gives: the answer itself when it is a JSON object, else its last line
 * when that is one (`The city is Paris.\n{"city": "Paris"}`); `{}` for prose alone.
 */
export function valuesInAnswer(answer: string): Record<string, unknown> {
  const lines = answer.trimEnd().split('\n');
  for (const candidate of [answer, lines[lines.length - 1] ?? '']) {
    try {
      const value = JSON.parse(candidate);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch {
      // not JSON
    }
  }
  return {};
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function summarize(results: ToolResult[]): string {
  if (results.length === 0) return 'No tool call succeeded.';
  return `Done: ${results.map((result) => result.name).join(', ')}.`;
}
