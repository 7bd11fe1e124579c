import type { InDoubtResolution } from '../../machines/run-context.ts';
import type { RunEvent } from '../../run/run-events.ts';
import type { ProvidedToolResult } from '../../runtime/run-handle.ts';
import type { StoredRun } from '../../stores/run-store.ts';
import type { InspectionStore } from '../inspection-store.ts';
import type { InspectorPageOptions } from '../inspector-page.ts';

/**
 * How the page answers a run that waits (the runtime's by-id methods: `runtime.provideClarification`,
 * `provideToolResults`, `confirm`). Each throws for an answer that does not fit what the run awaits.
 */
export interface InspectorAnswers {
  provideClarification(runId: string, answer: { id: string; answer: string }): Promise<unknown>;
  provideToolResults(runId: string, results: ProvidedToolResult[]): Promise<unknown>;
  confirm(
    runId: string,
    answer: { id: string; approved: boolean; by?: string; reason?: string; edits?: Record<string, unknown> },
  ): Promise<unknown>;
  /**
   * `runtime.resolveInDoubt` (issue 34 item 3): settles each call the run holds in doubt, by
   * `toolCallId`. Throws (RunAnswerError) for a run not in doubt, a call left out or unknown, an
   * output that fails the tool's output schema; nothing is applied then.
   */
  resolveInDoubt?(runId: string, resolutions: Record<string, InDoubtResolution>): Promise<unknown>;
  /**
   * `runtime.list({ awaiting: true })` (issue 35 item 6): the store's waiting runs, read without
   * restoring them; the inspector lists those it does not host (the approval desk).
   */
  list?(filter: { awaiting: true }): Promise<StoredWaitingRun[]>;
  /** `runtime.load(runId)`: the stored run (its snapshot), for comparing two runs (issue 38 item 3). */
  load?(runId: string): Promise<StoredRun | undefined>;
  /** `runtime.events(runId, { follow: false })`: a stored run's events, for its log on the page. */
  events?(runId: string, options: { follow: false }): AsyncIterable<{ event: RunEvent }>;
  /** `runtime.fork` (issue 27 item 4): a new run from the step at the run's event `atEvent`; resolves with its handle. */
  fork?(
    runId: string,
    options: { atEvent: number; edit?: { input: unknown } | { answer: string } },
  ): Promise<{ runId: string }>;
}

/** What the inspector reads of a stored run waiting for an answer (`StoredRun`, stores/run-store.ts). */
export interface StoredWaitingRun {
  runId: string;
  agentId: string;
  /** The persisted snapshot, as the store keeps it. */
  snapshot: unknown;
}

/** The header a write from the page must carry: a cross-site form or `fetch` cannot send it without a CORS preflight, which the server never grants. */
export const ANSWER_HEADER = 'x-toolwarden-inspector';

export interface InspectorServerOptions {
  store: InspectionStore;
  /** The chart drawn on the page: `toSvg(graph, { embedStyle: false })`. */
  svg: string;
  /** The simple view (`toSimpleGraph`) drawn, and its maps; absent: the page has the full chart only. */
  simple?: InspectorPageOptions['simple'];
  /** Where answers from the page go; absent or `readOnly`: the page shows what a run awaits, without forms. */
  answers?: InspectorAnswers;
  /** Serve the page without answering (every write refused with 403). Default false. */
  readOnly?: boolean;
  /** A Jaeger UI (`http://127.0.0.1:16686`): the page links each run's trace there. */
  jaegerUrl?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** A loopback address: `127.0.0.1` (default), `::1` or `localhost`. */
  host?: string;
  /** The secret every request must carry as `?token=`. Default: 24 random bytes, base64url. */
  token?: string;
  /** Largest WebSocket message accepted, bytes. Default 4 MiB. */
  maxWsPayload?: number;
  /** SSE comment interval keeping idle streams open through proxies, ms. Default 15 000. */
  heartbeatMs?: number;
  /** Live `/events` streams at once; more get 503. Default 16. */
  maxSseClients?: number;
  /**
   * Bytes queued for one `/events` client that has not read them yet; past this the client is
   * dropped: it is sent a `dropped` message saying why (the page shows it and offers to
   * reconnect) and the stream ends. Default 8 MiB.
   */
  maxSseBufferedBytes?: number;
  /** Run summaries in the `hello` page (and the default page of `GET /api/runs`). Default 100. */
  pageSize?: number;
  /** Log entries sent when a run is opened (its newest; the page asks for earlier ones). Default 200. */
  logPageSize?: number;
  /** Called as each page connects (`/events`), before its `hello`: the plugin lists the store's waiting runs then. */
  onClient?: () => void;
}
