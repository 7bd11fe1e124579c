import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, type ToolInvocation } from '../plugins/define-plugin.ts';
import type { Planner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

// The default install with no OpenTelemetry SDK (docs/telemetry.md, its opening paragraph): no global tracer, meter
// or context manager in this file until a test registers one, the way an app that never set up
// OpenTelemetry runs. The plugin then passes calls straight on; an SDK registered later, behind
// the API's proxies, is followed from the next run segment.

const agent = { id: 'support', name: 'Support agent' };
const prompt = [{ role: 'user' as const, content: 'Look ada up' }];
const lookup = defineTool({
  id: 'crm.lookup',
  description: 'Find a customer',
  input: z.object({ email: z.string() }),
  execute: async ({ email }) => ({ email, plan: 'pro' }),
});
/** Each run: one lookup, then the answer. */
const steps = (): Planner => ({
  planStart: async () => ({ toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com' } }] }),
  planResume: async () => ({ finalResponse: { text: 'done' } }),
});

afterEach(() => {
  trace.disable();
  metrics.disable();
  context.disable();
});

/** A plugin placed after the telemetry plugin: what reaches it of each call, and in which context. */
function observer() {
  const seen: { invocation: ToolInvocation; active: ReturnType<typeof context.active> }[] = [];
  const plugin = definePlugin({
    name: 'observer',
    wrapToolCall(call, next) {
      seen.push({ invocation: call, active: context.active() });
      return next(call);
    },
  });
  return { seen, plugin };
}

class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

describe('telemetry plugin without an SDK', () => {
  it('records nothing, and a tracer registered later is followed by the next run', async () => {
    const { seen, plugin } = observer();
    const runtime = createRuntime({ agent, planner: steps(), tools: [lookup], plugins: [plugin] });
    const quiet = runtime.start({ messages: prompt });
    expect(quiet.context.traceContext).toBeNull();
    const outcome = await quiet.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.result).toEqual({ email: 'ada@example.com', plan: 'pro' });
    expect(seen).toHaveLength(1);

    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    const traced = runtime.start({ messages: prompt });
    expect(traced.context.traceContext?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect((await traced.result()).status).toBe('completed');
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(
      expect.arrayContaining(['invoke_agent Support agent', 'plan Support agent', 'execute_tool crm.lookup']),
    );
    await provider.shutdown();
  });

  it('a meter registered later is followed by the next run', async () => {
    const runtime = createRuntime({ agent, planner: steps(), tools: [lookup] });
    expect((await runtime.start({ messages: prompt }).result()).status).toBe('completed');
    const reader = new PullReader();
    expect(metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))).toBe(true);
    expect((await runtime.start({ messages: prompt }).result()).status).toBe('completed');
    const { resourceMetrics } = await reader.collect();
    const toolwarden = resourceMetrics.scopeMetrics.find((scope) => scope.scope.name === 'toolwarden');
    const calls = toolwarden?.metrics.find((metric) => metric.descriptor.name === 'toolwarden.tool.calls');
    expect(calls?.dataPoints.map((point) => point.value)).toEqual([1]);
  });

  it('keeps the segment context active in the tool when only a context manager is registered', async () => {
    // A sampled-out root still parents what the tool's own instrumentation opens (it is dropped
    // too): the plugin cannot pass calls straight on once a context manager carries contexts.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const provider = new TracerProvider({ sampler: new AlwaysOffSampler() });
    const { seen, plugin } = observer();
    const runtime = createRuntime({
      agent,
      planner: steps(),
      tools: [lookup],
      plugins: [plugin],
      telemetry: { tracerProvider: provider },
    });
    const run = runtime.start({ messages: prompt });
    expect((await run.result()).status).toBe('completed');
    const span = trace.getSpan(seen[0]!.active);
    expect(span?.isRecording()).toBe(false);
    expect(span?.spanContext().traceId).toBe(run.context.traceContext?.traceparent?.split('-')[1]);
  });
});
