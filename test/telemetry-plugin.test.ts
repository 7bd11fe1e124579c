import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  ParentBasedSampler,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { TELEMETRY_PLUGIN_NAME, telemetryPlugin } from '../telemetry/telemetry-plugin.ts';
import { spanContextFromCarrier } from '../telemetry/trace-context.ts';
import { defineTool } from '../tools/define-tool.ts';
import { RateLimitedError } from '../tools/tool-error.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { restrictOnHint } from './support/restrict-on-hint.ts';
import { storedAs, until } from './support/wait.ts';

// docs/telemetry.md through the public plugin hooks, read back from an in-memory exporter. The tracer
// provider is handed over with `telemetry: { tracerProvider }`; only the context manager is global
// (the API has no other way to carry the active span across `await`).

const { exporter, provider } = inMemoryTracing();
const userTracer = provider.getTracer('crm-client');

beforeEach(() => exporter.reset());

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
  output: z.object({ id: z.string() }),
  // The user's own instrumented call: it must nest under the tool's span.
  execute: async (input) =>
    userTracer.startActiveSpan('db.upsert', async (span) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      span.setAttribute('db.email', input.email);
      span.end();
      return { id: 'cus_1' };
    }),
});

const slowApi = defineTool({
  id: 'crm.enrich',
  description: 'Enrich a profile from a rate-limited API',
  input: z.object({ email: z.string() }),
  execute: async () => {
    throw new RateLimitedError('429 from enrich API', { retryAfterMs: 250 });
  },
});

const broken = defineTool({
  id: 'crm.broken',
  description: 'A tool with a bug',
  input: z.object({}),
  execute: async () => {
    throw new TypeError('Cannot read properties of undefined');
  },
});

const agent = { id: 'support', name: 'Support agent' };
const prompt = [{ role: 'user' as const, content: 'Add ada as pro' }];

function runtimeWith(steps: ScriptedStep[], extra: Partial<RuntimeOptions> = {}) {
  return createRuntime({
    agent,
    planner: scriptedPlanner(steps),
    tools: [upsert, slowApi, broken],
    policyRunner: restrictOnHint((hint) => `repair ${hint.tool} first`),
    telemetry: { tracerProvider: provider },
    ...extra,
  });
}

const byName = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const one = (name: string) => {
  const spans = byName(name);
  expect(spans, name).toHaveLength(1);
  return spans[0]!;
};
const toolSpan = (toolCallId: string) => {
  const span = exporter.getFinishedSpans().find((s) => s.attributes['gen_ai.tool.call.id'] === toolCallId);
  if (!span) throw new Error(`no span for ${toolCallId}`);
  return span;
};
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** The failing-then-repaired call of docs/tool-boundary.md §Failures with a policy decision in between. */
const repairScript: ScriptedStep[] = [
  { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'call-1', input: { email: 'ada@example.com' } }] },
  {
    toolCalls: [
      { name: 'crm.upsert_profile', toolCallId: 'call-2', input: { email: 'ada@example.com', plan: 'pro' } },
    ],
  },
  { finalResponse: { text: 'Ada is on pro.' } },
];

