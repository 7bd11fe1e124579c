/**
 * `toolwarden/telemetry`: the telemetry plugin, its span/attribute/metric names and the trace
 * context helpers (docs/telemetry.md). Depends only on `@opentelemetry/api`; the SDK setup helper is the
 * separate `toolwarden/telemetry/setup` entry.
 */
export * from './attributes.ts';
export * from './genai-metrics.ts';
export * from './inference.ts';
export * from './metrics.ts';
export * from './semconv-opt-in.ts';
export * from './span-notes.ts';
export * from './telemetry-plugin.ts';
export * from './trace-context.ts';
