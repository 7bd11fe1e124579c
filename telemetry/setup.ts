/**
 * The OpenTelemetry SDK setup helper (docs/telemetry.md): registers a `@opentelemetry/sdk-node` NodeSDK that
 * exports traces and metrics over OTLP/HTTP (JSON) to a collector such as Jaeger v2.
 *
 * This is a separate entry point for applications, examples and tests. The library itself only
 * talks to `@opentelemetry/api` (a no-op until an SDK is registered), so importing toolwarden never
 * pulls in the SDK; the packages used here are optional peer dependencies.
 *
 * Where each setting comes from, first match wins ("explicit options win", then the standard
 * `OTEL_*` variables of the OpenTelemetry SDK environment-variable spec, then OTel's defaults):
 *
 * | setting | option | environment | default |
 * |---|---|---|---|
 * | `service.name` | `serviceName` | `OTEL_SERVICE_NAME`, then `service.name` in `OTEL_RESOURCE_ATTRIBUTES` | `unknown_service:node` |
 * | other resource attributes | `resourceAttributes` | `OTEL_RESOURCE_ATTRIBUTES` | process and host attributes |
 * | trace URL | `otlpEndpoint` + `/v1/traces` | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as is), `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` | `http://localhost:4318/v1/traces` |
 * | metric URL | `otlpEndpoint` + `/v1/metrics` | `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics` | `http://localhost:4318/v1/metrics` |
 * | metric export interval (ms) | `metricExportIntervalMs` | `OTEL_METRIC_EXPORT_INTERVAL` | 60000 |
 * | metric export timeout (ms) | — | `OTEL_METRIC_EXPORT_TIMEOUT`, capped at the interval | 30000 |
 * | traces / metrics on | — | `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` = `none` turns one off | on |
 * | logs | — | `OTEL_LOGS_EXPORTER` (handled by NodeSDK) | off (toolwarden emits no logs) |
 * | whole SDK | — | `OTEL_SDK_DISABLED=true` makes `start` a no-op | on |
 *
 * Read by the exporters and the NodeSDK themselves, unchanged: `OTEL_EXPORTER_OTLP[_TRACES|_METRICS]_HEADERS`,
 * `_TIMEOUT`, `_COMPRESSION`, `_CERTIFICATE`, `_CLIENT_KEY`, `_CLIENT_CERTIFICATE`,
 * `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`, `OTEL_BSP_*` (batch span processor),
 * `OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_PROPAGATORS`, `OTEL_SPAN_*_LIMIT`, `OTEL_LOG_LEVEL`.
 * Not honoured: other `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` values than `otlp`/`none`,
 * `OTEL_EXPORTER_OTLP_PROTOCOL` (this helper always speaks OTLP/HTTP JSON, which every OTLP/HTTP
 * receiver accepts) and `OTEL_NODE_RESOURCE_DETECTORS` (env, process and host detectors always run).
 */