describe('telemetry plugin: the span tree of a run (docs/telemetry.md)', () => {
  it('puts one run in one trace: invoke_agent root, plan and execute_tool children, user spans under the tool', async () => {
    const runtime = runtimeWith(repairScript);
    const outcome = await runtime.start({ runId: 'run-1', sessionId: 'sess-1', messages: prompt }).result();
    expect(outcome.status).toBe('completed');

    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const root = one('invoke_agent Support agent');
    expect(root.parentSpanContext).toBeUndefined();
    const plans = byName('plan Support agent');
    const tools = byName('execute_tool crm.upsert_profile');
    expect(plans).toHaveLength(3);
    expect(tools).toHaveLength(2);
    for (const span of [...plans, ...tools]) expect(parentOf(span)).toBe(idOf(root));
    expect(parentOf(one('db.upsert'))).toBe(idOf(toolSpan('call-2')));
    expect(spans.map((span) => span.kind).every((kind) => kind === SpanKind.INTERNAL)).toBe(true);
    expect(
      spans.every((span) => span.instrumentationScope.name === 'toolwarden' || span.name === 'db.upsert'),
    ).toBe(true);
  });

  it('gives the root span the GenAI agent attributes and the final run status', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-1', sessionId: 'sess-1', messages: prompt }).result();
    const root = one('invoke_agent Support agent');
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': 'support',
      'gen_ai.agent.name': 'Support agent',
      'gen_ai.conversation.id': 'sess-1',
      'toolwarden.agent.id': 'support',
      'toolwarden.run.id': 'run-1',
      'toolwarden.run.status': 'completed',
    });
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records each planner turn with its turn id, plan kind and result kind', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-1', messages: prompt }).result();
    const plans = byName('plan Support agent').sort((a, b) =>
      String(a.attributes['toolwarden.turn.id']).localeCompare(String(b.attributes['toolwarden.turn.id'])),
    );
    expect(plans.map((span) => span.attributes)).toEqual([
      {
        'toolwarden.run.id': 'run-1',
        'toolwarden.turn.id': 'run-1:t1',
        'toolwarden.plan.kind': 'start',
        'toolwarden.plan.result_kind': 'tool_calls',
      },
      {
        'toolwarden.run.id': 'run-1',
        'toolwarden.turn.id': 'run-1:t2',
        'toolwarden.plan.kind': 'resume',
        'toolwarden.plan.result_kind': 'tool_calls',
      },
      {
        'toolwarden.run.id': 'run-1',
        'toolwarden.turn.id': 'run-1:t3',
        'toolwarden.plan.kind': 'resume',
        'toolwarden.plan.result_kind': 'final_response',
      },
    ]);
  });

  it('marks a finalizing turn `finalize` and an awaiting turn `await`', async () => {
    const runtime = runtimeWith(
      [
        {
          toolCalls: [
            { name: 'crm.upsert_profile', toolCallId: 'c1', input: { email: 'a@b.co', plan: 'pro' } },
          ],
        },
        { finalResponse: { text: 'capped' } },
      ],
      { caps: { maxToolCalls: 1 } },
    );
    await runtime.start({ runId: 'run-fin', messages: prompt }).result();
    expect(byName('plan Support agent').map((span) => span.attributes['toolwarden.plan.kind'])).toEqual([
      'start',
      'finalize',
    ]);
    expect(one('invoke_agent Support agent').attributes['toolwarden.run.finalize_reason']).toBe('tool_cap');

    exporter.reset();
    const waiting = runtimeWith([{ await: { clarification: { id: 'q1', question: 'Which plan?' } } }]);
    const run = waiting.start({ runId: 'run-await', messages: prompt });
    await until(() => run.status === 'awaiting');
    expect(one('plan Support agent').attributes['toolwarden.plan.result_kind']).toBe('await');
    run.cancel();
  });

  it('records every ToolCallMeta and GenAI attribute on an executed call', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-1', sessionId: 'sess-1', messages: prompt }).result();
    const span = toolSpan('call-2');
    expect(span.name).toBe('execute_tool crm.upsert_profile');
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'crm.upsert_profile',
      'gen_ai.tool.call.id': 'call-2',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'Create or update a customer profile',
      'toolwarden.run.id': 'run-1',
      'toolwarden.session.id': 'sess-1',
      'toolwarden.turn.id': 'run-1:t2',
      'toolwarden.tool_call.id': 'run-1:t2:c1',
      'toolwarden.tool_call.attempt': 2,
      'toolwarden.tool_call.executed': true,
      'toolwarden.tool_call.outcome': 'success',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events).toEqual([]);
  });

  it('gives a call rejected in validation its own span: executed=false, ERROR, error.type = reason, the hint as event', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-1', sessionId: 'sess-1', messages: prompt }).result();
    const span = toolSpan('call-1');
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'crm.upsert_profile',
      'gen_ai.tool.call.id': 'call-1',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'Create or update a customer profile',
      'toolwarden.run.id': 'run-1',
      'toolwarden.session.id': 'sess-1',
      'toolwarden.turn.id': 'run-1:t1',
      'toolwarden.tool_call.id': 'run-1:t1:c1',
      'toolwarden.tool_call.attempt': 1,
      'toolwarden.tool_call.executed': false,
      'toolwarden.tool_call.outcome': 'rejected',
      'error.type': 'missing_fields',
    });
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: expect.stringContaining('Argument validation failed'),
    });
    expect(span.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        'toolwarden.retry_hint',
        {
          'toolwarden.retry_hint.reason': 'missing_fields',
          'gen_ai.tool.name': 'crm.upsert_profile',
          'toolwarden.retry_hint.restrict_to_tool': true,
          'toolwarden.retry_hint.missing_fields': ['plan'],
          'toolwarden.retry_hint.message': expect.stringContaining('plan'),
        },
      ],
    ]);
  });

  it('puts policy decisions on the root segment span as toolwarden.policy_decision events', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-1', messages: prompt }).result();
    const root = one('invoke_agent Support agent');
    expect(root.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        'toolwarden.policy_decision',
        {
          'toolwarden.policy.name': 'restrict-on-invalid',
          'toolwarden.policy.hook': 'onRetryHint',
          'toolwarden.policy.decision.kind': 'restrictToTool',
          'toolwarden.policy.decision.detail': '{"restrictToTool":"crm.upsert_profile"}',
          'toolwarden.policy.note': 'repair crm.upsert_profile first',
          'toolwarden.turn.id': 'run-1:t1',
          'toolwarden.tool_call.id': 'run-1:t1:c1',
          'gen_ai.tool.name': 'crm.upsert_profile',
        },
      ],
    ]);
  });

  it('sets error.type to the retry reason for an executed call that failed with a hint', async () => {
    const runtime = runtimeWith([
      { toolCalls: [{ name: 'crm.enrich', toolCallId: 'call-rl', input: { email: 'a@b.co' } }] },
      { finalResponse: { text: 'later' } },
    ]);
    await runtime.start({ runId: 'run-rl', messages: prompt }).result();
    const span = toolSpan('call-rl');
    expect(span.attributes).toMatchObject({
      'toolwarden.tool_call.executed': true,
      'toolwarden.tool_call.attempt': 1,
      'error.type': 'rate_limited',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.events[0]?.attributes).toMatchObject({
      'toolwarden.retry_hint.reason': 'rate_limited',
      'toolwarden.retry_hint.retry_after_ms': 250,
      'toolwarden.retry_hint.restrict_to_tool': false,
      'toolwarden.retry_hint.missing_fields': [],
    });
  });

  it("sets error.type to the error's class for a call whose execute threw", async () => {
    const runtime = runtimeWith([
      { toolCalls: [{ name: 'crm.broken', toolCallId: 'call-bug', input: {} }] },
      { finalResponse: { text: 'sorry' } },
    ]);
    await runtime.start({ runId: 'run-bug', messages: prompt }).result();
    const span = toolSpan('call-bug');
    expect(span.attributes).toMatchObject({
      'toolwarden.tool_call.executed': true,
      'toolwarden.tool_call.outcome': 'error',
      'error.type': 'TypeError',
    });
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'Cannot read properties of undefined',
    });
  });

  it('gives an unknown tool a span too (executed=false, tool_unavailable) under the name the model used', async () => {
    const runtime = runtimeWith([
      { toolCalls: [{ name: 'crm.upsert_profil', toolCallId: 'call-typo', input: {} }] },
      { finalResponse: { text: 'no such tool' } },
    ]);
    await runtime.start({ runId: 'run-typo', messages: prompt }).result();
    const span = toolSpan('call-typo');
    expect(span.name).toBe('execute_tool crm.upsert_profil');
    expect(span.attributes).toMatchObject({
      'toolwarden.tool_call.executed': false,
      'error.type': 'tool_unavailable',
    });
    expect(span.attributes['gen_ai.tool.description']).toBeUndefined();
  });

  it('records a failed run: root ERROR with error.type, plan span ERROR with the exception', async () => {
    class LlmDownError extends Error {
      override name = 'LlmDownError';
    }
    const runtime = runtimeWith([
      () => {
        throw new LlmDownError('upstream 503');
      },
    ]);
    const outcome = await runtime.start({ runId: 'run-fail', messages: prompt }).result();
    expect(outcome.status).toBe('failed');
    const root = one('invoke_agent Support agent');
    expect(root.attributes).toMatchObject({
      'toolwarden.run.status': 'failed',
      'error.type': 'LlmDownError',
    });
    expect(root.status.code).toBe(SpanStatusCode.ERROR);
    const plan = one('plan Support agent');
    expect(plan.attributes['error.type']).toBe('LlmDownError');
    expect(plan.status).toEqual({ code: SpanStatusCode.ERROR, message: 'upstream 503' });
    expect(plan.events.map((event) => event.name)).toEqual(['exception']);
  });

  it("sums the planner turns' token usage on the invoke_agent span (gen_ai.usage.*), per segment", async () => {
    const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });
    const runtime = runtimeWith([
      { ...repairScript[0]!, ...usage(120, 14) },
      { ...repairScript[1]!, ...usage(150, 16) },
      { finalResponse: { text: 'Ada is on pro.' }, ...usage(170, 9) },
    ]);
    await runtime.start({ runId: 'run-usage', messages: prompt }).result();
    expect(one('invoke_agent Support agent').attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 440,
      'gen_ai.usage.output_tokens': 39,
    });
    // A planner that reports no usage leaves the attributes unset rather than claiming zero.
    exporter.reset();
    await runtimeWith(repairScript).start({ runId: 'run-no-usage', messages: prompt }).result();
    expect(one('invoke_agent Support agent').attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  it("nests the run under the caller's active span when runtime.start is called inside one", async () => {
    const runtime = runtimeWith([{ finalResponse: { text: 'hi' } }]);
    const outcome = await userTracer.startActiveSpan('POST /chat', async (request) => {
      const result = await runtime.start({ runId: 'run-nested', messages: prompt }).result();
      request.end();
      return result;
    });
    expect(outcome.status).toBe('completed');
    expect(parentOf(one('invoke_agent Support agent'))).toBe(idOf(one('POST /chat')));
  });
});

