/**
 * A small client for Jaeger's HTTP query API (the `/api/*` JSON API the Jaeger UI uses, served by
 * Jaeger v2's `jaeger_query` extension), for integration suites that export spans over OTLP and
 * read them back (docs/telemetry.md: "verified against a real Jaeger").
 *
 * | call | request | returns |
 * |---|---|---|
 * | {@link JaegerClient.services} | `GET /api/services` | service names |
 * | {@link JaegerClient.findTraces} | `GET /api/traces?service=&operation=&tags=&lookback=&limit=` | traces |
 * | {@link JaegerClient.getTrace} | `GET /api/traces/{traceId}` | the trace, or `undefined` (404) |
 * | {@link JaegerClient.waitForTrace} | polls `getTrace` | the trace once `until` holds |
 * | {@link JaegerClient.otlpSpans} | `GET /api/v3/traces/{traceId}` | the trace's spans as OTLP JSON (links with their attributes) |
 *
 * The peer is started with `bash scripts/jaeger.sh start`; its ports follow the same variables
 * (`JAEGER_QUERY_PORT`, default 16686; `JAEGER_OTLP_HTTP_PORT`, default 4318), always on 127.0.0.1.
 */

/** A span as Jaeger's query API returns it. Times are in microseconds since the epoch. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }[];
  startTime: number;
  duration: number;
  /** Span attributes, plus `span.kind`, `otel.status_code`, `otel.scope.name` added by Jaeger. */
  tags: JaegerTag[];
  /** Span events: each event's name is the `event` field among its fields. */
  logs: { timestamp: number; fields: JaegerTag[] }[];
  processID: string;
  warnings: string[] | null;
}

export interface JaegerTag {
  key: string;
  type: 'string' | 'bool' | 'int64' | 'float64' | 'binary';
  value: string | number | boolean;
}

/** A trace: its spans and, keyed by `processID`, the resources (service name and attributes). */
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: JaegerTag[] }>;
  warnings: string[] | null;
}

/** A span as Jaeger's API v3 returns it (OTLP JSON): what the v1 `references` leave out, links' attributes. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  links?: { traceId: string; spanId: string; attributes?: OtlpAttribute[] }[];
}

/** An OTLP JSON attribute: its value under the key of its type (`stringValue`, `boolValue`, ...). */
export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string; doubleValue?: number };
}

/** Query API failure other than "trace not found": names the URL and the HTTP status. */
export class JaegerQueryError extends Error {
  override readonly name = 'JaegerQueryError';
  constructor(
    readonly url: string,
    readonly status: number,
    body: string,
  ) {
    super(`Jaeger query API ${url} answered ${status}: ${body.slice(0, 300)}`);
  }
}

/** `waitForTrace` gave up: names the trace and what was last seen. */
export class JaegerTraceTimeoutError extends Error {
  override readonly name = 'JaegerTraceTimeoutError';
  constructor(
    readonly traceId: string,
    readonly timeoutMs: number,
    readonly lastSeen: JaegerTrace | undefined,
  ) {
    const seen = lastSeen
      ? `last seen ${lastSeen.spans.length} span(s): ${lastSeen.spans.map((s) => s.operationName).join(', ')}`
      : 'never found';
    super(`trace ${traceId} not complete in Jaeger after ${timeoutMs} ms (${seen})`);
  }
}

const HOST = '127.0.0.1';

/** Query API base URL: `http://127.0.0.1:${JAEGER_QUERY_PORT ?? 16686}`. */
export const JAEGER_QUERY_URL = `http://${HOST}:${process.env.JAEGER_QUERY_PORT || 16686}`;
/** OTLP/HTTP receiver base URL: `http://127.0.0.1:${JAEGER_OTLP_HTTP_PORT ?? 4318}`. */
export const JAEGER_OTLP_HTTP_URL = `http://${HOST}:${process.env.JAEGER_OTLP_HTTP_PORT || 4318}`;
/** What to tell a developer whose suite was skipped because no Jaeger answered. */
export const JAEGER_START_HINT = 'bash scripts/jaeger.sh install && bash scripts/jaeger.sh start';

