import type { Context } from 'hono';
import type { InspectionStore, RunView } from '../inspection-store.ts';
import { ANSWER_HEADER } from './inspector-server-options.ts';

/** A write the guard let through: the native run it is for and its JSON body. */
export interface AcceptedWrite {
  run: RunView;
  body: Record<string, unknown>;
}

/** How one kind of write is named in the guard's refusals. */
export interface WriteKind {
  /** The {@link ANSWER_HEADER} value the page sends for it: `answer`, `fork`. */
  header: string;
  /** Whether the server takes it at all (false: 403, read-only). */
  enabled: boolean;
  /** The 403's sentence when not enabled: `answers are not accepted here`. */
  refused: string;
  /** The 403's sentence for a request from elsewhere: `answers are accepted`. */
  fromPage: string;
}

/**
 * The guards every write from the page passes (issue 15), after the token and loopback `Host`
 * checked for every request: the server takes this kind of write (else 403), the request comes
 * from the page's own `Origin` with {@link ANSWER_HEADER} set to the kind's value (CSRF: a
 * cross-site page can send neither without a CORS preflight, which is never granted; else 403),
 * the run is a native run held here (else 404) and the body is JSON (else 400).
 *
 * @returns the run and body, or the refusal to send as is.
 */
export async function acceptWrite(
  c: Context,
  store: InspectionStore,
  kind: WriteKind,
): Promise<AcceptedWrite | Response> {
  if (!kind.enabled) return c.json({ error: `the inspector is read-only: ${kind.refused}` }, 403);
  if (
    c.req.header('origin') !== `http://${c.req.header('host')}` ||
    c.req.header(ANSWER_HEADER) !== kind.header
  ) {
    return c.json({ error: `${kind.fromPage} from the inspector page only (same origin)` }, 403);
  }
  const run = store.run(c.req.param('key') ?? '');
  if (run?.source !== 'native') return c.json({ error: 'no such run here' }, 404);
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return c.json({ error: 'the body must be JSON' }, 400);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return c.json({ error: 'the body must be a JSON object' }, 400);
  }
  return { run, body: body as Record<string, unknown> };
}

/** The 409 of a write the run refused (its own validation: not what it awaits, an unknown id). */
export function refusedByRun(c: Context, error: unknown): Response {
  return c.json({ error: error instanceof Error ? error.message : String(error) }, 409);
}
