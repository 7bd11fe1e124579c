import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics, trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveTelemetryConfig, startTelemetry, TelemetryConfigError } from '../telemetry/setup.ts';

describe('resolveTelemetryConfig: explicit options win over OTEL_* variables', () => {
  it('appends /v1/traces and /v1/metrics to otlpEndpoint, with or without a trailing slash', () => {
    expect(resolveTelemetryConfig({ otlpEndpoint: 'http://127.0.0.1:4318' }, {})).toMatchObject({
      tracesUrl: 'http://127.0.0.1:4318/v1/traces',
      metricsUrl: 'http://127.0.0.1:4318/v1/metrics',
    });
    expect(resolveTelemetryConfig({ otlpEndpoint: 'https://otel.example.com/otlp/' }, {})).toMatchObject({
      tracesUrl: 'https://otel.example.com/otlp/v1/traces',
    });
  });

  it('leaves the URLs to the exporters (which read OTEL_EXPORTER_OTLP_*ENDPOINT) when no option is given', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(resolveTelemetryConfig({}, env)).toMatchObject({ tracesUrl: undefined, metricsUrl: undefined });
  });

  it('takes metricExportIntervalMs over OTEL_METRIC_EXPORT_INTERVAL, which beats the 60 s default', () => {
    const env = { OTEL_METRIC_EXPORT_INTERVAL: '15000' };
    expect(resolveTelemetryConfig({ metricExportIntervalMs: 500 }, env).metricExportIntervalMs).toBe(500);
    expect(resolveTelemetryConfig({}, env).metricExportIntervalMs).toBe(15_000);
    expect(resolveTelemetryConfig({}, {}).metricExportIntervalMs).toBe(60_000);
  });

  it('caps the export timeout at the interval, since the metric reader rejects a longer one', () => {
    expect(resolveTelemetryConfig({ metricExportIntervalMs: 1000 }, {}).metricExportTimeoutMs).toBe(1000);
    const env = { OTEL_METRIC_EXPORT_TIMEOUT: '2500' };
    expect(resolveTelemetryConfig({}, env).metricExportTimeoutMs).toBe(2500);
  });

  it('ignores a malformed OTEL_METRIC_EXPORT_INTERVAL (OTel env spec) but rejects a malformed option', () => {
    expect(resolveTelemetryConfig({}, { OTEL_METRIC_EXPORT_INTERVAL: 'soon' }).metricExportIntervalMs).toBe(
      60_000,
    );
    expect(() => resolveTelemetryConfig({ metricExportIntervalMs: 0 }, {})).toThrow(TelemetryConfigError);
  });

  it('rejects an otlpEndpoint that is not an http(s) URL, naming the option and value', () => {
    expect(() => resolveTelemetryConfig({ otlpEndpoint: '127.0.0.1:4318' }, {})).toThrow(
      /otlpEndpoint="127.0.0.1:4318"/,
    );
    expect(() => resolveTelemetryConfig({ otlpEndpoint: 'not a url' }, {})).toThrow(TelemetryConfigError);
  });

  it('turns a signal off with OTEL_TRACES_EXPORTER=none / OTEL_METRICS_EXPORTER=none', () => {
    expect(resolveTelemetryConfig({}, { OTEL_TRACES_EXPORTER: 'none' })).toMatchObject({
      traces: false,
      metrics: true,
    });
    expect(resolveTelemetryConfig({}, { OTEL_METRICS_EXPORTER: 'otlp, none' })).toMatchObject({
      traces: true,
      metrics: false,
    });
  });

  it('leaves logs off unless OTEL_LOGS_EXPORTER asks for them', () => {
    expect(resolveTelemetryConfig({}, {}).logsFromEnv).toBe(false);
    expect(resolveTelemetryConfig({}, { OTEL_LOGS_EXPORTER: 'console' }).logsFromEnv).toBe(true);
  });
});

describe('startTelemetry', () => {
  let receiver: Server;
  let endpoint: string;
  const received: { path: string; body: string }[] = [];

  // A stand-in OTLP/HTTP receiver on loopback that records what the exporters post.
  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        received.push({ path: request.url ?? '', body });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('posts spans to {otlpEndpoint}/v1/traces and metrics to /v1/metrics on shutdown, with the service name', async () => {
    received.length = 0;
    const telemetry = startTelemetry({ serviceName: 'toolwarden-unit', otlpEndpoint: endpoint });
    trace.getTracer('toolwarden').startSpan('unit span').end();
    metrics.getMeter('toolwarden').createCounter('toolwarden.unit.rounds').add(1);
    await telemetry.shutdown();

    const traces = received.find((r) => r.path === '/v1/traces');
    const metricPost = received.find((r) => r.path === '/v1/metrics');
    expect(traces?.body).toContain('"unit span"');
    expect(traces?.body).toContain('{"key":"service.name","value":{"stringValue":"toolwarden-unit"}}');
    expect(metricPost?.body).toContain('"toolwarden.unit.rounds"');
  });

  it('unregisters its global providers on shutdown, so it can be started again in the same process', async () => {
    for (let round = 1; round <= 2; round++) {
      const telemetry = startTelemetry({ serviceName: 'toolwarden-unit', otlpEndpoint: endpoint });
      expect(trace.getTracer('toolwarden').startSpan(`round ${round}`).isRecording()).toBe(true);
      await telemetry.shutdown();
      await telemetry.shutdown(); // idempotent
      expect(trace.getTracer('toolwarden').startSpan('after shutdown').isRecording()).toBe(false);
    }
  });

  it('rejects shutdown when the final span export fails, after unregistering the providers', async () => {
    // Port 9 (discard) on loopback: nothing listens, the exporter gets ECONNREFUSED. The
    // exporters still read OTEL_EXPORTER_OTLP_TIMEOUT: it bounds their retries (default 10 s).
    vi.stubEnv('OTEL_EXPORTER_OTLP_TIMEOUT', '300');
    const telemetry = startTelemetry({
      serviceName: 'toolwarden-unit',
      otlpEndpoint: 'http://127.0.0.1:9',
      metricExportIntervalMs: 60_000,
    });
    trace.getTracer('toolwarden').startSpan('lost').end();
    await expect(telemetry.shutdown()).rejects.toThrow(/ECONNREFUSED/);
    expect(trace.getTracer('toolwarden').startSpan('after shutdown').isRecording()).toBe(false);
  });
});
