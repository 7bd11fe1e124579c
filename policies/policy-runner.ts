import type { RunContext } from '../machines/run-context.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { NO_EFFECTS, type PolicyEffects } from './policy-effects.ts';

/** A proposed call as policies see it in `onToolBatch`. */
export interface BatchCall {
  toolCallId: string;
  name: string;
  input: unknown;
  attempt: number;
}

/**
 * Where the run consults policies (SPEC §5): before a batch is admitted, and after its results
 * (every result through `onToolResult`, every hint through `onRetryHint`). The run machine only
 * knows this port; the engine behind it applies the merge rules.
 */
export interface PolicyRunner {
  onToolBatch(context: RunContext, calls: BatchCall[]): Promise<PolicyEffects>;
  onResults(context: RunContext, results: ToolResultJSON[], hints: PolicyRetryHint[]): Promise<PolicyEffects>;
}

/** The runner of a runtime with no policies. */
export const noPolicies: PolicyRunner = {
  onToolBatch: async () => NO_EFFECTS,
  onResults: async () => NO_EFFECTS,
};
