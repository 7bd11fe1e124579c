import { idempotencyKey } from '../tools/idempotency-key.ts';
import type { InDoubtCause } from '../tools/tool-result.ts';
import type { AwaitState, ConfirmationCall, ElicitationMark, RunContext } from './run-context.ts';

/**
 * What a run waits for, in the form an app answers it (docs/architecture.md §Awaiting): read it
 * from `run.awaiting`, or from `runtime.list()` / `runtime.load(runId)` in another process,
 * without restoring the run or reading its snapshot.
 *
 * | kind             | answer with                                                  |
 * |------------------|--------------------------------------------------------------|
 * | `clarification`  | `provideClarification(runId, { id, answer })`                |
 * | (either, with `elicitation`) | as above: a running call asked (`awaiting.elicitation`), the answer goes to it |
 * | `external_tools` | `provideToolResults(runId, [{ toolCallId, result }])` per call |
 * | `confirmation`   | `confirm(runId, { id, approved })`                           |
 * | `backoff`        | nothing: the run wakes by itself at `until` (epoch ms)       |
 * | `in_doubt`       | `resolveInDoubt(runId, { [toolCallId]: { status: 'done', output } \| { status: 'not_done' } \| { status: 'failed', error } })`, every call |
 *
 * Answers are checked where they enter (runtime/run-answers.ts): strings where strings are due, a
 * clarification answer or confirmation reason of at most 65,536 characters, results JSON of at
 * most 16 MiB, error messages kept to 4,096 characters; a refused answer changes nothing.
 */
export type RunAwaiting =
  | {
      kind: 'clarification';
      id: string;
      /** The question for a person. */
      question: string;
      /** Dotted paths of the fields the answer should give (`address.city`). */
      missingFields: string[];
      /** The tool the answer is for, when the question came from one tool's hint. */
      restrictToTool?: string;
      exampleInput?: Record<string, unknown>;
      /** Set when a running call asks (an MCP server's elicitation, docs/mcp.md §Elicitation): the answer goes to that call. */
      elicitation?: ElicitationMark;
    }
  | {
      kind: 'external_tools';
      id: string;
      /** The calls the app runs itself and answers by `toolCallId`. */
      calls: { name: string; toolCallId: string; input: unknown }[];
    }
  | {
      kind: 'confirmation';
      id: string;
      /** What a person approves or denies (the planner's `prompt`). */
      question: string;
      details?: unknown;
      /** The tool calls held until the answer, when a policy asked for the confirmation. */
      toolCallIds?: string[];
      /**
       * A descriptor per held call: `{ toolCallId, tool, input, summary?, risk?, permissions?,
       * missing? }` (the tool's `summary`, `risk`, `permissions`, and those the run lacks).
       */
      calls?: ConfirmationCall[];
      /** Set when a running call asks (an MCP server's elicitation without fields): approved accepts, denied declines. */
      elicitation?: ElicitationMark;
    }
  | { kind: 'backoff'; until: number }
  | {
      kind: 'in_doubt';
      /**
       * The calls whose outcome is unknown (docs/durability.md §Effects): started, their end
       * never recorded. `idempotencyKey` is the key the call ran under (`ctx.idempotencyKey`),
       * to look the effect up in the system the tool changes.
       */
      calls: {
        toolCallId: string;
        name: string;
        input: Record<string, unknown>;
        /** Epoch ms, when the run recorded it. */
        startedAt?: number;
        cause: InDoubtCause;
        idempotencyKey: string;
      }[];
    };

/** The public form of a run context's `flow.awaiting`; `null` when the run waits for nothing. */
export function runAwaitingOf(
  context: (Pick<RunContext, 'flow'> & { runId?: string }) | undefined,
): RunAwaiting | null {
  const awaiting: AwaitState | null | undefined = context?.flow?.awaiting;
  if (!awaiting) return null;
  switch (awaiting.kind) {
    case 'clarification': {
      const { id, question, missingFields, restrictToTool, exampleInput } = awaiting.clarification;
      return {
        kind: 'clarification',
        id,
        question,
        missingFields: [...missingFields],
        ...(restrictToTool === undefined ? {} : { restrictToTool }),
        ...(exampleInput === undefined ? {} : { exampleInput }),
        ...(awaiting.elicitation === undefined ? {} : { elicitation: { ...awaiting.elicitation } }),
      };
    }
    case 'external_tools':
      return {
        kind: 'external_tools',
        id: awaiting.externalTools.id,
        calls: [...awaiting.externalTools.calls],
      };
    case 'confirmation': {
      const { id, prompt, details } = awaiting.confirmation;
      return {
        kind: 'confirmation',
        id,
        question: prompt,
        ...(details === undefined ? {} : { details }),
        ...(awaiting.toolCallIds === undefined ? {} : { toolCallIds: [...awaiting.toolCallIds] }),
        ...(awaiting.calls === undefined ? {} : { calls: awaiting.calls.map((call) => ({ ...call })) }),
        ...(awaiting.elicitation === undefined ? {} : { elicitation: { ...awaiting.elicitation } }),
      };
    }
    case 'backoff':
      return { kind: 'backoff', until: awaiting.until };
    case 'in_doubt': {
      const runId = context?.runId ?? '';
      return {
        kind: 'in_doubt',
        calls: awaiting.calls.map((call) => ({
          ...call,
          idempotencyKey: idempotencyKey(runId, call.toolCallId, call.input),
        })),
      };
    }
  }
}
