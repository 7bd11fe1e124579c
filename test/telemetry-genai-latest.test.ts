/**
 * The 2026 GenAI conventions (semantic-conventions-genai, Development), emitted with
 * `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` (docs/telemetry.md §Conventions), and
 * what stays as it was without it. Real runs (createRuntime, a scripted or a model planner on the
 * AI SDK's mock model, a real MCP server over streamable HTTP) read back from the SDK's in-memory
 * exporter and a pull metric reader.
 */
import { metrics } from '@opentelemetry/api';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { mcpToolset } from '../mcp/mcp-toolset.ts';
import { modelPlanner } from '../models/model-planner.ts';
import { type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { recordInference } from '../telemetry/inference.ts';
import { genAiLatestExperimental } from '../telemetry/semconv-opt-in.ts';
import { defineTool } from '../tools/define-tool.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { startTestMcpServer } from './support/mcp-test-server.ts';
import { restrictOnHint } from './support/restrict-on-hint.ts';
import { storedAs, until } from './support/wait.ts';

const { exporter, provider } = inMemoryTracing();
beforeEach(() => exporter.reset());
afterEach(() => {
  vi.unstubAllEnvs();
  metrics.disable();
});

const optIn = () => vi.stubEnv('OTEL_SEMCONV_STABILITY_OPT_IN', 'http, gen_ai_latest_experimental');

class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
  async byName(): Promise<Map<string, MetricData>> {
    const { resourceMetrics } = await this.collect();
    const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'toolwarden');
    return new Map((scope?.metrics ?? []).map((metric) => [metric.descriptor.name, metric]));
  }
}
function meter() {
  const reader = new TestReader();
  return { reader, meterProvider: new MeterProvider({ readers: [reader] }) };
}
/** `"k=v,…" → { count, sum }` of a histogram's points. */
function histogram(metric: MetricData | undefined): Record<string, { count: number; sum: number }> {
  const points = (metric?.dataPoints ?? []) as DataPoint<Histogram>[];
  return Object.fromEntries(
    points.map((point) => [label(point.attributes), { count: point.value.count, sum: point.value.sum ?? 0 }]),
  );
}
function sums(metric: MetricData | undefined): Record<string, number> {
  const points = (metric?.dataPoints ?? []) as DataPoint<number>[];
  return Object.fromEntries(points.map((point) => [label(point.attributes), point.value]));
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
  execute: async () => ({ id: 'cus_1' }),
});
const agent = { id: 'support', name: 'Support agent' };
const prompt = [{ role: 'user' as const, content: 'Add ada as pro' }];
const repairScript: ScriptedStep[] = [
  { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'call-1', input: { email: 'ada@example.com' } }] },
  {
    toolCalls: [
      { name: 'crm.upsert_profile', toolCallId: 'call-2', input: { email: 'ada@example.com', plan: 'pro' } },
    ],
  },
  { finalResponse: { text: 'Ada is on pro.' } },
];

function runtimeWith(steps: ScriptedStep[], extra: Partial<RuntimeOptions> = {}) {
  return createRuntime({
    agent,
    planner: scriptedPlanner(steps),
    tools: [upsert],
    policyRunner: restrictOnHint(() => 'repair first'),
    telemetry: { tracerProvider: provider },
    ...extra,
  });
}
const spansNamed = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

describe('OTEL_SEMCONV_STABILITY_OPT_IN', () => {
  it('opts in when the comma-separated list names gen_ai_latest_experimental', () => {
    const env = (value?: string) => ({ OTEL_SEMCONV_STABILITY_OPT_IN: value });
    expect(genAiLatestExperimental(env('gen_ai_latest_experimental'))).toBe(true);
    expect(genAiLatestExperimental(env('http, gen_ai_latest_experimental '))).toBe(true);
    expect(genAiLatestExperimental(env('gen_ai_latest'))).toBe(false);
    expect(genAiLatestExperimental(env('http'))).toBe(false);
    expect(genAiLatestExperimental(env(undefined))).toBe(false);
  });
});

