/**
 * The six metric instruments of docs/telemetry.md, created through `@opentelemetry/api` from the
 * descriptors in `attributes.ts` (name, unit, description).
 *
 * | instrument | kind | unit | attributes | recorded |
 * |---|---|---|---|---|
 * | `toolwarden.tool.calls` | counter | `{call}` | tool, outcome | once per tool call, executed or not |
 * | `toolwarden.tool.duration` | histogram | `s` | tool, outcome | calls that reached `wrapToolCall` |
 * | `toolwarden.retry_hints` | counter | `{hint}` | reason, tool | once per `retry_hint` event |
 * | `toolwarden.policy.decisions` | counter | `{decision}` | policy, kind | once per `policy_decision` event |
 * | `toolwarden.runs` | counter | `{run}` | status | when a run segment ends (awaiting or final) |
 * | `toolwarden.runs.active` | up-down counter | `{run}` | — | +1 when a segment opens, −1 when it ends |
 */
import type { Counter, Histogram, MeterProvider, UpDownCounter } from '@opentelemetry/api';
import { createNoopMeter, metrics } from '../plugins/otel-api.ts';
import {
  INSTRUMENTATION_SCOPE,
  METRIC_TOOLWARDEN_POLICY_DECISIONS,
  METRIC_TOOLWARDEN_RETRY_HINTS,
  METRIC_TOOLWARDEN_RUNS,
  METRIC_TOOLWARDEN_RUNS_ACTIVE,
  METRIC_TOOLWARDEN_TOOL_CALLS,
  METRIC_TOOLWARDEN_TOOL_DURATION,
  type MetricDescriptor,
  TOOLWARDEN_METRICS,
} from './attributes.ts';
import { createGenAiInstruments, type GenAiInstruments } from './genai-metrics.ts';

/**
 * Bucket boundaries (seconds) advised for `toolwarden.tool.duration`: the SDK's default buckets
 * are sized for milliseconds (0, 5, 10, 25, ...), useless for seconds. These are the HTTP
 * duration conventions' boundaries, extended to a minute for slow tools.
 */
export const TOOL_DURATION_BUCKETS_S: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60,
];

/** toolwarden's instruments, from one meter. */
export interface ToolwardenInstruments {
  toolCalls: Counter;
  toolDuration: Histogram;
  retryHints: Counter;
  policyDecisions: Counter;
  runs: Counter;
  runsActive: UpDownCounter;
  /** The GenAI metrics of the latest conventions (recorded only with the opt-in: `genai-metrics.ts`). */
  genAi: GenAiInstruments;
  /**
   * False when every instrument is `@opentelemetry/api`'s no-op (no SDK registered): callers
   * then skip building attribute objects and reading clocks for measurements nobody records.
   */
  recording: boolean;
}

/** The API's no-op instruments (singletons): what a meter gives when no SDK is registered. */
let noopInstruments: readonly unknown[] | undefined;
function noopInstrumentsOf(): readonly unknown[] {
  if (noopInstruments === undefined) {
    const meter = createNoopMeter();
    noopInstruments = [
      meter.createCounter('noop'),
      meter.createHistogram('noop'),
      meter.createUpDownCounter('noop'),
    ];
  }
  return noopInstruments;
}

/** Creates the instruments on `provider`'s `toolwarden` meter. */
export function createInstruments(provider: MeterProvider): ToolwardenInstruments {
  const meter = provider.getMeter(INSTRUMENTATION_SCOPE);
  const options = (name: string) => {
    const descriptor = TOOLWARDEN_METRICS[name] as MetricDescriptor;
    return { unit: descriptor.unit, description: descriptor.description };
  };
  const instruments: Omit<ToolwardenInstruments, 'recording' | 'genAi'> = {
    toolCalls: meter.createCounter(METRIC_TOOLWARDEN_TOOL_CALLS, options(METRIC_TOOLWARDEN_TOOL_CALLS)),
    toolDuration: meter.createHistogram(METRIC_TOOLWARDEN_TOOL_DURATION, {
      ...options(METRIC_TOOLWARDEN_TOOL_DURATION),
      advice: { explicitBucketBoundaries: [...TOOL_DURATION_BUCKETS_S] },
    }),
    retryHints: meter.createCounter(METRIC_TOOLWARDEN_RETRY_HINTS, options(METRIC_TOOLWARDEN_RETRY_HINTS)),
    policyDecisions: meter.createCounter(
      METRIC_TOOLWARDEN_POLICY_DECISIONS,
      options(METRIC_TOOLWARDEN_POLICY_DECISIONS),
    ),
    runs: meter.createCounter(METRIC_TOOLWARDEN_RUNS, options(METRIC_TOOLWARDEN_RUNS)),
    runsActive: meter.createUpDownCounter(
      METRIC_TOOLWARDEN_RUNS_ACTIVE,
      options(METRIC_TOOLWARDEN_RUNS_ACTIVE),
    ),
  };
  const recording = Object.values(instruments).some(
    (instrument) => !noopInstrumentsOf().includes(instrument),
  );
  return { ...instruments, genAi: createGenAiInstruments(meter), recording };
}

/**
 * Returns the instruments to record on now. With an explicit provider they are created once.
 * Without one they follow the global provider: `@opentelemetry/api` has no proxy for meters (a
 * meter taken before `NodeSDK.start()` stays a no-op forever), so the instruments are re-created
 * when the global provider changes, and a runtime created before the SDK starts still reports.
 */
export function instrumentSource(provider?: MeterProvider): () => ToolwardenInstruments {
  if (provider) {
    const fixed = createInstruments(provider);
    return () => fixed;
  }
  let current: MeterProvider | undefined;
  let instruments: ToolwardenInstruments | undefined;
  return () => {
    const global = metrics.getMeterProvider();
    if (global !== current || !instruments) {
      current = global;
      instruments = createInstruments(global);
    }
    return instruments;
  };
}
