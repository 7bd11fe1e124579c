import { z } from 'zod';
import { lazySchema } from '../tools/lazy-schema.ts';
import type { ToolDescriptor } from '../tools/tool-catalog.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import type { CapsState } from './caps.ts';
import type { FinalizeNotice } from './finalize-notice.ts';
import type { Message } from './message.ts';

/** A person is asked a question; the run waits in `awaiting.clarification` (docs/architecture.md). */
export const AwaitClarificationSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    question: z.string(),
    missingFields: z.array(z.string()).default([]),
    restrictToTool: z.string().optional(),
    exampleInput: z.record(z.string(), z.unknown()).optional(),
    clarifyingPrompt: z.string().optional(),
  }),
);
/** A question for a person the run waits on (`awaiting.clarification`); answered with `provideClarification({ id, answer })` (docs/planners.md). */
export type AwaitClarification = z.input<typeof AwaitClarificationSchema>;

/** Calls the app runs itself; their results come back through `provideToolResults`. */
export const AwaitExternalToolsSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    calls: z.array(z.object({ name: z.string(), toolCallId: z.string(), input: z.unknown() })).min(1),
  }),
);
/** Tool calls the app runs itself (`awaiting.externalTools`); answered with `provideToolResults([...])` (docs/planners.md). */
export type AwaitExternalTools = z.infer<typeof AwaitExternalToolsSchema>;

/** An approval the planner asks for; answered with `confirm({ id, approved })`. */
export const AwaitConfirmationSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    prompt: z.string(),
    details: z.unknown().optional(),
  }),
);
/** An approval the run waits on (`awaiting.confirmation`); answered with `confirm({ id, approved })` (docs/planners.md). */
export type AwaitConfirmation = z.infer<typeof AwaitConfirmationSchema>;

/** Schema of {@link PlannedToolCall}. */
export const PlannedToolCallSchema = lazySchema(() =>
  z.object({
    name: z.string(),
    toolCallId: z.string().optional(),
    /** An object, or JSON text as providers deliver it. */
    input: z.unknown(),
  }),
);
/** One tool call a planner proposes; `input` is an object or JSON text. */
export type PlannedToolCall = z.infer<typeof PlannedToolCallSchema>;

/** What a planner turn returns (docs/architecture.md). Tool calls win over a final response in one result. */
export const PlanResultSchema = lazySchema(() =>
  z.object({
    toolCalls: z.array(PlannedToolCallSchema).optional(),
    finalResponse: z.object({ text: z.string(), data: z.unknown().optional() }).optional(),
    await: z
      .object({
        clarification: AwaitClarificationSchema.optional(),
        externalTools: AwaitExternalToolsSchema.optional(),
        confirmation: AwaitConfirmationSchema.optional(),
      })
      .optional(),
    notes: z.array(z.string()).optional(),
    /**
     * What the turn cost in tokens (a model planner's usage; OTel's `gen_ai.usage.*`). Summed on
     * the run (`outcome.usage`) and held to `caps.maxTotalTokens`.
     */
    usage: z
      .object({
        inputTokens: z.number().int().nonnegative(),
        outputTokens: z.number().int().nonnegative(),
        /**
         * Of `inputTokens`, those the provider read from its prompt cache (AI SDK
         * `inputTokens.cacheRead`), priced at `cachedInputPerMTok` by `costBudget`. Absent: none
         * reported (the provider does not say, or nothing was cached).
         */
        cachedInputTokens: z.number().int().nonnegative().optional(),
      })
      .optional(),
    /**
     * What the turn cost in money (docs/policies.md §Money): set by `costBudget` from the turn's
     * usage and the app's price table, or by a planner that knows its price. `amount` is this
     * turn's, `spent` the run's so far with it, `limit` the budget, all in `currency` units.
     */
    cost: z
      .object({
        currency: z.string().min(1),
        amount: z.number().nonnegative(),
        spent: z.number().nonnegative().optional(),
        limit: z.number().nonnegative().optional(),
      })
      .optional(),
    /**
     * The turn was not taken: a `wrapPlan` hook declined it (`costBudget` before a turn that cannot
     * fit the budget: `budget_exhausted`). The run finalizes with `reason` as its
     * `finalizeReason`, and `note` in the finalizing turn's message. Ignored in a finalizing turn,
     * which must answer.
     */
    declined: z.object({ reason: z.string().min(1), note: z.string().optional() }).optional(),
  }),
);
/** What a planner turn returns: tool calls, a final response, or something to await (docs/planners.md). */
export type PlanResult = z.input<typeof PlanResultSchema>;
/** A PlanResult after {@link PlanResultSchema} parsed it (defaults filled). */
export type ParsedPlanResult = z.output<typeof PlanResultSchema>;