describe('invoke_agent and plan spans', () => {
  it('by default keeps v1.36.0: gen_ai.agent.id on invoke_agent, plan spans without a GenAI operation', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-old', messages: prompt }).result();
    const [root] = spansNamed('invoke_agent Support agent');
    expect(root?.attributes).toMatchObject({
      'gen_ai.agent.id': 'support',
      'toolwarden.agent.id': 'support',
    });
    expect(spansNamed('plan Support agent')[0]?.attributes['gen_ai.operation.name']).toBeUndefined();
  });

  it('with the opt-in: no gen_ai.agent.id nor gen_ai.provider.name on the in-process invoke_agent; plan is a GenAI plan operation', async () => {
    optIn();
    await runtimeWith(repairScript).start({ runId: 'run-new', messages: prompt }).result();
    const [root] = spansNamed('invoke_agent Support agent');
    expect(root?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Support agent',
      'toolwarden.agent.id': 'support',
    });
    expect(root?.attributes['gen_ai.agent.id']).toBeUndefined();
    expect(root?.attributes['gen_ai.provider.name']).toBeUndefined();
    const plans = spansNamed('plan Support agent');
    expect(plans).toHaveLength(3);
    for (const plan of plans) {
      expect(plan.attributes).toMatchObject({
        'gen_ai.operation.name': 'plan',
        'gen_ai.agent.name': 'Support agent',
      });
    }
  });
});

describe('span links between segments', () => {
  it('links a resumed segment to the segment before it (the parent stays the first segment)', async () => {
    const asks = (id: string): ScriptedStep => ({
      await: { clarification: { id, question: `${id}?`, missingFields: ['plan'] } },
    });
    const runtime = runtimeWith([asks('q1'), asks('q2'), { finalResponse: { text: 'done' } }]);
    const run = runtime.start({ runId: 'run-links', messages: prompt });
    await until(() => run.status === 'awaiting');
    await run.provideClarification({ id: 'q1', answer: 'pro' });
    await until(() => spansNamed('invoke_agent Support agent').length === 2);
    await until(() => run.status === 'awaiting');
    await run.provideClarification({ id: 'q2', answer: 'yes' });
    expect((await run.result()).status).toBe('completed');
    const [first, second, third] = spansNamed('invoke_agent Support agent');
    expect(second?.parentSpanContext?.spanId).toBe(idOf(first!));
    expect(third?.parentSpanContext?.spanId).toBe(idOf(first!));
    // Segment 2's parent already is segment 1: only segment 3 needs a link, to segment 2.
    expect(second?.links).toEqual([]);
    expect(third?.links.map((link) => link.context.spanId)).toEqual([idOf(second!)]);
  });
});

describe('gen_ai.execution.state.changed (opt-in)', () => {
  const clarifyScript: ScriptedStep[] = [
    { await: { clarification: { id: 'q1', question: 'Free or pro?', missingFields: ['plan'] } } },
    {
      toolCalls: [
        { name: 'crm.upsert_profile', toolCallId: 'call-9', input: { email: 'a@b.co', plan: 'pro' } },
      ],
    },
    { finalResponse: { text: 'done' } },
  ];
  const stateEvents = (span: ReadableSpan | undefined) =>
    (span?.events ?? []).filter((event) => event.name === 'gen_ai.execution.state.changed');
  const ended = (count: number) => () => spansNamed('invoke_agent Support agent').length === count;

  it('records each state delta with its key count and the store version, never the restore of a resumed run', async () => {
    optIn();
    const store = memoryStore();
    const first = runtimeWith(clarifyScript.slice(0, 1), { store });
    const run = first.start({ runId: 'run-state', messages: prompt });
    await until(() => run.status === 'awaiting');
    await until(ended(1));
    await first.close();

    await storedAs(store, 'run-state', 'awaiting');
    const beforeRestore = (await store.load('run-state'))!.version;
    const second = runtimeWith(clarifyScript.slice(1), { store });
    const resumed = await second.resume('run-state');
    // The restore writes once (its run_resumed event).
    let restoredAt = beforeRestore;
    while (restoredAt === beforeRestore) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      restoredAt = (await store.load('run-state'))!.version;
    }
    await resumed.provideClarification({ id: 'q1', answer: 'pro' });
    expect((await resumed.result()).status).toBe('completed');
    await until(ended(2));
    await storedAs(store, 'run-state', 'completed');
    const finalVersion = (await store.load('run-state'))!.version;

    const [segment1, segment2] = spansNamed('invoke_agent Support agent');
    const versions = (span: ReadableSpan | undefined) =>
      stateEvents(span).map((event) => Number(event.attributes?.['gen_ai.execution.state.version']));
    for (const event of [...stateEvents(segment1), ...stateEvents(segment2)]) {
      expect(event.attributes?.['gen_ai.execution.state.changed_key.count']).toBeGreaterThan(0);
      expect(typeof event.attributes?.['gen_ai.execution.state.version']).toBe('string');
      // The delta's size only: no state values, no key names (opt-in in the conventions).
      expect(Object.keys(event.attributes ?? {}).sort()).toEqual([
        'gen_ai.execution.state.changed_key.count',
        'gen_ai.execution.state.version',
      ]);
    }
    expect(versions(segment1).length).toBeGreaterThan(0);
    expect(versions(segment2).length).toBeGreaterThan(0);
    // In order, each a version the store reached, up to the final one.
    const all = [...versions(segment1), ...versions(segment2)];
    expect([...all].sort((a, b) => a - b)).toEqual(all);
    expect(all.at(-1)).toBe(finalVersion);
    // The restore wrote a version of its own (run_resumed): no state change is reported for it.
    expect(versions(segment2).every((version) => version > restoredAt)).toBe(true);
    expect(versions(segment1).every((version) => version < restoredAt)).toBe(true);
  });

  it('records none without the opt-in', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-no-state', messages: prompt }).result();
    expect(stateEvents(spansNamed('invoke_agent Support agent')[0])).toEqual([]);
  });
});

