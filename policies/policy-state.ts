import type { AwaitClarification } from '../run/planner.ts';
import type { JsonValue } from './policy-json.ts';

/**
 * The policy engine's per-run state, kept as JSON in the run context's `policyState` and so in
 * every persisted snapshot (docs/policies.md, §7). The engine itself holds nothing between calls: a run
 * restored in another process carries on with the same memory.
 */
export interface PolicyEngineState {
  version: 1;
  /** Each policy's own memory (`ctx.state`), by policy name. */
  memory: Record<string, JsonValue>;
  /** Tool id → the policies that disabled it (several may; it stays disabled until all enable it). */
  disabledBy: Record<string, string[]>;
  /**
   * Effects decided before a batch (`onToolBatch`) that concern the next planner turn: they take
   * effect when the batch's results are reviewed. `backoffUntil` is epoch ms.
   */
  carry?: { backoffUntil?: number; awaitClarification?: AwaitClarification };
}

export function emptyEngineState(): PolicyEngineState {
  return { version: 1, memory: {}, disabledBy: {} };
}

/** Reads the engine's state from a run context's `policyState`; anything else starts empty. */
export function readEngineState(value: unknown): PolicyEngineState {
  if (typeof value !== 'object' || value === null) return emptyEngineState();
  const state = value as Partial<PolicyEngineState>;
  if (state.version !== 1) return emptyEngineState();
  return structuredClone({
    version: 1,
    memory: isObject(state.memory) ? state.memory : {},
    disabledBy: isObject(state.disabledBy) ? (state.disabledBy as Record<string, string[]>) : {},
    ...(isObject(state.carry) ? { carry: state.carry } : {}),
  });
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
