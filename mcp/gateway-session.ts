import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { ToolResult } from '../tools/tool-result.ts';

/** An MCP `tools/call` result (the fields the gateway writes). */
export interface McpToolAnswer {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Key of a failed call's `{ error, retryHint }` in the result's `_meta`. */
export const RETRY_DETAILS_KEY = 'toolwarden/retry';
/** Key of {@link SessionEnded} in the `_meta` of a call an ended session refuses. */
export const SESSION_ENDED_KEY = 'toolwarden/sessionEnded';

/**
 * Why a gateway session ended, as a client reads it from `_meta["toolwarden/sessionEnded"]`:
 * `reason` is the run's finalize reason (`tool_cap`, `consecutive_failures`, `time_budget`, ...)
 * or `idle_timeout`, `client_disconnected`, `gateway_closed`, `run_completed`, `run_failed`.
 */
export interface SessionEnded {
  reason: string;
  message: string;
}

interface Pending {
  key: string;
  name: string;
  args: Record<string, unknown>;
  answer: (result: McpToolAnswer) => void;
}

/**
 * One MCP client session as a toolwarden run (docs/mcp.md §Gateway): the client's `tools/call`
 * requests are that run's planner. Each planner turn waits for the calls the client has sent and
 * proposes them as one batch; the run checks them (boundary, `onToolBatch` policies), executes
 * them, has policies review the results (circuit breaker, rate-limit backoff, ...) and hands
 * them to the next turn, which answers the client. So caps, policy state and disabled tools are
 * per client session, and every call is a span of the session's trace.
 */
export class GatewaySession {
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<string, Pending>();
  private wake: (() => void) | undefined;
  private ended: SessionEnded | undefined;
  private calls = 0;

  constructor(
    readonly runId: string,
    /** Whether a tool declares an output schema (its error answers keep `structuredContent` out). */
    private readonly hasOutputSchema: (toolId: string) => boolean = () => false,
  ) {}

  /** A client's call; resolves with the answer the run gives it (never rejects). */
  /** Why the session ended, once it has. */
  get endedBecause(): SessionEnded | undefined {
    return this.ended;
  }

  call(name: string, args: Record<string, unknown>): Promise<McpToolAnswer> {
    if (this.ended !== undefined) return Promise.resolve(endedAnswer(this.ended));
    return new Promise((answer) => {
      this.queue.push({ key: `mcp-${++this.calls}`, name, args, answer });
      this.wake?.();
    });
  }

  /** Ends the session: calls still waiting are answered with why. Later calls change nothing. */
  end(reason: string, message: string): void {
    if (this.ended !== undefined) return;
    this.ended = { reason, message };
    for (const pending of [...this.queue.splice(0), ...this.inFlight.values()]) {
      pending.answer(endedAnswer(this.ended));
    }
    this.inFlight.clear();
    this.wake?.();
    this.onEnded?.(this.ended);
  }

  /** Told once when the session ends (the gateway then serves it no tools). */
  onEnded: ((ended: SessionEnded) => void) | undefined;

  /** The planner turn: answer the last batch, then wait for the client's next calls. */
  async plan(input: PlanInput | PlanResumeInput, results: ToolResult[]): Promise<PlanResult> {
    for (const result of results) {
      const pending = this.inFlight.get(result.providerToolCallId ?? '');
      if (pending === undefined) continue;
      this.inFlight.delete(pending.key);
      pending.answer(toAnswer(result, this.hasOutputSchema(result.name)));
    }
    const finalize = (input as PlanResumeInput).finalize;
    if (finalize !== undefined) this.end(finalize.reason, `the run finalized (${finalize.reason})`);
    while (this.queue.length === 0 && this.ended === undefined && !input.signal?.aborted) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        input.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      this.wake = undefined;
    }
    if (this.ended !== undefined || input.signal?.aborted) {
      return { finalResponse: { text: `MCP session ended: ${this.ended?.message ?? 'time budget'}` } };
    }
    const batch = this.queue.splice(0);
    for (const pending of batch) this.inFlight.set(pending.key, pending);
    return {
      toolCalls: batch.map((pending) => ({
        name: pending.name,
        input: pending.args,
        toolCallId: pending.key,
      })),
    };
  }
}

/** The planner of a gateway runtime: each run is one session, found by run id. */
export function gatewayPlanner(sessions: ReadonlyMap<string, GatewaySession>): Planner {
  const of = (runId: string) => {
    const session = sessions.get(runId);
    if (!session) throw new Error(`No MCP session for run ${runId}`);
    return session;
  };
  return {
    planStart: (input) => of(input.runId).plan(input, []),
    planResume: (input) => of(input.runId).plan(input, input.toolResults),
  };
}

/**
 * A ToolResult as MCP: a success as text (and `structuredContent` for an object result); a
 * failure as `isError` whose text a model can act on (the message, then the hint's missing
 * fields, issues and example), with the ToolError and the RetryHint in `structuredContent` (unless
 * the tool declares an output schema) and in `_meta` under {@link RETRY_DETAILS_KEY}.
 */
export function toAnswer(result: ToolResult, hasOutputSchema = false): McpToolAnswer {
  if (result.error) {
    const hint = result.retryHint;
    const lines = [result.error.message];
    if (hint) {
      lines.push(`reason: ${hint.reason}`);
      if (hint.missingFields.length > 0) lines.push(`missing fields: ${hint.missingFields.join(', ')}`);
      for (const issue of hint.issues ?? []) lines.push(`- ${issue.path || '(input)'}: ${issue.message}`);
      if (hint.exampleInput !== undefined) lines.push(`example input: ${JSON.stringify(hint.exampleInput)}`);
      if (hint.retryAfterMs !== undefined) lines.push(`retry after ${hint.retryAfterMs} ms`);
    }
    const details = JSON.parse(
      JSON.stringify({ error: result.error, ...(hint === undefined ? {} : { retryHint: hint }) }),
    );
    return {
      isError: true,
      content: [{ type: 'text', text: lines.join('\n') }],
      // A client checks structuredContent against a declared outputSchema even on errors (the
      // SDK's Client does), so there the details travel in `_meta` only.
      ...(hasOutputSchema ? {} : { structuredContent: details }),
      _meta: { [RETRY_DETAILS_KEY]: details },
    };
  }
  const value = result.result;
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value);
  return {
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: value as Record<string, unknown> } : {}),
  };
}

/** A call an ended session refuses: the reason in text and, structured, in `_meta`. */
function endedAnswer(ended: SessionEnded): McpToolAnswer {
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `This MCP session has ended: ${ended.message}. Open a new session to go on.`,
      },
    ],
    _meta: { [SESSION_ENDED_KEY]: { ...ended } },
  };
}
