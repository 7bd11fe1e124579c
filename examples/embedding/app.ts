/**
 * The HTTP face of a toolwarden runtime (docs/architecture.md §Uses "embedding actors in apps"), as a Hono app:
 *
 * | route                              | does                                                            |
 * |------------------------------------|-----------------------------------------------------------------|
 * | `POST /runs`                       | starts a run: `{ text }` or `{ messages }`, `sessionId?`, `labels?` → 201 `{ runId }` |
 * | `GET /runs?status=awaiting`        | the stored runs, newest first                                   |
 * | `GET /runs/:id`                    | one run: status, state, what it awaits, its final response      |
 * | `GET /runs/:id/events`             | its events as server-sent events: the stored log, then live; `id:` is the log's seq (`Last-Event-ID` or `?after=` resumes) |
 * | `POST /runs/:id/clarification`     | `{ id, answer }`                                                |
 * | `POST /runs/:id/tool-results`      | `{ results: [{ toolCallId, result } \| { toolCallId, error }] }` |
 * | `POST /runs/:id/confirmation`      | `{ id, approved, by?, reason? }`                                |
 * | `POST /runs/:id/cancel`            | `{ reason? }`                                                   |
 *
 * Answers go through the runtime by run id, so they work whether the run is live in this process,
 * was evicted from memory, or was stored before a restart. Errors: 400 bad body, 404 unknown run,
 * 409 the answer does not fit what the run awaits or another process holds the run.
 *
 * @module
 */

import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import {
  MessageSchema,
  RUN_STATUSES,
  RunAnswerError,
  type RunAwaiting,
  RunConflictError,
  type RunContext,
  type RunHandle,
  RunNotFoundError,
  type RunStatus,
  type Runtime,
  type StoredRun,
  stateName,
} from 'toolwarden';
import { z } from 'zod';

