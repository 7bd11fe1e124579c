import type { AwaitClarification } from '../run/planner.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';

/**
 * The clarification a policy's `awaitClarification` asks (docs/policies.md: "default question from the
 * hint"), with `missingFields` always set. What the policy gave wins; the rest comes from the
 * hint, as Goa-AI's planner example builds it (docs/sources.md §Retry hints): the hint's clarifyingQuestion (else its
 * message), missingFields, exampleInput, the tool when the hint has `restrictToTool`, and the
 * message as `clarifyingPrompt`. The id is `clarify:<toolCallId>`, stable across a restore.
 */
export function clarificationFromHint(
  given: true | Partial<AwaitClarification>,
  hint: PolicyRetryHint | undefined,
  fallback: { policy: string; turnId: string },
): AwaitClarification & { missingFields: string[] } {
  const part = given === true ? {} : given;
  const clarification: AwaitClarification & { missingFields: string[] } = {
    id: part.id ?? (hint ? `clarify:${hint.toolCallId}` : `clarify:${fallback.turnId}:${fallback.policy}`),
    question:
      part.question ??
      hint?.clarifyingQuestion ??
      hint?.message ??
      `How should I continue? (asked by policy ${fallback.policy})`,
    missingFields: part.missingFields ?? hint?.missingFields ?? [],
  };
  const restrictToTool = part.restrictToTool ?? (hint?.restrictToTool ? hint.tool : undefined);
  if (restrictToTool !== undefined) clarification.restrictToTool = restrictToTool;
  const exampleInput = part.exampleInput ?? hint?.exampleInput;
  if (exampleInput !== undefined) clarification.exampleInput = exampleInput;
  const clarifyingPrompt = part.clarifyingPrompt ?? hint?.message;
  if (clarifyingPrompt !== undefined) clarification.clarifyingPrompt = clarifyingPrompt;
  return clarification;
}
