import type { InDoubtCall, RunContext } from '../machines/run-context.ts';
import type { Caps } from '../run/caps.ts';
import { NO_EFFECTS, type PolicyEffects } from '../run/policy-effects.ts';
import type { PolicyDecisionRecord } from '../run/run-events.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';

/** A proposed call as policies see it in `onToolBatch`. */
export interface BatchCall {
  toolCallId: string;
  /** The tool name as the planner gave it. */
  name: string;
  /**
   * The input exactly as the planner sent it, before the tool boundary parsed or validated it
   * (`onToolBatch` runs first): an object, or the JSON text some models send, possibly invalid.
   * The parsed and validated value is what the tool, `onToolResult` and `requiresConfirmation`
   * get; a policy that needs it here parses it itself (issue 28 item 7).
   */
  input: unknown;
  attempt: number;
}

/** What the runtime knows of a run about to start, before its actor exists. */
export interface RunStartInput {
  runId: string;
  agent: { id: string; name: string };
  sessionId?: string;
  labels: Record<string, string>;
  /** The run's caps (the runtime's, lowered by the run's own). */
  caps: Caps;
  /** Tools the app disabled: id → `app`. */
  disabledTools: Record<string, string>;
  /** Epoch ms. */
  startedAt: number;
}

/** What policies decided when a run starts: the run's initial caps, disabled tools and labels. */
export interface RunStartEffects {
  decisions: PolicyDecisionRecord[];
  caps: Caps;
  disabledTools: Record<string, string>;
  labels: Record<string, string>;
}

/**
 * Where the run consults policies (docs/policies.md): when it starts (optional; synchronous, so its
 * disabled tools are never advertised), before a batch is admitted, and after its results (every
 * result through `onToolResult`, every hint through `onRetryHint`). The run machine only knows
 * this port; the engine behind it (`createPolicyEngine`) applies the merge rules.
 */
export interface PolicyRunner {
  /** @throws PolicyError when a policy fails the run before it starts. */
  onRunStart?(input: RunStartInput): RunStartEffects;
  onToolBatch(context: RunContext, calls: BatchCall[]): Promise<PolicyEffects>;
  onResults(context: RunContext, results: ToolResultJSON[], hints: PolicyRetryHint[]): Promise<PolicyEffects>;
  /** Calls of the batch in doubt (docs/durability.md §Effects); absent: each waits for a person. */
  onInDoubt?(context: RunContext, calls: readonly InDoubtCall[]): Promise<PolicyEffects>;
  /** Whether {@link onInDoubt} has anything to ask; absent: it is asked whenever it exists. */
  consultsInDoubt?(): boolean;
}

/** The runner of a runtime with no policies. */
export const noPolicies: PolicyRunner = {
  onToolBatch: async () => NO_EFFECTS,
  onResults: async () => NO_EFFECTS,
};
