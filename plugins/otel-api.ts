/**
 * `@opentelemetry/api`, loaded the first time a span, a metric or a context is touched rather than
 * with the package: it is ~35–45 ms of CPU of a cold `import('toolwarden')` (docs/packaging.md
 * §Cost), and the default telemetry plugin needs it only once a run starts. The names here are the
 * API's own (`trace`, `context`, `SpanKind`, …), typed as the API types them, so a module imports
 * them from here instead of from the package; types still come from `@opentelemetry/api`.
 *
 * Loaded with `require` of the very file `import '@opentelemetry/api'` resolves to (its ESM build,
 * through `import.meta.resolve`): Node (≥ 22.12, `engines`) gives `require` of an ES module the same
 * module instance `import` gives, so these are the app's own API singletons, not a second copy.
 *
 * @module
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Api from '@opentelemetry/api';
import { lazyObject } from '../tools/lazy-schema.ts';

let loaded: typeof Api | undefined;
function api(): typeof Api {
  loaded ??= createRequire(import.meta.url)(
    fileURLToPath(import.meta.resolve('@opentelemetry/api')),
  ) as typeof Api;
  return loaded;
}

/** The API's `trace` singleton (`TraceAPI`). */
export const trace: typeof Api.trace = lazyObject(() => api().trace);
/** The API's `context` singleton (`ContextAPI`). */
export const context: typeof Api.context = lazyObject(() => api().context);
/** The API's `metrics` singleton (`MetricsAPI`). */
export const metrics: typeof Api.metrics = lazyObject(() => api().metrics);
/** The API's `propagation` singleton (`PropagationAPI`). */
export const propagation: typeof Api.propagation = lazyObject(() => api().propagation);
/** The API's `diag` singleton (`DiagAPI`). */
export const diag: typeof Api.diag = lazyObject(() => api().diag);
/** The API's `SpanKind` enum. */
export const SpanKind: typeof Api.SpanKind = lazyObject(() => api().SpanKind);
/** The API's `SpanStatusCode` enum. */
export const SpanStatusCode: typeof Api.SpanStatusCode = lazyObject(() => api().SpanStatusCode);
/** The API's `ValueType` enum (metric instruments). */
export const ValueType: typeof Api.ValueType = lazyObject(() => api().ValueType);
/** The API's empty root `Context`. */
export const ROOT_CONTEXT: typeof Api.ROOT_CONTEXT = lazyObject(() => api().ROOT_CONTEXT);

/** The API's `isSpanContextValid`: a span context with a valid trace id and span id. */
export function isSpanContextValid(spanContext: Api.SpanContext): boolean {
  return api().isSpanContextValid(spanContext);
}
/** The API's `createTraceState` (W3C `tracestate`). */
export function createTraceState(rawTraceState?: string): Api.TraceState {
  return api().createTraceState(rawTraceState);
}
/** The API's `createContextKey`: a key for values kept in a `Context`. */
export function createContextKey(description: string): symbol {
  return api().createContextKey(description);
}
/** The API's `createNoopMeter`. */
export function createNoopMeter(): Api.Meter {
  return api().createNoopMeter();
}
