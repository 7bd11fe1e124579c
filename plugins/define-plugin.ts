import type { InspectionEvent, Observer } from 'xstate';
import { isPolicy, type Policy } from '../policies/define-policy.ts';
import type { PlanInput, PlannerModel, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { Tool } from '../tools/define-tool.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { ToolResult } from '../tools/tool-result.ts';

/** What a plugin knows of the run a hook belongs to. */
export interface RunInfo {
  runId: string;
  agent: { id: string; name: string };
  sessionId?: string;
  labels: Record<string, string>;
  /**
   * W3C trace context (`traceparent`, `tracestate`) kept in the run's snapshot, so a run resumed
   * after awaiting or a restart continues its trace (docs/telemetry.md). A plugin may set it: in
   * `onRunStart('start')` (the run's input), or in `onEvent` of a run still going (the host stores
   * it with the run's next write; the telemetry plugin's latest segment).
   */
  traceContext: Record<string, string> | null;
}

/** What {@link Plugin.onStateChange} is told: the state delta of one step boundary. */
export interface RunStateChange {
  /**
   * The run context's top-level keys the step changed (names of the run machine's context, such
   * as `messages`, `batch`, `caps`), found by identity: the machine's assigns replace what they
   * change and keep the rest.
   */
  changedKeys: readonly string[];
  /**
   * The run's version in its store once the snapshot holding this change is written (the write
   * may carry later steps too). Rejects when it never will be (another owner took the run).
   */
  version(): Promise<number>;
}

/** One tool call on its way to `execute`, as `wrapToolCall` sees it. */
export interface ToolInvocation {
  tool: Tool;
  /** The validated input; a plugin fills the tool's injected fields here (docs/tool-boundary.md). */
  input: Record<string, unknown>;
  meta: ToolCallMeta;
  labels: Record<string, string>;
  /** Injected fields the model tried to set, dropped by the boundary. */
  droppedFields: string[];
  run: RunInfo;
  signal?: AbortSignal;
  /**
   * The person who approved the call edited its input (`input` above is the edit, validated):
   * the validated input before the edit and who made it (approve with edits).
   */
  edited?: { original: Record<string, unknown> | undefined; by?: string };
  /**
   * What an approver is shown of the call (its tool's `summary`, `risk`, `permissions`,
   * docs/policies.md §Permissions and risk) and how it was approved: `person` (a confirmation),
   * `remembered` (a remembered approval, §Sticky approvals); absent `approvedBy`: it needed none.
   */
  approval?: {
    summary?: string;
    risk?: 'low' | 'medium' | 'high';
    permissions?: string[];
    approvedBy?: 'person' | 'remembered';
  };
}

/** One planner turn, as `wrapPlan` sees it. */
export interface PlanInvocation {
  kind: 'start' | 'resume' | 'finalize';
  input: PlanInput | PlanResumeInput;
  run: RunInfo;
  /** The planner's model, when it names one (`Planner.model`: `modelPlanner` does). */
  model?: PlannerModel;
  /**
   * What the run's earlier turns cost (`PlanResult.cost` summed, kept in the run's snapshot, so
   * a restored run counts them): `spent` in `currency` units. Absent until a turn was priced.
   */
  cost?: { currency: string; spent: number; limit?: number };
}

/**
 * A bundle of what an integration needs (docs/policies.md): tools, policies, and hooks around tool calls,
 * planner turns and run events. Telemetry and the inspector are plugins themselves.
 *
 * Hooks run in registration order, outermost first. A hook that throws is isolated: an
 * `onEvent` or `onRunStart` throw is reported (the runtime's `onError`) and ignored; a
 * `wrapToolCall`/`wrapPlan` throw fails that call or turn like any other error.
 */
export interface Plugin {
  name: string;
  /** Policies this plugin adds, after the runtime's own (`definePolicy` values), in this order. */
  policies?: Policy[];
  tools?: Tool[];
  wrapToolCall?(
    call: ToolInvocation,
    next: (call: ToolInvocation) => Promise<ToolResult>,
  ): Promise<ToolResult>;
  wrapPlan?(plan: PlanInvocation, next: (plan: PlanInvocation) => Promise<PlanResult>): Promise<PlanResult>;
  /** Called when a run segment starts (`start` or `resume`), before the first step. */
  onRunStart?(run: RunInfo, how: 'start' | 'resume'): void;
  /** Every RunEvent of every run, in order. */
  onEvent?(event: RunEvent, run: RunInfo): void;
  /**
   * A step boundary changed the run's state (its context), called before the snapshot is
   * written; never for a restore, nor for a step that changed nothing (docs/telemetry.md:
   * `gen_ai.execution.state.changed`).
   */
  onStateChange?(change: RunStateChange, run: RunInfo): void;
  /** An XState inspection observer that receives every actor's inspection events. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/** Thrown by {@link definePlugin} for a plugin that can never work. */
export class PluginDefinitionError extends TypeError {
  override readonly name = 'PluginDefinitionError';
}

const HOOKS = ['wrapToolCall', 'wrapPlan', 'onRunStart', 'onEvent', 'onStateChange'] as const;

/**
 * Checks and types a plugin (docs/policies.md `definePlugin`): a bundle of policies, tools and hooks an
 * integration needs. Its policies run after the runtime's own, plugins in registration order;
 * its tools join the runtime's catalog.
 *
 * ```ts
 * const audit = definePlugin({
 *   name: 'audit',
 *   policies: [circuitBreaker({ failures: 3 })],
 *   async wrapToolCall(call, next) {
 *     const result = await next(call);
 *     log.info({ tool: call.tool.id, toolCallId: call.meta.toolCallId, ok: !result.error });
 *     return result;
 *   },
 *   onEvent(event) { if (event.type === 'policy_decision') log.info(event.decision); },
 * });
 * createRuntime({ ..., plugins: [audit] });
 * ```
 *
 * @throws PluginDefinitionError for a missing name, a policy not built with `definePolicy`, a
 *   tool not built with `defineTool`, or a hook that is not a function.
 */
export function definePlugin(plugin: Plugin): Plugin {
  if (typeof plugin?.name !== 'string' || plugin.name.trim() === '') {
    throw new PluginDefinitionError('A plugin needs a name');
  }
  plugin.policies?.forEach((policy, index) => {
    if (!isPolicy(policy)) {
      throw new PluginDefinitionError(
        `Plugin "${plugin.name}": policies[${index}] is not a policy; build it with definePolicy()`,
      );
    }
  });
  plugin.tools?.forEach((tool, index) => {
    if ((tool as { kind?: unknown } | undefined)?.kind !== 'tool') {
      throw new PluginDefinitionError(
        `Plugin "${plugin.name}": tools[${index}] is not a tool; build it with defineTool()`,
      );
    }
  });
  for (const hook of HOOKS) {
    if (plugin[hook] !== undefined && typeof plugin[hook] !== 'function') {
      throw new PluginDefinitionError(`Plugin "${plugin.name}": ${hook} must be a function`);
    }
  }
  return plugin;
}

/** Composes `wrap` hooks so the first plugin is the outermost. */
export function composeWrappers<C, R>(
  wrappers: ((call: C, next: (call: C) => Promise<R>) => Promise<R>)[],
  last: (call: C) => Promise<R>,
): (call: C) => Promise<R> {
  return wrappers.reduceRight<(call: C) => Promise<R>>((next, wrap) => (call) => wrap(call, next), last);
}
