import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import type { RunPage } from '../inspection-store.ts';
import { inspectorPage } from '../inspector-page.ts';
import type { InspectorServerOptions } from './inspector-server-options.ts';

/**
 * `GET /`: the page, its script and style inline under a fresh nonce and a CSP that lets nothing
 * load from elsewhere (offline, docs/inspection.md §Live inspector). Forms and fork buttons are drawn only when the server
 * accepts them (`answers`, not `readOnly`).
 */
export function pageRoute(app: Hono, options: InspectorServerOptions, firstPage: () => RunPage): void {
  app.get('/', (c) => {
    const nonce = randomBytes(16).toString('base64');
    c.header(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        'img-src data:',
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
    );
    return c.html(
      inspectorPage({
        svg: options.svg,
        nonce,
        machineId: options.store.graph.machineId,
        ...(options.simple === undefined ? {} : { simple: options.simple }),
        canAnswer: options.answers !== undefined && options.readOnly !== true,
        canFork: options.answers?.fork !== undefined && options.readOnly !== true,
        ...(options.jaegerUrl === undefined ? {} : { jaegerUrl: options.jaegerUrl }),
        // Issue 27 item 1: the list is drawn from the page itself, one round trip before the hello.
        runs: firstPage(),
      }),
    );
  });
}
