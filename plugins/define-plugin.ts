import type { InspectionEvent, Observer } from 'xstate';
import type { PlanInput, PlanResult, PlanResumeInput } from '../runtime/planner.ts';
import type { RunEvent } from '../runtime/run-events.ts';
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
   * after awaiting or a restart continues its trace (SPEC §6). A plugin may set it.
   */
  traceContext: Record<string, string> | null;
}

/** One tool call on its way to `execute`, as `wrapToolCall` sees it. */
export interface ToolInvocation {
  tool: Tool;
  /** The validated input; a plugin fills the tool's injected fields here (SPEC §9). */
  input: Record<string, unknown>;
  meta: ToolCallMeta;
  labels: Record<string, string>;
  /** Injected fields the model tried to set, dropped by the boundary. */
  droppedFields: string[];
  run: RunInfo;
  signal?: AbortSignal;
}

/** One planner turn, as `wrapPlan` sees it. */
export interface PlanInvocation {
  kind: 'start' | 'resume' | 'finalize';
  input: PlanInput | PlanResumeInput;
  run: RunInfo;
}

/**
 * A bundle of what an integration needs (SPEC §5): tools, policies, and hooks around tool calls,
 * planner turns and run events. Telemetry and the inspector are plugins themselves.
 *
 * Hooks run in registration order, outermost first. A hook that throws is isolated: an
 * `onEvent` throw is reported and ignored; a `wrapToolCall`/`wrapPlan` throw fails that call or
 * turn like any other error.
 */
export interface Plugin<P = unknown> {
  name: string;
  /** Policies this plugin adds, after the runtime's own (`definePolicy` values). */
  policies?: P[];
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
  /** An XState inspection observer that receives every actor's inspection events. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/** Identity helper that types a plugin (SPEC §5 `definePlugin`). */
export function definePlugin<P = unknown>(plugin: Plugin<P>): Plugin<P> {
  if (!plugin.name) throw new TypeError('A plugin needs a name');
  return plugin;
}

/** Composes `wrap` hooks so the first plugin is the outermost. */
export function composeWrappers<C, R>(
  wrappers: ((call: C, next: (call: C) => Promise<R>) => Promise<R>)[],
  last: (call: C) => Promise<R>,
): (call: C) => Promise<R> {
  return wrappers.reduceRight<(call: C) => Promise<R>>((next, wrap) => (call) => wrap(call, next), last);
}
