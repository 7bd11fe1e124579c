/**
 * What tracing costs per step (issue 5, "Show"): the 10-step loop of `bench/run.ts` — one tool
 * with zod validation, a scripted planner giving 10 turns of one tool call each, then a final
 * response — run through the runtime three ways:
 *
 * | mode | telemetry | what it measures |
 * |---|---|---|
 * | `off` | `telemetry: false` | the untraced framework |
 * | `no SDK` | default (plugin on, no SDK registered: the API's no-op tracer and meter) | what a library user pays before configuring OpenTelemetry |
 * | `off + context manager` | `telemetry: false`, the AsyncLocalStorage context manager registered | what any traced Node app pays for context propagation (async hooks on every promise), toolwarden or not |
 * | `SDK` | a real `TracerProvider` (BatchSpanProcessor, an exporter that drops batches), a real `MeterProvider` with a reader, the AsyncLocalStorage context manager | recording 22 spans and the metrics of a run, as production would minus the network |
| `SDK, latest GenAI` | as `SDK`, with `latestGenAiConventions: true` (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`) | the 2026 conventions' extra: a state-change event per step, the `gen_ai.*` metrics |
 *
 *     node --import tsx bench/telemetry.bench.ts [--runs 600] [--warm-up 100]
 *
 * Prints the median CPU µs per step of each (and wall-clock µs) and the ratio SDK/off; the target (issue 5) is a ratio of
 * at most 2 (tracing on costs at most twice the untraced framework). The store is one that keeps
 * nothing, so persistence does not dilute the comparison. `benchTelemetry()` is also what
 * `npm run bench` may call; it returns the numbers.
 */

import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Message } from '../run/message.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { addTool, discardingStore, resettablePlanner, STEPS } from './support/reference-loop.ts';

export interface TelemetryBenchResult {
  steps: number;
  /** Measured runs per mode. */
  runs: number;
  /** Median CPU µs per step with `telemetry: false`. */
  offUsPerStep: number;
  /** Median CPU µs per step with the plugin on and no SDK registered. */
  noSdkUsPerStep: number;
  /** Median CPU µs per step untraced, with the context manager an SDK registers. */
  offContextManagerUsPerStep: number;
  /** Median CPU µs per step with a real SDK recording every span and metric. */
  sdkUsPerStep: number;
  /** The same with the latest GenAI conventions (state-change events, gen_ai.* metrics). */
  sdkLatestUsPerStep: number;
  /** sdk − off, µs per step: what tracing adds. */
  tracingUsPerStep: number;
  /** sdk / off; target ≤ 2. */
  ratio: number;
  withinTarget: boolean;
  /** The same medians in wall-clock µs per step (noisy on a busy machine). */
  wallUsPerStep: { off: number; noSdk: number; offContextManager: number; sdk: number; sdkLatest: number };
}

/** An exporter that drops what it is given: the SDK's whole pipeline runs, minus the network. */
const droppingExporter: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};

class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

const prompt: Message[] = [{ role: 'user', content: 'Add the numbers' }];

function loop(telemetry: RuntimeOptions['telemetry']) {
  const planner = resettablePlanner();
  const runtime = createRuntime({
    agent: { id: 'bench' },
    planner,
    tools: [addTool],
    store: discardingStore(),
    telemetry,
  });
  let n = 0;
  return async () => {
    planner.reset();
    const outcome = await runtime.start({ runId: `bench-${++n}`, messages: prompt }).result();
    if (outcome.status !== 'completed')
      throw new Error(`bench run ${outcome.status}: ${outcome.error?.message}`);
  };
}

/**
 * µs per step of each run: CPU time of the process (user + system), which a busy machine (other
 * processes on the same cores) inflates far less than wall time; the loop never waits on I/O, so
 * on an idle machine the two agree. Wall time is kept too.
 */
async function measure(
  run: () => Promise<void>,
  warmUp: number,
  runs: number,
): Promise<{ cpu: number[]; wall: number[] }> {
  for (let i = 0; i < warmUp; i++) await run();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    await run();
    const used = process.cpuUsage(cpuStarted);
    wall.push(((performance.now() - started) * 1000) / STEPS);
    cpu.push((used.user + used.system) / STEPS);
  }
  return { cpu, wall };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const round1 = (value: number) => Math.round(value * 10) / 10;

