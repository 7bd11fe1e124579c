import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { elicit } from '../tools/call-tool.ts';
import type { ToolContext } from '../tools/define-tool.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { McpClientFeatures } from './client-features.ts';
import { type FormSchema, formContent, formQuestion } from './elicitation-form.ts';

/** Times a person is asked again after an answer the form cannot take; then the server is answered `cancel`. */
export const MAX_ELICITATION_ROUNDS = 3;

/** The ToolContext of each MCP call in flight, by its meta (what the client-feature handlers are given). */
const contexts = new WeakMap<ToolCallMeta, ToolContext>();

/** Records the context of a call in flight, so {@link elicitationFromRun} can ask its run. */
export function trackCallContext(ctx: ToolContext): void {
  contexts.set(ctx.meta, ctx);
}

/**
 * An elicitation handler that makes a server's `elicitation/create` the run's own await
 * (issue 39 item 4, docs/mcp.md §Elicitation): the run of the call in flight goes to
 * `awaiting.elicitation` (status `awaiting`), the form put as a clarification
 * (`run.awaiting.kind === 'clarification'`, `missingFields` its fields; answer with
 * `provideClarification`: the value for a one-field form, else a JSON object) or, without
 * fields, as a confirmation (`confirm`: approved accepts, denied declines). The call waits and
 * then finishes with what the server makes of the answer.
 *
 * | what happens                                        | the server is answered |
 * |-----------------------------------------------------|------------------------|
 * | the person answers                                  | `accept` with the form's content |
 * | an answer the form cannot take                      | asked again with the problem, up to {@link MAX_ELICITATION_ROUNDS} times; then `cancel` |
 * | the confirmation is denied, the run canceled or closed | `decline`          |
 * | nobody answers before the call's timeout            | `cancel`               |
 * | no call in flight can ask (outside a run, or calls of two runs on one stdio connection: a server's request names no call) | `fallback`'s answer, else `cancel` |
 *
 * Durable runs: a process that dies while the question waits takes the server's request with it;
 * the restored run drops the question and the call is asked for again like any call in flight
 * (re-run or in doubt per its declared effects, docs/durability.md §Effects).
 */
export function elicitationFromRun(
  options: { fallback?: McpClientFeatures['onElicitation'] } = {},
): NonNullable<McpClientFeatures['onElicitation']> {
  return async (request, calls) => {
    const asking = calls.flatMap((meta) => {
      const ctx = contexts.get(meta);
      return ctx === undefined ? [] : [ctx];
    });
    const runs = new Set(asking.map((ctx) => ctx.meta.runId));
    const fallback = (): Promise<ElicitResult> =>
      options.fallback ? options.fallback(request, calls) : Promise.resolve({ action: 'cancel' });
    if (request.mode === 'url' || asking.length === 0 || runs.size > 1) return fallback();
    const ctx = asking[0]!;
    const schema = request.requestedSchema as FormSchema | undefined;
    let problem: string | undefined;
    for (let round = 0; round < MAX_ELICITATION_ROUNDS; round++) {
      const answer = await elicit(ctx, {
        message: formQuestion(request.message, schema, problem),
        ...(schema === undefined ? {} : { requestedSchema: { properties: schema.properties ?? {} } }),
      });
      if (answer === undefined) return fallback();
      if (answer.action !== 'accept') return { action: answer.action };
      const content = formContent(schema, answer.answer);
      if (content.ok) return { action: 'accept', content: content.content as ElicitResult['content'] };
      problem = content.problem;
    }
    return { action: 'cancel' };
  };
}