/** What the planner is given (docs/architecture.md). `tools` is `[]` when finalizing. */
export interface PlanInput {
  runId: string;
  turnId: string;
  agentId: string;
  sessionId?: string;
  messages: Message[];
  tools: ToolDescriptor[];
  caps: CapsState;
  labels: Record<string, string>;
  /** Aborted when the run is canceled or its time budget runs out. */
  signal?: AbortSignal;
  /**
   * For a streaming planner: reports what the model writes as it writes it. The runtime
   * publishes each delta on `run.events$` as a `text_delta` or `tool_call_delta` RunEvent (not
   * stored, not sent to plugins). Absent where nobody can listen (a Temporal activity).
   */
  onDelta?: (delta: PlanDelta) => void;
}

/** A piece of a planner turn in progress (docs/planners.md §Models): text, or a tool call's input JSON. */
export type PlanDelta =
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_call_delta'; toolCallId: string; tool: string; delta: string };

export interface PlanResumeInput extends PlanInput {
  /** Results of the last batch, in call order. */
  toolResults: ToolResult[];
  clarification?: { id: string; answer: string };
  confirmation?: { id: string; approved: boolean; by?: string; reason?: string };
  /**
   * Set on the finalizing turn (`tools: []`): why the run stops, which calls of the last batch
   * were not made, and `message`, all of it as text for a model (run/finalize-notice.ts).
   */
  finalize?: FinalizeNotice;
}

/** Decides the next step of a run: an LLM adapter, or code (docs/architecture.md). */
export interface Planner {
  planStart(input: PlanInput): Promise<PlanResult>;
  planResume(input: PlanResumeInput): Promise<PlanResult>;
  /**
   * The model this planner asks, when it asks one (`modelPlanner` sets it from its AI SDK model):
   * `provider` and `modelId` as the provider names them (OTel `gen_ai.provider.name`,
   * `gen_ai.request.model`) and the output tokens a turn may write at most. Plugins see it on
   * each turn (`PlanInvocation.model`); `costBudget` prices turns by it.
   */
  readonly model?: PlannerModel;
}

/** The model a planner asks (`Planner.model`). */
export interface PlannerModel {
  provider: string;
  modelId: string;
  /** The most output tokens one model call may write (the request's `maxOutputTokens`). */
  maxOutputTokens?: number;
}

/** A scripted step: a fixed result, or a function of what the planner was given. */
export type ScriptedStep =
  | PlanResult
  | ((input: PlanInput | PlanResumeInput) => PlanResult | Promise<PlanResult>);

/** Thrown by a {@link scriptedPlanner} asked for more turns than it has steps. */
export class PlannerScriptExhaustedError extends Error {
  override readonly name = 'PlannerScriptExhaustedError';
}

/**
 * A planner that plays `steps` in order, one per turn (start, resume and finalize alike), and
 * records every input in `calls` so a test can see exactly what the planner was given.
 *
 * @throws PlannerScriptExhaustedError (the run fails) when asked for a step past the end.
 */
export function scriptedPlanner(steps: ScriptedStep[]): Planner & {
  calls: (PlanInput | PlanResumeInput)[];
} {
  const calls: (PlanInput | PlanResumeInput)[] = [];
  const next = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const index = calls.length;
    calls.push(input);
    const step = steps[index];
    if (step === undefined) {
      throw new PlannerScriptExhaustedError(
        `Scripted planner has ${steps.length} steps; turn ${index + 1} asked for more`,
      );
    }
    return typeof step === 'function' ? step(input) : step;
  };
  return { calls, planStart: next, planResume: next };
}