/** Runs the modes, interleaved in rounds so drift hits all alike, and prints the medians. */
export async function benchTelemetry(
  options: { runs?: number; warmUp?: number; print?: boolean } = {},
): Promise<TelemetryBenchResult> {
  const runs = options.runs ?? 600;
  const warmUp = options.warmUp ?? 100;
  const tracerProvider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: droppingExporter })],
  });
  const meterProvider = new MeterProvider({ readers: [new PullReader()] });
  const contextManager = new AsyncLocalStorageContextManager();
  const off = loop(false);
  const noSdk = loop(undefined);
  const sdk = loop({ tracerProvider, meterProvider });
  const sdkLatest = loop({ tracerProvider, meterProvider, latestGenAiConventions: true });
  const samples = {
    off: { cpu: [] as number[], wall: [] as number[] },
    noSdk: { cpu: [] as number[], wall: [] as number[] },
    offContext: { cpu: [] as number[], wall: [] as number[] },
    sdk: { cpu: [] as number[], wall: [] as number[] },
    sdkLatest: { cpu: [] as number[], wall: [] as number[] },
  };
  const add = (into: { cpu: number[]; wall: number[] }, from: { cpu: number[]; wall: number[] }) => {
    into.cpu.push(...from.cpu);
    into.wall.push(...from.wall);
  };
  const rounds = 5;
  const perRound = Math.ceil(runs / rounds);
  try {
    for (let round = 0; round < rounds; round++) {
      const warm = round === 0 ? warmUp : 10;
      add(samples.off, await measure(off, warm, perRound));
      add(samples.noSdk, await measure(noSdk, warm, perRound));
      // The context manager is what an SDK registers; its async-hook cost is tracing's cost.
      context.setGlobalContextManager(contextManager.enable());
      // AsyncLocalStorage installs its promise hooks on first use, not when enabled.
      context.with(context.active(), () => {});
      try {
        add(samples.offContext, await measure(off, warm, perRound));
        add(samples.sdk, await measure(sdk, warm, perRound));
        add(samples.sdkLatest, await measure(sdkLatest, warm, perRound));
      } finally {
        context.disable();
      }
    }
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
  const offUs = median(samples.off.cpu);
  const sdkUs = median(samples.sdk.cpu);
  const result: TelemetryBenchResult = {
    steps: STEPS,
    runs: samples.sdk.cpu.length,
    offUsPerStep: round1(offUs),
    noSdkUsPerStep: round1(median(samples.noSdk.cpu)),
    offContextManagerUsPerStep: round1(median(samples.offContext.cpu)),
    sdkUsPerStep: round1(sdkUs),
    sdkLatestUsPerStep: round1(median(samples.sdkLatest.cpu)),
    wallUsPerStep: {
      off: round1(median(samples.off.wall)),
      noSdk: round1(median(samples.noSdk.wall)),
      offContextManager: round1(median(samples.offContext.wall)),
      sdk: round1(median(samples.sdk.wall)),
      sdkLatest: round1(median(samples.sdkLatest.wall)),
    },
    tracingUsPerStep: round1(sdkUs - offUs),
    ratio: Math.round((sdkUs / offUs) * 100) / 100,
    withinTarget: sdkUs <= 2 * offUs,
  };
  if (options.print ?? true) {
    console.log(
      `telemetry: ${STEPS}-step loop (one tool call each, scripted planner, no store), median of ${result.runs} runs`,
    );
    const row = (name: string, cpu: number, wall: number) =>
      console.log(
        `  ${name.padEnd(22)} ${cpu.toFixed(1).padStart(8)} µs/step CPU  ${wall.toFixed(1).padStart(8)} µs/step wall`,
      );
    row('telemetry off', result.offUsPerStep, result.wallUsPerStep.off);
    row('on, no SDK (no-op)', result.noSdkUsPerStep, result.wallUsPerStep.noSdk);
    row('off + context manager', result.offContextManagerUsPerStep, result.wallUsPerStep.offContextManager);
    row('on, SDK recording', result.sdkUsPerStep, result.wallUsPerStep.sdk);
    row('SDK, latest GenAI', result.sdkLatestUsPerStep, result.wallUsPerStep.sdkLatest);
    console.log(
      `  tracing adds ${result.tracingUsPerStep.toFixed(1)} µs/step; SDK/off ${result.ratio}× (target ≤ 2×: ${result.withinTarget ? 'met' : 'NOT met'})`,
    );
  }
  return result;
}

function argument(name: string): number | undefined {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : Number.NaN;
  return Number.isFinite(value) ? value : undefined;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchTelemetry({ runs: argument('runs'), warmUp: argument('warm-up') });
}
