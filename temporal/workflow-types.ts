import type { RunInput } from '../machines/run-context.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { ToolErrorJSON } from '../tools/tool-error.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import type { ArchivedTranscript } from './transcript-ref.ts';

/** The workflow's name, as workers register it and clients start it. */
export const RUN_WORKFLOW = 'toolwardenRun';

/** An activity not heard from for this long is retried on another worker (a dead worker), ms. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 5_000;

/** Tool results the workflow keeps for its result (the last ones; `toolResultCount` counts all). */
export const DEFAULT_RESULT_TOOL_RESULTS = 100;

/**
 * JSON characters of tool results the workflow's result and continue-as-new input hold at most
 * (the newest that fit, within `resultToolResults`): results up to the workers' `inlineBytes`
 * ride inline, so 100 of them could pass Temporal's 2 MB payload limit.
 */
export const DEFAULT_RESULT_BYTES = 512 * 1024;

/**
 * toolwarden's search attributes (Keyword), registered by `scripts/temporal.sh` (and on a cluster
 * by `temporal operator search-attribute create`): the run's status (`running`, `awaiting`,
 * `completed`, `failed`, `canceled`) and what it awaits (`clarification`, `confirmation`,
 * `external_tools`, `backoff`; unset otherwise). docs/temporal.md §Visibility.
 */
export const SEARCH_ATTRIBUTES = { status: 'ToolwardenStatus', awaiting: 'ToolwardenAwaiting' } as const;

/** What `temporalRuntime().start` starts a workflow with. */
export interface RunWorkflowInput {
  run: RunInput;
  /**
   * Each tool's `timeoutMs` as the client knows it, ms, by tool id: used for a call only when the
   * worker did not report the tool's timeout with the planner turn (workers of earlier releases).
   */
  toolTimeoutsMs?: Record<string, number>;
  /** For tools without one. Default 60 000. */
  defaultToolTimeoutMs?: number;
  /**
   * Heartbeat timeout of the planner turn and tool call activities, ms: a worker that dies is
   * noticed this long after its last heartbeat. Default 5 000 (docs/temporal.md §Crashes and cancel).
   */
  heartbeatTimeoutMs?: number;
  /**
   * When the workflow continues as new (docs/temporal.md §History): at an idle point (before a
   * planner turn, or while it awaits an answer) once Temporal suggests it, or once this
   * execution's history has `maxEvents` events or `maxBytes` bytes. Default: Temporal's suggestion only.
   */
  history?: { maxEvents?: number; maxBytes?: number };
  /**
   * Set by clients that read the run's status from its memo (docs/temporal.md §Visibility): the
   * workflow keeps its memo (and, with `searchAttributes`, the `SEARCH_ATTRIBUTES`) up to date.
   */
  visibility?: { searchAttributes: boolean };
  /** The last tool results the workflow's result lists. Default 100 (`DEFAULT_RESULT_TOOL_RESULTS`). */
  resultToolResults?: number;
  /** …and at most this much of their JSON, characters (the newest that fit). Default 512 KiB (`DEFAULT_RESULT_BYTES`). */
  resultBytes?: number;
  /**
   * What the Web UI lists the run with (the start's `staticSummary`: the agent and the request).
   * A continue-as-new cannot carry a static summary, so later executions begin their current
   * details with it. Absent in inputs of earlier releases.
   */
  summary?: string;
  /** Set by the workflow when it continues as new: where the previous execution stopped. */
  continued?: ContinuedRun;
}

/** What an execution hands the next when it continues as new. */
export interface ContinuedRun {
  /** The run actor's persisted snapshot (the planner turn's input refers to its context). */
  snapshot: unknown;
  /** The last events of the `events` query's buffer, from position `first`. */
  events: RunEvent[];
  first: number;
  /** The run's last tool results (`RunWorkflowInput.resultToolResults`). */
  toolResults: ToolResultJSON[];
  /** Tool results of the run so far. Absent in inputs of earlier releases: `toolResults.length`. */
  toolResultCount?: number;
  /** The last state announced by a `state_changed` event. */
  state?: string;
  /** Messages the previous execution had sent to planner turns (a worker may hold them). */
  sentMark: number;
  /**
   * The transcript's first messages, in the payload store (`transcript-archive.ts`): the
   * snapshot's `context.messages` then holds the messages from `archived.length` on. Absent: all.
   */
  archived?: ArchivedTranscript;
  /** Executions so far (this one is `executions + 1`). */
  executions: number;
  /** Tools' timeouts as workers reported them with planner turns, ms, by tool. */
  toolTimeoutsMs?: Record<string, number>;
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
  /** Which execution of the workflow answers: 1, then one more each time it continued as new. */
  execution: number;
  /**
   * Set when no worker answered the query: the status was read from the workflow's memo, as of
   * its last change of status or of what it awaits (`eventCount` and `execution` are then 0).
   */
  fromMemo?: true;
  /** What the run asks a person, when it awaits a clarification or a confirmation (from the memo). */
  question?: string;
}

/** The workflow's result: the run's outcome. */
export interface RunWorkflowResult {
  status: 'completed' | 'failed' | 'canceled';
  finalResponse?: { text: string; data?: unknown };
  /** Why the run failed, with its causes (at most MAX_CAUSE_DEPTH links), as the in-process outcome's `error`. */
  error?: ToolErrorJSON;
  /**
   * The run's last tool results, at most `resultToolResults` (100) and `resultBytes` of JSON (512 KiB), oldest first; large values by
   * reference (`$toolwardenPayload`) unless the client has the payload store. Every result is in
   * the run's events.
   */
  toolResults: ToolResultJSON[];
  /** Tool results of the whole run. */
  toolResultCount: number;
  /** Tokens the planner turns reported, summed (`PlanResult.usage`). */
  usage?: { inputTokens: number; outputTokens: number };
  events: number;
  /** Executions the run took (it continued as new `executions − 1` times). */
  executions: number;
}

/** The `events` query's answer: events from a position on, and the next position. */
export interface RunEventsPage {
  events: RunEvent[];
  next: number;
  /** Events older than the buffer kept in the workflow: the first position still kept. */
  first: number;
}