/** True when the query API answers `GET /api/services` within `timeoutMs` (default 1000). */
export async function jaegerAvailable(baseUrl = JAEGER_QUERY_URL, timeoutMs = 1000): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/api/services`, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * The project's gate for a suite that needs Jaeger: it runs when the query API answers, and in CI
 * (CI=true), where a missing peer must fail rather than pass silently; otherwise it is skipped with
 * a message naming the way to start the peer. Call `assertAvailable()` first in the suite's
 * `beforeAll`: it throws (in CI) when Jaeger is not there.
 */
export async function jaegerSuite(suite: string): Promise<{ run: boolean; assertAvailable: () => void }> {
  const available = await jaegerAvailable();
  const required = process.env.CI === 'true';
  if (!available && !required) {
    console.warn(
      `[skip] ${suite}: no Jaeger query API at ${JAEGER_QUERY_URL}. Start the peer with: ${JAEGER_START_HINT}`,
    );
  }
  return {
    run: available || required,
    assertAvailable() {
      if (!available) {
        throw new Error(`CI=true and no Jaeger query API at ${JAEGER_QUERY_URL}; run: ${JAEGER_START_HINT}`);
      }
    },
  };
}

export interface FindTracesQuery {
  service: string;
  operation?: string;
  /** Span attributes that must match, e.g. `{ 'toolwarden.run.id': 'run-1' }`. */
  tags?: Record<string, string>;
  /** Jaeger duration string, default `1h`. */
  lookback?: string;
  /** Default 20. */
  limit?: number;
}

export interface WaitForTraceOptions {
  /** Give up after this many ms (default 10000). */
  timeoutMs?: number;
  /** Pause between polls in ms (default 200). */
  intervalMs?: number;
  /**
   * When the trace counts as complete; default: it exists. Spans of one trace may reach the
   * store in different batches, so wait for what the test needs, e.g. `(t) => t.spans.length >= 2`.
   */
  until?: (trace: JaegerTrace) => boolean;
}

export class JaegerClient {
  constructor(readonly baseUrl: string = JAEGER_QUERY_URL) {}

  /** `GET /api/services`: names of the services with stored spans. */
  async services(): Promise<string[]> {
    return (await this.get<string[]>('/api/services')) ?? [];
  }

  /** `GET /api/traces?...`: traces of a service, newest first, at most `limit`. */
  async findTraces(query: FindTracesQuery): Promise<JaegerTrace[]> {
    const params = new URLSearchParams({
      service: query.service,
      lookback: query.lookback ?? '1h',
      limit: String(query.limit ?? 20),
    });
    if (query.operation !== undefined) params.set('operation', query.operation);
    if (query.tags !== undefined) params.set('tags', JSON.stringify(query.tags));
    return (await this.get<JaegerTrace[]>(`/api/traces?${params}`)) ?? [];
  }

  /** `GET /api/traces/{traceId}` (32 hex digits): the trace, or `undefined` while Jaeger has none. */
  async getTrace(traceId: string): Promise<JaegerTrace | undefined> {
    const traces = await this.get<JaegerTrace[]>(`/api/traces/${encodeURIComponent(traceId)}`);
    return traces?.[0];
  }

  /**
   * Polls {@link getTrace} until the trace exists and `until` holds, at most `timeoutMs`.
   * @throws JaegerTraceTimeoutError when time runs out; JaegerQueryError on an HTTP error.
   */
  async waitForTrace(traceId: string, options: WaitForTraceOptions = {}): Promise<JaegerTrace> {
    const { timeoutMs = 10_000, intervalMs = 200, until = () => true } = options;
    const deadline = Date.now() + timeoutMs;
    let last: JaegerTrace | undefined;
    for (;;) {
      last = await this.getTrace(traceId);
      if (last && until(last)) return last;
      if (Date.now() + intervalMs > deadline) throw new JaegerTraceTimeoutError(traceId, timeoutMs, last);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** `GET /api/v3/traces/{traceId}`: every span of the trace as OTLP JSON (`[]` while Jaeger has none). */
  async otlpSpans(traceId: string): Promise<OtlpSpan[]> {
    const url = `${this.baseUrl}/api/v3/traces/${encodeURIComponent(traceId)}`;
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (response.status === 404) {
      await response.body?.cancel();
      return [];
    }
    if (!response.ok) throw new JaegerQueryError(url, response.status, await response.text());
    const body = (await response.json()) as {
      result?: { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
    };
    return (body.result?.resourceSpans ?? []).flatMap((resource) =>
      (resource.scopeSpans ?? []).flatMap((scope) => scope.spans ?? []),
    );
  }

  /** `data` of a query API answer; `undefined` for 404 (Jaeger's "trace not found"). */
  private async get<T>(path: string): Promise<T | undefined> {
    const url = `${this.baseUrl}${path}`;
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    if (!response.ok) throw new JaegerQueryError(url, response.status, await response.text());
    const body = (await response.json()) as { data: T | null };
    return body.data ?? undefined;
  }
}

/** Value of a span's tag (attribute), or `undefined`. */
export function tagValue(tags: JaegerTag[], key: string): JaegerTag['value'] | undefined {
  return tags.find((tag) => tag.key === key)?.value;
}

/** The span's attributes as a plain object (tag key → value). */
export function tagsOf(span: Pick<JaegerSpan, 'tags'>): Record<string, JaegerTag['value']> {
  return Object.fromEntries(span.tags.map((tag) => [tag.key, tag.value]));
}

/** The span's parent span id (its `CHILD_OF` reference), or `undefined` for a root span. */
export function parentSpanId(span: JaegerSpan): string | undefined {
  return span.references.find((ref) => ref.refType === 'CHILD_OF')?.spanID;
}

/** OTLP JSON attributes as a plain object (key → value). */
export function otlpAttributes(attributes: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ??
        value.boolValue ??
        (value.intValue === undefined ? value.doubleValue : Number(value.intValue)),
    ]),
  );
}

/** Names of the span's events, in order. */
export function eventNames(span: JaegerSpan): string[] {
  return span.logs.map((log) => String(tagValue(log.fields, 'event') ?? ''));
}
