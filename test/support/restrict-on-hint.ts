import type { PolicyRunner } from '../../policies/policy-runner.ts';
import { NO_EFFECTS } from '../../run/policy-effects.ts';
import type { PolicyRetryHint } from '../../tools/retry-hint.ts';

/**
 * A hand-written PolicyRunner (the port the run machine calls, no engine): after any hint, the
 * next turn sees only the tool that got it, recorded as one `policy_decision` with `note(hint)`.
 * Telemetry tests use it to get exactly one decision of a known shape (docs/policies.md).
 */
export function restrictOnHint(note: (hint: PolicyRetryHint) => string): PolicyRunner {
  return {
    onToolBatch: async () => NO_EFFECTS,
    onResults: async (_context, _results, hints) => {
      const hint = hints[0];
      if (!hint) return NO_EFFECTS;
      return {
        decisions: [
          {
            policy: 'restrict-on-invalid',
            hook: 'onRetryHint',
            kinds: ['restrictToTool'],
            decision: { restrictToTool: hint.tool },
            toolCallId: hint.toolCallId,
            tool: hint.tool,
            note: note(hint),
          },
        ],
        restrictTo: [hint.tool],
      };
    },
  };
}
