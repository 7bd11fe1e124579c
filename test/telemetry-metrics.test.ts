import { createNoopMeter, metrics } from '@opentelemetry/api';
import {
  type DataPoint,
  DataPointType,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import { AlwaysOffSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import { type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import { NO_EFFECTS } from '../run/policy-effects.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { TOOLWARDEN_METRICS } from '../telemetry/attributes.ts';
import { createInstruments, TOOL_DURATION_BUCKETS_S } from '../telemetry/metrics.ts';
import { OTHER_TOOL } from '../telemetry/telemetry-plugin.ts';
import { defineTool } from '../tools/define-tool.ts';
import { until } from './support/wait.ts';

// docs/telemetry.md §Metrics, read with a pull reader from an SDK MeterProvider handed over through
// `telemetry: { meterProvider }`. Counters are cumulative: each test uses its own provider.

/** A reader the test pulls from (`collect()`), as a Prometheus exporter would. */
class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}

  /** Every metric of the `toolwarden` scope, by name. */
  async byName(): Promise<Map<string, MetricData>> {
    const { resourceMetrics, errors } = await this.collect();
    expect(errors).toEqual([]);
    const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'toolwarden');
    return new Map((scope?.metrics ?? []).map((metric) => [metric.descriptor.name, metric]));
  }
}

function meter() {
  const reader = new TestReader();
  return { reader, provider: new MeterProvider({ readers: [reader] }) };
}

/** `attributes → value` of a sum's points, as `"k=v,k=v": value`, sorted. */
function sums(metric: MetricData | undefined): Record<string, number> {
  const points = (metric?.dataPoints ?? []) as DataPoint<number>[];
  return Object.fromEntries(points.map((point) => [label(point.attributes), point.value]).sort());
}
const label = (attributes: Record<string, unknown>) =>
  Object.entries(attributes)
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join(',');

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.string(), plan: z.enum(['free', 'pro']) }),
  execute: async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { id: 'cus_1' };
  },
});
const broken = defineTool({
  id: 'crm.broken',
  description: 'Always throws',
  input: z.object({}),
  execute: async () => {
    throw new Error('bug');
  },
});

const restrictOnHint: PolicyRunner = {
  onToolBatch: async () => NO_EFFECTS,
  onResults: async (_context, _results, hints) =>
    hints.length === 0
      ? NO_EFFECTS
      : {
          decisions: hints.map((hint) => ({
            policy: 'restrict-on-invalid',
            hook: 'onRetryHint' as const,
            kinds: ['restrictToTool'],
            decision: { restrictToTool: hint.tool },
            toolCallId: hint.toolCallId,
            tool: hint.tool,
          })),
        },
};

const prompt = [{ role: 'user' as const, content: 'go' }];

function runtimeWith(steps: ScriptedStep[], provider: MeterProvider, extra: Partial<RuntimeOptions> = {}) {
  return createRuntime({
    agent: { id: 'support', name: 'Support agent' },
    planner: scriptedPlanner(steps),
    tools: [upsert, broken],
    policyRunner: restrictOnHint,
    telemetry: { meterProvider: provider },
    ...extra,
  });
}

const busyScript: ScriptedStep[] = [
  {
    toolCalls: [
      { name: 'crm.upsert_profile', toolCallId: 'c1', input: { email: 'a@b.co' } },
      { name: 'crm.imaginary', toolCallId: 'c2', input: {} },
      { name: 'crm.broken', toolCallId: 'c3', input: {} },
    ],
  },
  { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'c4', input: { email: 'a@b.co', plan: 'pro' } }] },
  { finalResponse: { text: 'done' } },
];