describe('GenAI metrics (opt-in)', () => {
  it('records gen_ai.invoke_agent.* per segment and gen_ai.execute_tool.duration per executed call', async () => {
    optIn();
    const { reader, meterProvider } = meter();
    const runtime = runtimeWith(repairScript, { telemetry: { tracerProvider: provider, meterProvider } });
    await runtime.start({ runId: 'run-metrics', messages: prompt }).result();
    const byName = await reader.byName();
    const agentLabel = 'gen_ai.agent.name=Support agent';
    expect(histogram(byName.get('gen_ai.invoke_agent.duration'))).toEqual({
      [agentLabel]: { count: 1, sum: expect.any(Number) },
    });
    // Two calls the model made (one refused at the boundary, one executed), no model calls.
    expect(histogram(byName.get('gen_ai.invoke_agent.tool_calls'))).toEqual({
      [agentLabel]: { count: 1, sum: 2 },
    });
    expect(histogram(byName.get('gen_ai.invoke_agent.inference_calls'))).toEqual({
      [agentLabel]: { count: 1, sum: 0 },
    });
    expect(Object.keys(histogram(byName.get('gen_ai.execute_tool.duration')))).toEqual([
      'gen_ai.agent.name=Support agent,gen_ai.tool.name=crm.upsert_profile,gen_ai.tool.type=function',
    ]);
    expect(byName.get('gen_ai.invoke_agent.duration')?.descriptor.unit).toBe('s');
    expect(byName.get('gen_ai.invoke_agent.tool_calls')?.descriptor.unit).toBe('{tool_call}');
  });

  it('records none of them without the opt-in (toolwarden.* metrics only)', async () => {
    const { reader, meterProvider } = meter();
    const runtime = runtimeWith(repairScript, { telemetry: { tracerProvider: provider, meterProvider } });
    await runtime.start({ runId: 'run-quiet', messages: prompt }).result();
    const names = [...(await reader.byName()).keys()];
    expect(names.filter((name) => name.startsWith('gen_ai.'))).toEqual([]);
    expect(names).toContain('toolwarden.tool.calls');
  });
});