import type { Resource } from '@opentelemetry/resources';
import type { IMetricReader } from '@opentelemetry/sdk-metrics';
import type { NodeSDK, NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { context, diag, metrics, propagation, trace } from '../plugins/otel-api.ts';
import { loadSetupPeers } from './setup-peers.ts';

export { SETUP_PEERS, TelemetrySetupPeersError } from './setup-peers.ts';

// Optional peers: importing this module without them throws TelemetrySetupPeersError, naming them.
const { sdkNode, traceExporter, metricExporter, sdkMetrics, resources } = await loadSetupPeers();
const { OTLPMetricExporter } = metricExporter;
const { OTLPTraceExporter } = traceExporter;
const {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} = resources;
const { PeriodicExportingMetricReader } = sdkMetrics;

/** Options of {@link startTelemetry}; every field overrides its `OTEL_*` variable. */
export interface TelemetryOptions {
  /** `service.name` of the resource. Falls back to `OTEL_SERVICE_NAME`. */
  serviceName?: string;
  /**
   * Base URL of an OTLP/HTTP receiver, e.g. `http://127.0.0.1:4318`; `/v1/traces` and
   * `/v1/metrics` are appended. Falls back to the `OTEL_EXPORTER_OTLP_*ENDPOINT` variables.
   */
  otlpEndpoint?: string;
  /** Extra resource attributes, e.g. `{ 'deployment.environment.name': 'dev' }`. */
  resourceAttributes?: Record<string, string | number | boolean>;
  /** Milliseconds between metric exports (> 0). Falls back to `OTEL_METRIC_EXPORT_INTERVAL`. */
  metricExportIntervalMs?: number;
}

/** What {@link startTelemetry} returns. */
export interface Telemetry {
  /** The started NodeSDK (its providers are the global ones of `@opentelemetry/api`). */
  sdk: NodeSDK;
  /**
   * Flushes pending spans and metrics, shuts the providers down and unregisters them from the
   * `@opentelemetry/api` globals, so `startTelemetry` may be called again in the same process.
   * Idempotent (returns the same promise). Rejects with the exporter's error when the final span
   * export fails (e.g. `connect ECONNREFUSED`, after the exporter's retries); a failed metric
   * export only goes to OpenTelemetry's diag logger (`OTEL_LOG_LEVEL=warn`), as the SDK does.
   */
  shutdown(): Promise<void>;
}

/** An option or `OTEL_*` variable that cannot be used; names the setting and the value. */
export class TelemetryConfigError extends Error {
  override readonly name = 'TelemetryConfigError';
  constructor(
    readonly setting: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(`${setting}=${JSON.stringify(value)}: ${reason}`);
  }
}

/** The settings {@link startTelemetry} resolved from options and environment. */
export interface ResolvedTelemetryConfig {
  /** From `serviceName` only; `undefined` leaves `service.name` to the env detector. */
  serviceName: string | undefined;
  resourceAttributes: Record<string, string | number | boolean>;
  /** Full URLs, or `undefined` to let the exporter read the `OTEL_EXPORTER_OTLP_*` variables. */
  tracesUrl: string | undefined;
  metricsUrl: string | undefined;
  traces: boolean;
  metrics: boolean;
  metricExportIntervalMs: number;
  metricExportTimeoutMs: number;
  /** False unless `OTEL_LOGS_EXPORTER` is set: then the NodeSDK configures logs from it. */
  logsFromEnv: boolean;
}

const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000; // OTel SDK spec default
const DEFAULT_METRIC_EXPORT_TIMEOUT_MS = 30_000; // OTel SDK spec default

/**
 * Resolves options against the environment ({@link startTelemetry} calls it with `process.env`).
 * Throws {@link TelemetryConfigError} for a malformed `otlpEndpoint` or `metricExportIntervalMs`;
 * a malformed `OTEL_METRIC_EXPORT_*` variable is ignored with a diag warning, as the OTel
 * environment-variable spec asks.
 */
export function resolveTelemetryConfig(
  options: TelemetryOptions,
  env: Record<string, string | undefined> = process.env,
): ResolvedTelemetryConfig {
  const base = options.otlpEndpoint;
  const interval =
    options.metricExportIntervalMs ??
    envMillis(env, 'OTEL_METRIC_EXPORT_INTERVAL') ??
    DEFAULT_METRIC_EXPORT_INTERVAL_MS;
  if (!Number.isFinite(interval) || interval <= 0) {
    throw new TelemetryConfigError('metricExportIntervalMs', interval, 'must be a positive number of ms');
  }
  const timeout = envMillis(env, 'OTEL_METRIC_EXPORT_TIMEOUT') ?? DEFAULT_METRIC_EXPORT_TIMEOUT_MS;
  return {
    serviceName: options.serviceName,
    resourceAttributes: { ...options.resourceAttributes },
    tracesUrl: base === undefined ? undefined : signalUrl(base, 'v1/traces'),
    metricsUrl: base === undefined ? undefined : signalUrl(base, 'v1/metrics'),
    traces: !envList(env, 'OTEL_TRACES_EXPORTER').includes('none'),
    metrics: !envList(env, 'OTEL_METRICS_EXPORTER').includes('none'),
    metricExportIntervalMs: interval,
    // The reader rejects a timeout longer than the interval.
    metricExportTimeoutMs: Math.min(timeout, interval),
    logsFromEnv: envList(env, 'OTEL_LOGS_EXPORTER').length > 0,
  };
}

/**
 * Starts the OpenTelemetry Node SDK with OTLP/HTTP trace and metric exporters and registers it
 * as the global tracer and meter provider (plus the AsyncLocalStorage context manager and the
 * W3C propagators), so toolwarden's spans and metrics, and the app's own, are exported.
 *
 * Call it once, before creating the runtime, and `await shutdown()` before the process exits or
 * the last spans are lost (they are batched: `OTEL_BSP_SCHEDULE_DELAY`, default 5000 ms).
 * A provider already registered globally by someone else stays in place (the API refuses a
 * second registration and reports it through diag).
 *
 * @example
 *   const telemetry = startTelemetry({ serviceName: 'support-bot', otlpEndpoint: 'http://127.0.0.1:4318' });
 *   // ... run agents ...
 *   await telemetry.shutdown();
 * @throws TelemetryConfigError for a malformed `otlpEndpoint` or `metricExportIntervalMs`.
 */
export function startTelemetry(options: TelemetryOptions = {}): Telemetry {
  const config = resolveTelemetryConfig(options);
  const metricReaders: IMetricReader[] = config.metrics
    ? [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter(config.metricsUrl === undefined ? {} : { url: config.metricsUrl }),
          exportIntervalMillis: config.metricExportIntervalMs,
          exportTimeoutMillis: config.metricExportTimeoutMs,
        }),
      ]
    : [];
  const sdkConfig: Partial<NodeSDKConfiguration> = {
    resource: buildResource(config),
    autoDetectResources: false, // done in buildResource, so explicit attributes win over env
    metricReaders,
    ...(config.logsFromEnv ? {} : { logRecordProcessors: [] }),
  };
  if (config.traces) {
    // Given an exporter, the NodeSDK wraps it in a BatchSpanProcessor configured from OTEL_BSP_*.
    sdkConfig.traceExporter = new OTLPTraceExporter(
      config.tracesUrl === undefined ? {} : { url: config.tracesUrl },
    );
  } else {
    sdkConfig.spanProcessors = [];
  }
  const sdk = new sdkNode.NodeSDK(sdkConfig);
  sdk.start();

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= sdk.shutdown().finally(() => {
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    });
    return stopping;
  };
  return { sdk, shutdown };
}