describe('telemetry metrics (docs/telemetry.md)', () => {
  afterAll(() => metrics.disable());

  it('counts tool calls by tool and outcome (success, error, rejected); invented tool ids become _OTHER', async () => {
    const { reader, provider } = meter();
    await runtimeWith(busyScript, provider).start({ messages: prompt }).result();
    expect(sums((await reader.byName()).get('toolwarden.tool.calls'))).toEqual({
      'gen_ai.tool.name=crm.upsert_profile,toolwarden.tool_call.outcome=rejected': 1,
      'gen_ai.tool.name=crm.upsert_profile,toolwarden.tool_call.outcome=success': 1,
      'gen_ai.tool.name=crm.broken,toolwarden.tool_call.outcome=error': 1,
      [`gen_ai.tool.name=${OTHER_TOOL},toolwarden.tool_call.outcome=rejected`]: 1,
    });
  });

  it('records tool durations in seconds, with second-sized buckets, for calls that ran', async () => {
    const { reader, provider } = meter();
    await runtimeWith(busyScript, provider).start({ messages: prompt }).result();
    const metric = (await reader.byName()).get('toolwarden.tool.duration')!;
    expect(metric.descriptor).toMatchObject({
      unit: 's',
      description: 'Duration of tool calls, from admission to result.',
    });
    const points = metric.dataPoints as DataPoint<Histogram>[];
    const success = points.find((p) => p.attributes['toolwarden.tool_call.outcome'] === 'success')!;
    expect(success.attributes['gen_ai.tool.name']).toBe('crm.upsert_profile');
    expect(success.value.count).toBe(1);
    // The tool sleeps 20 ms: the value is in seconds, not milliseconds.
    expect(success.value.sum).toBeGreaterThanOrEqual(0.015);
    expect(success.value.sum).toBeLessThan(1);
    expect(success.value.buckets.boundaries).toEqual(TOOL_DURATION_BUCKETS_S);
    expect(points.map((p) => p.attributes['toolwarden.tool_call.outcome']).sort()).toEqual([
      'error',
      'success',
    ]);
  });

  it('counts retry hints by reason and tool', async () => {
    const { reader, provider } = meter();
    await runtimeWith(busyScript, provider).start({ messages: prompt }).result();
    expect(sums((await reader.byName()).get('toolwarden.retry_hints'))).toEqual({
      'gen_ai.tool.name=crm.upsert_profile,toolwarden.retry_hint.reason=missing_fields': 1,
      [`gen_ai.tool.name=${OTHER_TOOL},toolwarden.retry_hint.reason=tool_unavailable`]: 1,
    });
  });

  it('counts policy decisions by policy and kind', async () => {
    const { reader, provider } = meter();
    await runtimeWith(busyScript, provider).start({ messages: prompt }).result();
    expect(sums((await reader.byName()).get('toolwarden.policy.decisions'))).toEqual({
      'toolwarden.policy.decision.kind=restrictToTool,toolwarden.policy.name=restrict-on-invalid': 2,
    });
  });

  it('counts ended segments by status and runs in progress with an up-down counter', async () => {
    const { reader, provider } = meter();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runtime = runtimeWith(
      [
        { await: { clarification: { id: 'q1', question: 'Which plan?' } } },
        async () => {
          await gate;
          return { finalResponse: { text: 'ok' } };
        },
      ],
      provider,
    );
    const run = runtime.start({ messages: prompt });
    await until(() => run.status === 'awaiting');
    let byName = await reader.byName();
    expect(sums(byName.get('toolwarden.runs.active'))).toEqual({ '': 0 });
    expect(sums(byName.get('toolwarden.runs'))).toEqual({ 'toolwarden.run.status=awaiting': 1 });

    await run.provideClarification({ id: 'q1', answer: 'pro' });
    await until(() => run.state === 'planning');
    expect(sums((await reader.byName()).get('toolwarden.runs.active'))).toEqual({ '': 1 });

    release();
    await run.result();
    const failing = runtimeWith([], provider).start({ messages: prompt });
    await failing.result();
    byName = await reader.byName();
    expect(sums(byName.get('toolwarden.runs.active'))).toEqual({ '': 0 });
    expect(sums(byName.get('toolwarden.runs'))).toEqual({
      'toolwarden.run.status=awaiting': 1,
      'toolwarden.run.status=completed': 1,
      'toolwarden.run.status=failed': 1,
    });
  });

  it('creates every instrument with the unit and description of TOOLWARDEN_METRICS', async () => {
    const { reader, provider } = meter();
    await runtimeWith(busyScript, provider).start({ messages: prompt }).result();
    const kindOf = (m: MetricData) =>
      m.dataPointType === DataPointType.HISTOGRAM
        ? 'histogram'
        : m.dataPointType === DataPointType.SUM && m.isMonotonic
          ? 'counter'
          : m.dataPointType === DataPointType.SUM
            ? 'updowncounter'
            : 'other';
    const created = [...(await reader.byName()).values()].map((m) => ({
      name: m.descriptor.name,
      instrument: kindOf(m),
      unit: m.descriptor.unit,
      description: m.descriptor.description,
    }));
    const expected = Object.values(TOOLWARDEN_METRICS).map(({ name, instrument, unit, description }) => ({
      name,
      instrument,
      unit,
      description,
    }));
    const byMetricName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(created.sort(byMetricName)).toEqual(expected.sort(byMetricName));
    expect(created).toHaveLength(6);
  });

  it('records metrics for runs whose traces are sampled out', async () => {
    const { reader, provider } = meter();
    const tracerProvider = new TracerProvider({ sampler: new AlwaysOffSampler() });
    await runtimeWith(busyScript, provider, {
      telemetry: { meterProvider: provider, tracerProvider },
    })
      .start({ messages: prompt })
      .result();
    const byName = await reader.byName();
    expect(sums(byName.get('toolwarden.tool.calls'))).toMatchObject({
      'gen_ai.tool.name=crm.upsert_profile,toolwarden.tool_call.outcome=success': 1,
      'gen_ai.tool.name=crm.broken,toolwarden.tool_call.outcome=error': 1,
    });
    expect((byName.get('toolwarden.tool.duration')?.dataPoints ?? []).length).toBe(2);
    expect(sums(byName.get('toolwarden.retry_hints'))).toMatchObject({
      'gen_ai.tool.name=crm.upsert_profile,toolwarden.retry_hint.reason=missing_fields': 1,
    });
    expect(sums(byName.get('toolwarden.policy.decisions'))).not.toEqual({});
    expect(sums(byName.get('toolwarden.runs'))).toEqual({ 'toolwarden.run.status=completed': 1 });
  });

  it('says its instruments record nothing on the no-op meter of @opentelemetry/api (no SDK), so hooks skip their attributes', () => {
    expect(createInstruments({ getMeter: () => createNoopMeter() }).recording).toBe(false);
    expect(createInstruments(meter().provider).recording).toBe(true);
  });

  it('reports to a global MeterProvider registered after the runtime was created', async () => {
    const runtime = createRuntime({
      agent: { id: 'late' },
      planner: scriptedPlanner([{ finalResponse: { text: 'hi' } }, { finalResponse: { text: 'hi' } }]),
    });
    await runtime.start({ messages: prompt }).result();
    const { reader, provider } = meter();
    metrics.setGlobalMeterProvider(provider);
    await runtime.start({ messages: prompt }).result();
    expect(sums((await reader.byName()).get('toolwarden.runs'))).toEqual({
      'toolwarden.run.status=completed': 1,
    });
  });
});
