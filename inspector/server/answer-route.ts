import type { Hono } from 'hono';
import { ApprovalEditRefusedError } from '../../runtime/approval-edits.ts';
import type { ProvidedToolResult } from '../../runtime/run-handle.ts';
import type { InspectorServerOptions } from './inspector-server-options.ts';
import { acceptWrite, refusedByRun } from './write-guard.ts';

/**
 * `POST /api/runs/:key/answer` (issue 15): answers what the run awaits, through the runtime's own
 * validation. Bodies: `{ kind: 'clarification', id, answer }`, `{ kind: 'confirmation', id,
 * approved, reason?, edits? }` (`edits`: toolCallId → input, issue 24 item 4), `{ kind:
 * 'toolResults', results }`. 200 `{ ok: true }`; 400 for another shape; 422 `{ error, toolCallId,
 * retryHint }` for a refused edit (the run still waits); 409 for an answer the run refused.
 * Guarded by {@link acceptWrite} with the header value `answer`.
 */
export function answerRoute(app: Hono, options: InspectorServerOptions): void {
  app.post('/api/runs/:key/answer', async (c) => {
    const answers = options.readOnly ? undefined : options.answers;
    const accepted = await acceptWrite(c, options.store, {
      header: 'answer',
      enabled: answers !== undefined,
      refused: 'answers are not accepted here',
      fromPage: 'answers are accepted',
    });
    if (accepted instanceof Response) return accepted;
    const { run, body } = accepted;
    try {
      if (body.kind === 'clarification' && typeof body.id === 'string' && typeof body.answer === 'string') {
        await answers!.provideClarification(run.runId, { id: body.id, answer: body.answer });
      } else if (
        body.kind === 'confirmation' &&
        typeof body.id === 'string' &&
        typeof body.approved === 'boolean'
      ) {
        // Approve with edits (issue 24 item 4, safety): `edits` (toolCallId → input) pass the
        // tool boundary in the run handle; a refused edit is a 422 with the hint, the run still waits.
        const edits = body.edits;
        await answers!.confirm(run.runId, {
          id: body.id,
          approved: body.approved,
          by: 'inspector',
          ...(typeof body.reason === 'string' && body.reason !== '' ? { reason: body.reason } : {}),
          ...(edits !== null && typeof edits === 'object' && !Array.isArray(edits)
            ? { edits: edits as Record<string, unknown> }
            : {}),
        });
      } else if (body.kind === 'toolResults' && Array.isArray(body.results)) {
        await answers!.provideToolResults(run.runId, body.results as ProvidedToolResult[]);
      } else {
        return c.json({ error: 'expected { kind: clarification | confirmation | toolResults, ... }' }, 400);
      }
    } catch (error) {
      if (error instanceof ApprovalEditRefusedError) {
        return c.json(
          { error: error.message, toolCallId: error.toolCallId, retryHint: error.retryHint ?? null },
          422,
        );
      }
      return refusedByRun(c, error);
    }
    return c.json({ ok: true });
  });
}