/**
 * OTel's default resource (SDK name, language, version), then the env detector
 * (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`), process and host, then the explicit
 * attributes and service name. `Resource.merge` lets the argument win, hence this order.
 */
function buildResource(config: ResolvedTelemetryConfig): Resource {
  const explicit: Record<string, string | number | boolean> = { ...config.resourceAttributes };
  if (config.serviceName !== undefined) explicit['service.name'] = config.serviceName;
  return defaultResource()
    .merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] }))
    .merge(resourceFromAttributes(explicit));
}

function signalUrl(base: string, path: string): string {
  let url: URL;
  try {
    url = new URL(base.endsWith('/') ? base : `${base}/`);
  } catch {
    throw new TelemetryConfigError('otlpEndpoint', base, 'not a URL (expected e.g. http://127.0.0.1:4318)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TelemetryConfigError('otlpEndpoint', base, 'OTLP/HTTP needs an http: or https: URL');
  }
  return new URL(path, url).toString();
}

function envMillis(env: Record<string, string | undefined>, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    // The OTel env spec asks SDKs to warn and use the default for an unparsable value.
    diag.warn(`toolwarden telemetry: ignoring ${name}=${JSON.stringify(raw)} (not a positive number of ms)`);
    return undefined;
  }
  return value;
}

function envList(env: Record<string, string | undefined>, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');
}
