import type { RetryHint } from '../tools/retry-hint.ts';
import type { ToolErrorJSON } from '../tools/tool-error.ts';

/**
 * How a failed call's result reads to the model (docs/planners.md): `structured` (the default)
 * sends the RetryHint compactly, `plain` only the error message, as peers do, so the two can be
 * compared on the same model.
 *
 * | field in `structured` | from the hint                                         |
 * |-----------------------|-------------------------------------------------------|
 * | `error`               | the ToolError message                                 |
 * | `reason`              | RetryReason (`invalid_arguments`, `missing_fields`, …) |
 * | `missing`             | missing field paths                                   |
 * | `issues`              | per field: path, what was expected, allowed values   |
 * | `example`             | a valid input for the tool                            |
 * | `next`                | what to do now, in one sentence                       |
 */
export type HintStyle = 'structured' | 'plain';

export function renderToolError(
  content: { error: ToolErrorJSON; retryHint?: RetryHint },
  style: HintStyle,
  providerName: (id: string) => string,
): string {
  const { error, retryHint: hint } = content;
  if (style === 'plain' || hint === undefined) return error.message;
  const rendered: Record<string, unknown> = { error: error.message, reason: hint.reason };
  if (hint.missingFields.length > 0) rendered.missing = hint.missingFields;
  if (hint.issues?.length) {
    rendered.issues = hint.issues.slice(0, 10).map((issue) => ({
      path: issue.path,
      problem: issue.constraint,
      ...(issue.expected === undefined ? {} : { expected: issue.expected }),
      ...(issue.allowed === undefined ? {} : { allowed: issue.allowed.slice(0, 20) }),
    }));
  }
  if (hint.exampleInput !== undefined) rendered.example = hint.exampleInput;
  if (hint.retryAfterMs !== undefined) rendered.retryAfterMs = hint.retryAfterMs;
  rendered.next = nextStep(hint, providerName(hint.tool));
  return JSON.stringify(rendered);
}

function nextStep(hint: RetryHint, tool: string): string {
  switch (hint.reason) {
    case 'missing_fields':
      return `Call ${tool} again with the missing fields filled in, or ask the user for them.`;
    case 'invalid_arguments':
      return `Call ${tool} again with arguments that fix every issue; keep the rest of the input.`;
    case 'tool_unavailable':
      return 'Use one of the available tools instead.';
    case 'timeout':
    case 'rate_limited':
      return `The call may be tried again later; do not repeat it at once.`;
    case 'malformed_response':
      return `${tool} answered with something unexpected; try once more or answer without it.`;
    default:
      return `Repair the call to ${tool}.`;
  }
}
