import type { Hono } from 'hono';
import type { InspectorServerOptions } from './inspector-server-options.ts';
import { acceptWrite, refusedByRun } from './write-guard.ts';

/**
 * `POST /api/runs/:key/fork` (issue 27 item 4): `{ seq, edit? }` starts a new run from the step at
 * the run's log entry `seq` (turned here into the run's own event seq, `runtime.fork({ atEvent })`),
 * `edit` being `{ input }` or `{ answer: string }`. 200 `{ ok: true, runId }`; 400 for a seq not
 * kept or another edit; 409 when the runtime refuses. Guarded by {@link acceptWrite} with the
 * header value `fork`.
 */
export function forkRoute(app: Hono, options: InspectorServerOptions): void {
  app.post('/api/runs/:key/fork', async (c) => {
    const fork = options.readOnly ? undefined : options.answers?.fork?.bind(options.answers);
    const accepted = await acceptWrite(c, options.store, {
      header: 'fork',
      enabled: fork !== undefined,
      refused: 'runs are not forked here',
      fromPage: 'forks are started',
    });
    if (accepted instanceof Response) return accepted;
    const { run, body } = accepted;
    const atEvent = typeof body.seq === 'number' ? options.store.runEventSeq(run.key, body.seq) : undefined;
    if (atEvent === undefined)
      return c.json({ error: 'expected { seq: a log entry of this run kept here }' }, 400);
    const edit = body.edit as { input?: unknown; answer?: unknown } | undefined;
    if (
      edit !== undefined &&
      (edit === null || typeof edit !== 'object' || (!('input' in edit) && typeof edit.answer !== 'string'))
    ) {
      return c.json({ error: 'edit: { input } or { answer: string }' }, 400);
    }
    try {
      const child = await fork!(run.runId, {
        atEvent,
        ...(edit === undefined
          ? {}
          : { edit: 'input' in edit ? { input: edit.input } : { answer: edit.answer as string } }),
      });
      return c.json({ ok: true, runId: child.runId });
    } catch (error) {
      return refusedByRun(c, error);
    }
  });
}
