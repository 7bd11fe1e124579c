/** The page's requests: every one to its own origin, with the token its URL carries. */

const token = (): string => new URLSearchParams(location.search).get('token') ?? '';

/** `/path?…&token=…` */
export function apiUrl(path: string, params: Record<string, string> = {}): string {
  return `${path}?${new URLSearchParams({ token: token(), ...params })}`;
}

/** The path of a run's resource: `/api/runs/<key>/<rest>`. */
export function runPath(key: string, rest = ''): string {
  return `/api/runs/${encodeURIComponent(key)}${rest ? `/${rest}` : ''}`;
}

/** GET as JSON; null for an answer that is not 2xx. */
export async function getJson<T>(url: string): Promise<T | null> {
  const response = await fetch(url);
  return response.ok ? ((await response.json()) as T) : null;
}

/**
 * POST JSON with the header writes need (`x-toolwarden-inspector: <purpose>`, inspector-server.ts
 * ANSWER_HEADER): the answer's status and body.
 */
export async function postJson<T>(
  url: string,
  purpose: 'answer' | 'fork',
  body: unknown,
): Promise<{ ok: boolean; status: number; json: T }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-toolwarden-inspector': purpose },
    body: JSON.stringify(body),
  });
  return { ok: response.ok, status: response.status, json: (await response.json()) as T };
}