const StartBody = z.union([
  z.object({
    text: z.string().min(1),
    sessionId: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  z.object({
    messages: z.array(MessageSchema).min(1),
    sessionId: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
]);
const ClarificationBody = z.object({ id: z.string(), answer: z.string().min(1) });
const ToolResultsBody = z.object({
  results: z.array(
    z.object({
      toolCallId: z.string(),
      result: z.unknown().optional(),
      error: z.object({ message: z.string(), recoverable: z.boolean().optional() }).optional(),
    }),
  ),
});
const ConfirmationBody = z.object({
  id: z.string(),
  approved: z.boolean(),
  by: z.string().optional(),
  reason: z.string().optional(),
});
const CancelBody = z.object({ reason: z.string().optional() });

export function createEmbeddingApp(runtime: Runtime): Hono {
  const app = new Hono();

  app.onError((error, c) => {
    if (error instanceof z.ZodError) return c.json({ error: 'bad_request', issues: error.issues }, 400);
    if (error instanceof SyntaxError) return c.json({ error: 'bad_request', message: error.message }, 400);
    if (error instanceof RunNotFoundError) return c.json({ error: 'not_found', message: error.message }, 404);
    if (error instanceof RunAnswerError)
      return c.json({ error: 'answer_refused', message: error.message }, 409);
    if (error instanceof RunConflictError) {
      // Held by another live instance, or by this server's own predecessor that was killed: its
      // lease must lapse first (one live owner per run, docs/durability.md §Guarantees). Say when.
      const seconds =
        error.leaseUntil === undefined
          ? undefined
          : Math.max(1, Math.ceil((error.leaseUntil - Date.now()) / 1000));
      if (seconds !== undefined) c.header('Retry-After', String(seconds));
      return c.json({ error: 'held_elsewhere', message: error.message, owner: error.owner }, 409);
    }
    console.error('[embedding] request failed:', error);
    return c.json({ error: 'internal', message: String(error) }, 500);
  });

  app.post('/runs', async (c) => {
    const body = StartBody.parse(await c.req.json());
    const messages = 'text' in body ? [{ role: 'user' as const, content: body.text }] : body.messages;
    const run = runtime.start({ messages, sessionId: body.sessionId, labels: body.labels });
    return c.json({ runId: run.runId, status: run.status, state: run.state }, 201);
  });

  app.get('/runs', async (c) => {
    const status = c.req
      .queries('status')
      ?.filter((value): value is RunStatus => RUN_STATUSES.includes(value as RunStatus));
    const runs = await runtime.list(status === undefined ? {} : { status });
    return c.json({ runs: runs.map(summary) });
  });

  app.get('/runs/:id', async (c) => {
    const runId = c.req.param('id');
    const live = runtime.get(runId);
    if (live !== undefined) return c.json(describeLive(live));
    return c.json(summary(await load(runId)));
  });

  app.get('/runs/:id/events', async (c) => {
    const runId = c.req.param('id');
    // 404 before the stream starts; a run just started here may not be written yet.
    if (runtime.get(runId) === undefined) await load(runId);
    const after = Number(c.req.header('Last-Event-ID') ?? c.req.query('after') ?? 0);
    return streamSSE(c, async (stream) => {
      const abort = new AbortController();
      stream.onAbort(() => abort.abort());
      for await (const record of runtime.events(runId, {
        afterSeq: Number.isSafeInteger(after) && after > 0 ? after : 0,
        signal: abort.signal,
      })) {
        await stream.writeSSE({
          id: String(record.seq),
          event: (record.event as { type: string }).type,
          data: JSON.stringify(record.event),
        });
      }
    });
  });

  app.post('/runs/:id/clarification', async (c) => {
    const answer = ClarificationBody.parse(await c.req.json());
    return c.json(describeLive(await runtime.provideClarification(c.req.param('id'), answer)), 202);
  });

  app.post('/runs/:id/tool-results', async (c) => {
    const { results } = ToolResultsBody.parse(await c.req.json());
    return c.json(describeLive(await runtime.provideToolResults(c.req.param('id'), results)), 202);
  });

  app.post('/runs/:id/confirmation', async (c) => {
    const answer = ConfirmationBody.parse(await c.req.json());
    return c.json(describeLive(await runtime.confirm(c.req.param('id'), answer)), 202);
  });

  app.post('/runs/:id/cancel', async (c) => {
    const { reason } = CancelBody.parse(await c.req.json().catch(() => ({})));
    return c.json(describeLive(await runtime.cancel(c.req.param('id'), reason)), 202);
  });

  /** The stored run, or RunNotFoundError (→ 404). */
  async function load(runId: string): Promise<StoredRun> {
    const stored = await runtime.load(runId);
    if (stored === undefined) throw new RunNotFoundError(runId);
    return stored;
  }

  return app;
}

/** What a client sees of a run: where it stands and what it waits for. */
function view(
  runId: string,
  status: RunStatus,
  state: string,
  awaiting: RunAwaiting | null | undefined,
  context: RunContext | undefined,
) {
  return {
    runId,
    status,
    state,
    // What to answer: kind, id, question, missing fields (clarification), calls (external tools).
    awaiting: awaiting ?? null,
    finalResponse: context?.flow.finalResponse ?? null,
    error: context?.flow.error ?? null,
  };
}

function describeLive(run: RunHandle) {
  return view(run.runId, run.status, run.state, run.awaiting, run.context);
}

/**
 * A stored run's view, without restoring it: `awaiting` as `runtime.list()`/`runtime.load()` give
 * it; the state and final response from its snapshot (`value`, `context`).
 */
function summary(run: StoredRun) {
  const snapshot = run.snapshot as { value?: unknown; context?: RunContext };
  const state = stateName(snapshot as Parameters<typeof stateName>[0]);
  return {
    ...view(run.runId, run.status, state, run.awaiting, snapshot.context),
    sessionId: run.sessionId,
    labels: run.labels ?? {},
    version: run.version,
    owner: run.owner ?? null,
    updatedAt: run.updatedAt,
  };
}
