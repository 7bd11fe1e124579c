import type { RunInput } from '../machines/run-context.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';

/** The workflow's name, as workers register it and clients start it. */
export const RUN_WORKFLOW = 'toolwardenRun';

/** What `temporalRuntime().start` starts a workflow with. */
export interface RunWorkflowInput {
  run: RunInput;
  /** Start-to-close timeout of each tool's activity, ms, by tool id (its `timeoutMs`). */
  toolTimeoutsMs?: Record<string, number>;
  /** For tools without one. Default 60 000. */
  defaultToolTimeoutMs?: number;
}

/** The `status` query's answer. */
export interface RunWorkflowStatus {
  /** `running`, `awaiting`, `completed`, `failed`, `canceled`. */
  status: string;
  /** The state value, dotted: `awaiting.clarification`. */
  state: string;
  /** What the run awaits (kind and id), when it does. */
  awaiting: { kind: string; id?: string } | null;
  /** Events emitted so far (the `events` query's positions run 0 … eventCount − 1). */
  eventCount: number;
}

/** The workflow's result: the run's outcome. */
export interface RunWorkflowResult {
  status: 'completed' | 'failed' | 'canceled';
  finalResponse?: { text: string; data?: unknown };
  error?: { name: string; message: string };
  toolResults: ToolResultJSON[];
  /** Tokens the planner turns reported, summed (`PlanResult.usage`). */
  usage?: { inputTokens: number; outputTokens: number };
  events: number;
}

/** The `events` query's answer: events from a position on, and the next position. */
export interface RunEventsPage {
  events: RunEvent[];
  next: number;
  /** Events older than the buffer kept in the workflow: the first position still kept. */
  first: number;
}
