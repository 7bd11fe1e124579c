/**
 * The telemetry plugin's options (docs/telemetry.md), and what its parts read of them once resolved
 * ({@link TelemetryConfig}).
 *
 * @module
 */

import type { MeterProvider, Tracer, TracerProvider } from '@opentelemetry/api';
import { trace } from '../plugins/otel-api.ts';
import { INSTRUMENTATION_SCOPE } from './attributes.ts';
import { instrumentSource, type ToolwardenInstruments } from './metrics.ts';
import { genAiLatestExperimental } from './semconv-opt-in.ts';

/** What a {@link RedactContent} hook is told about the value it may redact. */
export interface ContentInfo {
  kind: 'arguments' | 'result';
  /** The tool id. */
  tool: string;
  toolCallId: string;
  runId: string;
}

/**
 * Returns what to record instead of `value` (strings as they are, anything else as JSON), or
 * `undefined` to record nothing. Called only when content capture is on.
 */
export type RedactContent = (value: unknown, info: ContentInfo) => unknown;

/** `createRuntime({ telemetry })` and `telemetryPlugin` options (docs/telemetry.md). */
export interface TelemetryPluginOptions {
  /** Where spans go. Default: the global provider of `@opentelemetry/api` (a no-op until an SDK registers). */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global provider, followed if it is registered later. */
  meterProvider?: MeterProvider;
  /**
   * Record tool arguments and results (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`).
   * Default: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment (the
   * GenAI instrumentations' switch), else off: they may hold personal data.
   */
  captureContent?: boolean;
  /** Applied to every captured value before it is recorded. */
  redact?: RedactContent;
  /**
   * Emit the latest experimental GenAI conventions instead of v1.36.0's (`semconv-opt-in.ts`,
   * docs/telemetry.md §Conventions). Default: `OTEL_SEMCONV_STABILITY_OPT_IN` lists
   * `gen_ai_latest_experimental`.
   */
  latestGenAiConventions?: boolean;
}

/** The options with their defaults applied: what the plugin's parts share. */
export interface TelemetryConfig {
  readonly tracer: Tracer;
  /** The instruments of the meter provider in use now (the global one is followed). */
  readonly instruments: () => ToolwardenInstruments;
  /** Whether tool arguments and results are recorded. */
  readonly capture: boolean;
  readonly redact: RedactContent | undefined;
  /** The latest experimental GenAI conventions are on. */
  readonly latest: boolean;
}

/** {@link TelemetryPluginOptions} with their defaults (the global providers, the environment's switches). */
export function telemetryConfig(options: TelemetryPluginOptions): TelemetryConfig {
  return {
    tracer: (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE),
    instruments: instrumentSource(options.meterProvider),
    capture:
      options.captureContent ??
      globalThis.process?.env?.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true',
    redact: options.redact,
    latest: options.latestGenAiConventions ?? genAiLatestExperimental(),
  };
}