describe('model calls (modelPlanner)', () => {
  const model = () =>
    new MockLanguageModelV3({
      provider: 'local.chat',
      modelId: 'gemma-3-270m',
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Hello.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 42, noCache: 12, cacheRead: 20, cacheWrite: 10 },
          outputTokens: { total: 7, text: 4, reasoning: 3 },
        },
        response: { id: 'resp-1', modelId: 'gemma-3-270m-q4', timestamp: new Date(0) },
        warnings: [],
      }),
    });
  async function greet(meterProvider?: MeterProvider) {
    if (meterProvider) metrics.setGlobalMeterProvider(meterProvider);
    const runtime = createRuntime({
      agent: { id: 'greeter', name: 'Greeter' },
      planner: modelPlanner({ model: model(), tracerProvider: provider }),
      telemetry: { tracerProvider: provider, ...(meterProvider ? { meterProvider } : {}) },
    });
    await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();
    await runtime.close();
    const chat = spansNamed('chat gemma-3-270m')[0]!;
    const plan = spansNamed('plan Greeter')[0]!;
    return { chat, plan };
  }

  it('with the opt-in: cache_read, cache_write (not cache_creation) and reasoning tokens on the chat span, under the plan span', async () => {
    optIn();
    const { chat, plan } = await greet();
    expect(chat.parentSpanContext?.spanId).toBe(idOf(plan));
    expect(chat.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 42,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 20,
      'gen_ai.usage.cache_write.input_tokens': 10,
      'gen_ai.usage.reasoning.output_tokens': 3,
    });
    expect(Object.keys(chat.attributes).filter((key) => key.includes('cache_creation'))).toEqual([]);
  });

  it('by default: input and output tokens only', async () => {
    const { chat } = await greet();
    expect(
      Object.keys(chat.attributes)
        .filter((key) => key.startsWith('gen_ai.usage.'))
        .sort(),
    ).toEqual(['gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens']);
  });

  it('with the opt-in: gen_ai.client.inference.duration, the usage counters and the segment’s inference_calls', async () => {
    optIn();
    const { reader, meterProvider } = meter();
    await greet(meterProvider);
    const byName = await reader.byName();
    const call =
      'gen_ai.operation.name=chat,gen_ai.provider.name=local.chat,gen_ai.request.model=gemma-3-270m,gen_ai.response.model=gemma-3-270m-q4';
    expect(histogram(byName.get('gen_ai.client.inference.duration'))).toEqual({
      [call]: { count: 1, sum: expect.any(Number) },
    });
    const counted = `${call},gen_ai.token.modality=unknown`;
    expect(
      Object.fromEntries(
        [
          'gen_ai.client.inference.usage.input_tokens',
          'gen_ai.client.inference.usage.output_tokens',
          'gen_ai.client.inference.usage.cache_read.input_tokens',
          'gen_ai.client.inference.usage.cache_write.input_tokens',
          'gen_ai.client.inference.usage.reasoning.output_tokens',
        ].map((name) => [name, sums(byName.get(name))[counted]]),
      ),
    ).toEqual({
      'gen_ai.client.inference.usage.input_tokens': 42,
      'gen_ai.client.inference.usage.output_tokens': 7,
      'gen_ai.client.inference.usage.cache_read.input_tokens': 20,
      'gen_ai.client.inference.usage.cache_write.input_tokens': 10,
      'gen_ai.client.inference.usage.reasoning.output_tokens': 3,
    });
    expect(histogram(byName.get('gen_ai.invoke_agent.inference_calls'))).toEqual({
      'gen_ai.agent.name=Greeter': { count: 1, sum: 1 },
    });
  });
});

describe('recordInference (for model clients of your own)', () => {
  it('records a failed call with error.type and no usage, on the provider it is given', async () => {
    const { reader, meterProvider } = meter();
    const call = { operation: 'chat', provider: 'openai', requestModel: 'gpt-5-mini', durationS: 0.25 };
    recordInference({ ...call, errorType: 'APICallError' }, { meterProvider, latest: true });
    recordInference(call, { meterProvider, latest: false }); // the default conventions: nothing
    const byName = await reader.byName();
    expect(histogram(byName.get('gen_ai.client.inference.duration'))).toEqual({
      'error.type=APICallError,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-5-mini':
        { count: 1, sum: 0.25 },
    });
    expect(byName.has('gen_ai.client.inference.usage.input_tokens')).toBe(false);
  });
});

describe('MCP-backed tools', () => {
  it('names an isError result error.type=tool_error on the execute_tool span, next to the MCP attributes', async () => {
    const server = await startTestMcpServer([
      {
        name: 'lookup',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        call: () => ({ content: [{ type: 'text', text: 'no such article' }], isError: true }),
      },
    ]);
    const toolset = await mcpToolset({ name: 'kb', transport: { url: server.url }, onWarning: () => {} });
    try {
      const runtime = createRuntime({
        agent: { id: 'mcp-agent', name: 'KB agent' },
        tools: toolset.tools,
        planner: scriptedPlanner([
          { toolCalls: [{ name: 'kb.lookup', toolCallId: 'call-kb', input: { q: 'refunds' } }] },
          { finalResponse: { text: 'not found' } },
        ]),
        telemetry: { tracerProvider: provider },
      });
      await runtime.start({ runId: 'run-mcp', messages: prompt }).result();
      await runtime.close();
      const span = exporter.getFinishedSpans().find((s) => s.attributes['gen_ai.tool.call.id'] === 'call-kb');
      expect(span?.attributes).toMatchObject({
        'error.type': 'tool_error',
        'toolwarden.tool_call.executed': true,
        'toolwarden.tool_call.outcome': 'error',
        'mcp.method.name': 'tools/call',
        'mcp.session.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'mcp.protocol.version': expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
      });
      expect(span?.status.code).toBe(2);
    } finally {
      await toolset.close();
      await server.close();
    }
  });
});