describe('telemetry plugin: a run that awaits continues its trace (docs/telemetry.md)', () => {
  const clarifyScript: ScriptedStep[] = [
    { await: { clarification: { id: 'q1', question: 'Free or pro?', missingFields: ['plan'] } } },
    {
      toolCalls: [
        { name: 'crm.upsert_profile', toolCallId: 'call-9', input: { email: 'a@b.co', plan: 'pro' } },
      ],
    },
    { finalResponse: { text: 'done' } },
  ];

  it('ends the segment at awaiting and opens a child segment in the same trace when the answer arrives', async () => {
    const runtime = runtimeWith(clarifyScript);
    const run = runtime.start({ runId: 'run-wait', sessionId: 's', messages: prompt });
    await until(() => run.status === 'awaiting');
    const [first] = byName('invoke_agent Support agent');
    expect(first?.attributes).toMatchObject({
      'toolwarden.run.status': 'awaiting',
      'toolwarden.run.awaiting': 'clarification',
    });
    const stored = spanContextFromCarrier(run.context.traceContext);
    expect(stored?.spanId).toBe(idOf(first!));
    expect(stored?.traceId).toBe(first!.spanContext().traceId);

    await run.provideClarification({ id: 'q1', answer: 'pro' });
    expect((await run.result()).status).toBe('completed');
    const segments = byName('invoke_agent Support agent');
    expect(segments).toHaveLength(2);
    const second = segments[1]!;
    expect(parentOf(second)).toBe(idOf(first!));
    expect(second.attributes).toMatchObject({
      'toolwarden.run.status': 'completed',
      'toolwarden.run.id': 'run-wait',
    });
    expect(new Set(exporter.getFinishedSpans().map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(parentOf(toolSpan('call-9'))).toBe(idOf(second));
  });

  it('continues the trace in a fresh runtime that resumes the run from the store (another process)', async () => {
    const store = memoryStore();
    const first = runtimeWith(clarifyScript.slice(0, 1), { store });
    const run = first.start({ runId: 'run-moved', messages: prompt });
    await until(() => run.status === 'awaiting');
    await storedAs(store, 'run-moved', 'awaiting');
    const segmentOne = one('invoke_agent Support agent');

    // The first process goes away, releasing the run it holds (docs/durability.md).
    await first.close();
    // A second runtime: new plugin instance, new planner; it knows the run only from the store.
    const second = runtimeWith(clarifyScript.slice(1), { store });
    const resumed = await second.resume('run-moved');
    await resumed.provideClarification({ id: 'q1', answer: 'pro' });
    expect((await resumed.result()).status).toBe('completed');

    const segments = byName('invoke_agent Support agent');
    expect(segments).toHaveLength(2);
    const segmentTwo = segments.find((span) => span !== segmentOne)!;
    expect(segmentTwo.spanContext().traceId).toBe(segmentOne.spanContext().traceId);
    expect(parentOf(segmentTwo)).toBe(idOf(segmentOne));
    expect(parentOf(toolSpan('call-9'))).toBe(idOf(segmentTwo));
    expect(byName('plan Support agent').map((span) => span.attributes['toolwarden.plan.kind'])).toEqual([
      'start',
      'resume',
      'resume',
    ]);
  });

  it("links the caller's span when a resumed segment starts inside another trace", async () => {
    const runtime = runtimeWith(clarifyScript);
    const run = runtime.start({ runId: 'run-link', messages: prompt });
    await until(() => run.status === 'awaiting');
    await userTracer.startActiveSpan('POST /answer', async (request) => {
      await run.provideClarification({ id: 'q1', answer: 'pro' });
      request.end();
    });
    await run.result();
    const second = byName('invoke_agent Support agent')[1]!;
    const request = one('POST /answer');
    expect(second.links.map((link) => link.context.spanId)).toEqual([idOf(request)]);
    expect(second.spanContext().traceId).not.toBe(request.spanContext().traceId);
  });

  it('records a run canceled while awaiting as a short canceled segment', async () => {
    const runtime = runtimeWith(clarifyScript);
    const run = runtime.start({ runId: 'run-cancel', messages: prompt });
    await until(() => run.status === 'awaiting');
    run.cancel('user left');
    await run.result();
    expect(
      byName('invoke_agent Support agent').map((span) => span.attributes['toolwarden.run.status']),
    ).toEqual(['awaiting', 'canceled']);
  });

  it('gives calls the app answers (external tools) an execute_tool span in the segment that receives them', async () => {
    const runtime = runtimeWith([
      {
        await: {
          externalTools: {
            id: 'x1',
            calls: [{ name: 'crm.upsert_profile', toolCallId: 'ext-1', input: {} }],
          },
        },
      },
      { finalResponse: { text: 'ok' } },
    ]);
    const run = runtime.start({ runId: 'run-ext', messages: prompt });
    await until(() => run.status === 'awaiting');
    await run.provideToolResults([{ toolCallId: 'ext-1', result: { id: 'cus_7' } }]);
    await run.result();
    const span = toolSpan('ext-1');
    expect(span.attributes).toMatchObject({
      'toolwarden.tool_call.executed': true,
      'toolwarden.run.id': 'run-ext',
    });
    expect(parentOf(span)).toBe(idOf(byName('invoke_agent Support agent')[1]!));
  });
});

describe('telemetry plugin: content capture (docs/telemetry.md)', () => {
  it('records no arguments or results by default', async () => {
    await runtimeWith(repairScript).start({ runId: 'run-1', messages: prompt }).result();
    for (const span of exporter.getFinishedSpans()) {
      expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
      expect(span.attributes['gen_ai.tool.call.result']).toBeUndefined();
    }
  });

  it('records arguments and results through the redact hook when captureContent is true', async () => {
    const seen: string[] = [];
    const runtime = runtimeWith(repairScript, {
      telemetry: {
        tracerProvider: provider,
        captureContent: true,
        redact: (value, info) => {
          seen.push(`${info.kind} ${info.tool} ${info.toolCallId}`);
          if (info.kind === 'arguments') return { ...(value as object), email: '[email]' };
          return value;
        },
      },
    });
    await runtime.start({ runId: 'run-1', messages: prompt }).result();
    expect(toolSpan('call-1').attributes['gen_ai.tool.call.arguments']).toBe('{"email":"[email]"}');
    expect(toolSpan('call-1').attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(toolSpan('call-2').attributes['gen_ai.tool.call.arguments']).toBe(
      '{"email":"[email]","plan":"pro"}',
    );
    expect(toolSpan('call-2').attributes['gen_ai.tool.call.result']).toBe('{"id":"cus_1"}');
    expect(seen).toEqual([
      'arguments crm.upsert_profile run-1:t1:c1',
      'arguments crm.upsert_profile run-1:t2:c1',
      'result crm.upsert_profile run-1:t2:c1',
    ]);
  });

  it('records nothing for a value redact maps to undefined, and a marker when redact throws', async () => {
    const runtime = runtimeWith(repairScript.slice(1), {
      telemetry: {
        tracerProvider: provider,
        captureContent: true,
        redact: (_value, info) => {
          if (info.kind === 'arguments') return undefined;
          throw new Error('redactor bug');
        },
      },
    });
    await runtime.start({ runId: 'run-r', messages: prompt }).result();
    expect(toolSpan('call-2').attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(toolSpan('call-2').attributes['gen_ai.tool.call.result']).toBe('[redaction failed]');
  });
});

describe('telemetry plugin: installation (docs/telemetry.md)', () => {
  it('is on by default through the global API, and telemetry: false turns it off', async () => {
    trace.setGlobalTracerProvider(provider);
    try {
      const steps: ScriptedStep[] = [{ finalResponse: { text: 'hi' } }];
      await createRuntime({ agent, planner: scriptedPlanner(steps) })
        .start({ messages: prompt })
        .result();
      expect(byName('invoke_agent Support agent')).toHaveLength(1);

      exporter.reset();
      await createRuntime({ agent, planner: scriptedPlanner(steps), telemetry: false })
        .start({ messages: prompt })
        .result();
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      trace.disable();
    }
  });

  it('installs no second plugin when the app placed telemetryPlugin among its plugins', async () => {
    const plugin = telemetryPlugin({ tracerProvider: provider });
    expect(plugin.name).toBe(TELEMETRY_PLUGIN_NAME);
    const runtime = createRuntime({
      agent,
      planner: scriptedPlanner([{ finalResponse: { text: 'hi' } }]),
      plugins: [plugin],
      telemetry: { tracerProvider: provider },
    });
    await runtime.start({ messages: prompt }).result();
    expect(byName('invoke_agent Support agent')).toHaveLength(1);
    expect(byName('plan Support agent')).toHaveLength(1);
  });

  it('opens no child spans in a sampled-out run, and keeps the user spans of its tools in it (dropped too)', async () => {
    const sampledOut = new TracerProvider({
      sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const runtime = runtimeWith(repairScript, { telemetry: { tracerProvider: sampledOut } });
    const run = runtime.start({ runId: 'run-dropped', messages: prompt });
    expect((await run.result()).status).toBe('completed');
    // `db.upsert` (the tool's own span, from the always-sampling test provider) had the dropped
    // root as parent, so it was dropped as well instead of starting a trace of its own.
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual([]);
    expect(spanContextFromCarrier(run.context.traceContext)?.traceFlags).toBe(0);
    await sampledOut.shutdown();
  });

  it('keeps traceContext null and records nothing while no SDK is registered', async () => {
    const runtime = createRuntime({ agent, planner: scriptedPlanner([{ finalResponse: { text: 'hi' } }]) });
    const run = runtime.start({ messages: prompt });
    expect(run.context.traceContext).toBeNull();
    expect((await run.result()).status).toBe('completed');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
