import type { Hono } from 'hono';
import type { InspectionStore, RunQuery } from '../inspection-store.ts';
import { logLimit } from './first-page.ts';

/** What the read routes need besides the store. */
export interface ReadRouteOptions {
  /** Run summaries in a page when `?limit` is absent. */
  pageSize: number;
  /** Log entries sent when a run is opened. */
  logPageSize: number;
  /** Points the `/events` stream `streamId` (the `hello`'s id) at the run `key`: its `log` and `context` go there from now on. */
  openOnStream(streamId: string, key: string): void;
}

/**
 * The GET routes of the inspector's API (JSON): `/api/runs` (a page of summaries), `/api/runs/:key`
 * (a run opened), `/api/runs/:key/log`, `/api/runs/:key/frame?seq=N` (time travel), `/api/graph`.
 * An unknown run is a 404 with `{ error }`.
 */
export function readRoutes(app: Hono, store: InspectionStore, options: ReadRouteOptions): void {
  app.get('/api/runs', (c) => {
    const query: RunQuery = {
      limit: Number(c.req.query('limit') ?? options.pageSize) || options.pageSize,
      before: c.req.query('before') ?? null,
    };
    const status = c.req.query('status');
    const text = c.req.query('q');
    if (status) query.status = status;
    if (text) query.text = text;
    return c.json(store.page(query));
  });
  // Opening a run: its context and log, and (with `stream`) its live `log` and `context`
  // messages on that stream from now on. Entries recorded between the two carry higher seqs.
  app.get('/api/runs/:key', (c) => {
    const key = c.req.param('key');
    const run = store.run(key);
    if (!run) return c.json({ error: 'no such run (evicted past maxRuns?)' }, 404);
    options.openOnStream(c.req.query('stream') ?? '', key);
    const { context, ...summary } = run;
    // Its newest log entries only (issue 27 item 1): a long run's whole log (up to maxLog, 1,000
    // entries, ~300 KB for 360 calls) took ~75 ms to draw; the page asks for earlier ones.
    const page = store.logPage(key, { limit: logLimit(c.req.query('limit')) ?? options.logPageSize });
    return c.json({ run: summary, context, ...page });
  });
  // A run's log: whole, or (`limit`, `before` a seq) the page before an entry, with `earlier`.
  app.get('/api/runs/:key/log', (c) => {
    const key = c.req.param('key');
    if (!store.summary(key)) return c.json({ error: 'no such run' }, 404);
    const limit = logLimit(c.req.query('limit'));
    if (limit === undefined) return c.json({ key, log: store.log(key) });
    const before = Number(c.req.query('before'));
    return c.json({ key, ...store.logPage(key, { limit, ...(Number.isInteger(before) ? { before } : {}) }) });
  });
  // Time travel: the run as it was at a log entry.
  app.get('/api/runs/:key/frame', (c) => {
    const seq = Number(c.req.query('seq'));
    if (!Number.isInteger(seq)) return c.json({ error: 'seq must be an integer' }, 400);
    const frame = store.frameAt(c.req.param('key'), seq);
    return frame ? c.json(frame) : c.json({ error: 'no snapshot kept that far back' }, 404);
  });
  app.get('/api/graph', (c) => c.json(store.graph));
}
