import type { Hono } from 'hono';
import type { InDoubtResolution } from '../../machines/run-context.ts';
import type { InspectorServerOptions } from './inspector-server-options.ts';
import { acceptWrite, refusedByRun } from './write-guard.ts';

/**
 * `POST /api/runs/:key/in-doubt` (issue 34 item 3): `{ resolutions: { [toolCallId]: { status:
 * 'done', output } | { status: 'not_done' } | { status: 'failed', error: { message } } } }`
 * settles the calls the run holds in doubt through `runtime.resolveInDoubt`, whose own checks
 * decide (every call resolved, known ids, the output through the tool's output schema). 200
 * `{ ok: true }`; 400 without a `resolutions` object; 409 `{ error }` for what the run refused,
 * which leaves it waiting. Guarded by `acceptWrite` like the other answers (header value `answer`).
 */
export function inDoubtRoute(app: Hono, options: InspectorServerOptions): void {
  app.post('/api/runs/:key/in-doubt', async (c) => {
    const answers = options.readOnly ? undefined : options.answers;
    const accepted = await acceptWrite(c, options.store, {
      header: 'answer',
      enabled: answers?.resolveInDoubt !== undefined,
      refused: 'calls in doubt are not resolved here',
      fromPage: 'resolutions are accepted',
    });
    if (accepted instanceof Response) return accepted;
    const { run, body } = accepted;
    const resolutions = body.resolutions;
    if (resolutions === null || typeof resolutions !== 'object' || Array.isArray(resolutions)) {
      return c.json({ error: 'expected { resolutions: { [toolCallId]: { status, ... } } }' }, 400);
    }
    try {
      await answers!.resolveInDoubt!(run.runId, resolutions as Record<string, InDoubtResolution>);
    } catch (error) {
      return refusedByRun(c, error);
    }
    return c.json({ ok: true });
  });
}
