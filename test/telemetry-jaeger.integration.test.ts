import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { startTelemetry } from '../telemetry/setup.ts';
import { spanContextFromCarrier } from '../telemetry/trace-context.ts';
import { defineTool } from '../tools/define-tool.ts';
import {
  eventNames,
  JAEGER_OTLP_HTTP_URL,
  JaegerClient,
  type JaegerSpan,
  type JaegerTrace,
  jaegerSuite,
  parentSpanId,
  tagsOf,
} from './support/jaeger.ts';
import { restrictOnHint } from './support/restrict-on-hint.ts';
import { storedAs, until } from './support/wait.ts';

// Real runs (createRuntime + scripted planner, telemetry on by default through the global API)
// exported by `startTelemetry` over OTLP/HTTP to a real Jaeger v2 and read back through its
// query API (docs/telemetry.md: "verified against a real Jaeger"). Same gating as the setup suite: skipped
// with a message without Jaeger on a developer's machine, failing in CI.
const SUITE = 'telemetry plugin → OTLP/HTTP → Jaeger: real runs';
const jaegerGate = await jaegerSuite(SUITE);

const AGENT = { id: 'support', name: 'Support agent' };

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
  output: z.object({ id: z.string() }),
  // An instrumented client call inside `execute`: it must nest under the tool span.
  execute: async () =>
    trace.getTracer('crm-client').startActiveSpan('db.upsert', async (span) => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      span.end();
      return { id: 'cus_1' };
    }),
});

const repairScript: ScriptedStep[] = [
  { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'call-1', input: { email: 'ada@example.com' } }] },
  {
    toolCalls: [
      { name: 'crm.upsert_profile', toolCallId: 'call-2', input: { email: 'ada@example.com', plan: 'pro' } },
    ],
  },
  { finalResponse: { text: 'Ada is on pro.' } },
];
const clarifyScript: ScriptedStep[] = [
  { await: { clarification: { id: 'q1', question: 'Free or pro?', missingFields: ['plan'] } } },
  {
    toolCalls: [
      { name: 'crm.upsert_profile', toolCallId: 'call-9', input: { email: 'bob@example.com', plan: 'free' } },
    ],
  },
  { finalResponse: { text: 'Bob is on free.' } },
];

describe.skipIf(!jaegerGate.run)(SUITE, () => {
  const jaeger = new JaegerClient();
  const serviceName = `toolwarden-runs-${randomUUID().slice(0, 8)}`;
  const repairRunId = `run-repair-${randomUUID().slice(0, 8)}`;
  const resumedRunId = `run-resumed-${randomUUID().slice(0, 8)}`;
  let repairTraceId: string;
  let resumedTraceId: string;
  let repair: JaegerTrace;
  let resumed: JaegerTrace;

  beforeAll(async () => {
    jaegerGate.assertAvailable();
    const telemetry = startTelemetry({ serviceName, otlpEndpoint: JAEGER_OTLP_HTTP_URL });
    try {
      const store = memoryStore();
      // Process 1: a run that fails a call, is steered by a policy and repairs it; a run that awaits.
      const first = createRuntime({
        agent: AGENT,
        planner: scriptedPlanner(repairScript),
        tools: [upsert],
        policyRunner: restrictOnHint(() => 'repair the call first'),
        store,
      });
      const run = first.start({ runId: repairRunId, sessionId: 'sess-ada', messages: prompt('ada') });
      expect((await run.result()).status).toBe('completed');
      // The trace context the run keeps in its snapshot names the trace to read back.
      repairTraceId = traceIdOf(run.context.traceContext);

      const asking = createRuntime({
        agent: AGENT,
        planner: scriptedPlanner(clarifyScript.slice(0, 1)),
        tools: [upsert],
        store,
      });
      const waiting = asking.start({ runId: resumedRunId, sessionId: 'sess-bob', messages: prompt('bob') });
      await until(() => waiting.status === 'awaiting');
      await storedAs(store, resumedRunId, 'awaiting');
      resumedTraceId = traceIdOf(waiting.context.traceContext);
      // Process 1 goes away, releasing the run it holds (docs/durability.md).
      await asking.close();

      // "Process 2": a fresh runtime that knows the run only from the store.
      const second = createRuntime({
        agent: AGENT,
        planner: scriptedPlanner(clarifyScript.slice(1)),
        tools: [upsert],
        store,
      });
      const handle = await second.resume(resumedRunId);
      await handle.provideClarification({ id: 'q1', answer: 'free' });
      expect((await handle.result()).status).toBe('completed');
    } finally {
      await telemetry.shutdown();
    }
    [repair, resumed] = await Promise.all([
      jaeger.waitForTrace(repairTraceId, { until: (t) => t.spans.length >= 7 }),
      jaeger.waitForTrace(resumedTraceId, { until: (t) => t.spans.length >= 7 }),
    ]);
  });

  it('stores one trace per run, findable by service and by toolwarden.run.id', async () => {
    expect(repairTraceId).not.toBe(resumedTraceId);
    const all = await jaeger.findTraces({ service: serviceName });
    expect(all.map((t) => t.traceID).sort()).toEqual([repairTraceId, resumedTraceId].sort());
    for (const [runId, traceId] of [
      [repairRunId, repairTraceId],
      [resumedRunId, resumedTraceId],
    ] as const) {
      const found = await jaeger.findTraces({ service: serviceName, tags: { 'toolwarden.run.id': runId } });
      expect(found.map((t) => t.traceID)).toEqual([traceId]);
      const spans = found[0]!.spans.filter((span) => span.operationName !== 'db.upsert');
      expect(spans.every((span) => tagsOf(span)['toolwarden.run.id'] === runId)).toBe(true);
    }
  });

  it('keeps the tree: invoke_agent → plan ×3 and execute_tool ×2, the user span under its tool span', () => {
    const root = only(repair, 'invoke_agent Support agent');
    expect(parentSpanId(root)).toBeUndefined();
    expect(repair.spans).toHaveLength(7);
    const children = repair.spans.filter((span) => parentSpanId(span) === root.spanID);
    expect(children.map((span) => span.operationName).sort()).toEqual([
      'execute_tool crm.upsert_profile',
      'execute_tool crm.upsert_profile',
      'plan Support agent',
      'plan Support agent',
      'plan Support agent',
    ]);
    expect(parentSpanId(only(repair, 'db.upsert'))).toBe(toolSpan(repair, 'call-2').spanID);
    for (const span of repair.spans) {
      expect(tagsOf(span)['span.kind']).toBe('internal');
    }
  });

  it('exports the root span with the GenAI agent attributes and the final run status', () => {
    expect(tagsOf(only(repair, 'invoke_agent Support agent'))).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': 'support',
      'gen_ai.agent.name': 'Support agent',
      'gen_ai.conversation.id': 'sess-ada',
      'toolwarden.run.id': repairRunId,
      'toolwarden.run.status': 'completed',
      'otel.scope.name': 'toolwarden',
    });
  });

  it('exports plan spans with turn id, plan kind and result kind', () => {
    const plans = repair.spans
      .filter((span) => span.operationName === 'plan Support agent')
      .map((span) => tagsOf(span))
      .sort((a, b) => String(a['toolwarden.turn.id']).localeCompare(String(b['toolwarden.turn.id'])));
    expect(
      plans.map((tags) => [
        tags['toolwarden.turn.id'],
        tags['toolwarden.plan.kind'],
        tags['toolwarden.plan.result_kind'],
      ]),
    ).toEqual([
      [`${repairRunId}:t1`, 'start', 'tool_calls'],
      [`${repairRunId}:t2`, 'resume', 'tool_calls'],
      [`${repairRunId}:t3`, 'resume', 'final_response'],
    ]);
  });

  it('exports ToolCallMeta and GenAI tool attributes with their types (string, int, bool)', () => {
    expect(tagsOf(toolSpan(repair, 'call-2'))).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'crm.upsert_profile',
      'gen_ai.tool.call.id': 'call-2',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'Create or update a customer profile',
      'toolwarden.run.id': repairRunId,
      'toolwarden.session.id': 'sess-ada',
      'toolwarden.turn.id': `${repairRunId}:t2`,
      'toolwarden.tool_call.id': expect.stringMatching(/:t2:c1$/),
      'toolwarden.tool_call.attempt': 2,
      'toolwarden.tool_call.executed': true,
      'toolwarden.tool_call.outcome': 'success',
    });
    expect(tagsOf(toolSpan(repair, 'call-2'))['error.type']).toBeUndefined();
  });

  it('exports the failed call: executed=false, ERROR status, error.type and the toolwarden.retry_hint event', () => {
    const failed = toolSpan(repair, 'call-1');
    expect(tagsOf(failed)).toMatchObject({
      'toolwarden.tool_call.attempt': 1,
      'toolwarden.tool_call.executed': false,
      'toolwarden.tool_call.outcome': 'rejected',
      'error.type': 'missing_fields',
      'otel.status_code': 'ERROR',
    });
    expect(eventNames(failed)).toEqual(['toolwarden.retry_hint']);
    expect(tagsOf({ tags: failed.logs[0]!.fields })).toMatchObject({
      'toolwarden.retry_hint.reason': 'missing_fields',
      'gen_ai.tool.name': 'crm.upsert_profile',
      'toolwarden.retry_hint.restrict_to_tool': true,
      // Jaeger keeps string-array attributes as JSON text.
      'toolwarden.retry_hint.missing_fields': '["plan"]',
    });
  });

  it('exports the policy decision as a toolwarden.policy_decision event on the root span', () => {
    const root = only(repair, 'invoke_agent Support agent');
    expect(eventNames(root)).toEqual(['toolwarden.policy_decision']);
    expect(tagsOf({ tags: root.logs[0]!.fields })).toMatchObject({
      'toolwarden.policy.name': 'restrict-on-invalid',
      'toolwarden.policy.decision.kind': 'restrictToTool',
      'toolwarden.tool_call.id': expect.stringMatching(/:t1:c1$/),
      'toolwarden.policy.note': 'repair the call first',
    });
  });

  it('continues a run resumed by another runtime in the same trace: segment 2 is a child of segment 1', () => {
    const segments = resumed.spans.filter((span) => span.operationName === 'invoke_agent Support agent');
    expect(segments).toHaveLength(2);
    const first = segments.find((span) => parentSpanId(span) === undefined)!;
    const second = segments.find((span) => span !== first)!;
    expect(parentSpanId(second)).toBe(first.spanID);
    expect(tagsOf(first)).toMatchObject({
      'toolwarden.run.status': 'awaiting',
      'toolwarden.run.awaiting': 'clarification',
    });
    expect(tagsOf(second)).toMatchObject({
      'toolwarden.run.status': 'completed',
      'gen_ai.conversation.id': 'sess-bob',
    });
    const under = (segment: JaegerSpan) =>
      resumed.spans
        .filter((span) => parentSpanId(span) === segment.spanID && span !== second)
        .map((span) => span.operationName)
        .sort();
    expect(under(first)).toEqual(['plan Support agent']);
    expect(under(second)).toEqual([
      'execute_tool crm.upsert_profile',
      'plan Support agent',
      'plan Support agent',
    ]);
    expect(tagsOf(toolSpan(resumed, 'call-9'))['toolwarden.turn.id']).toBe(`${resumedRunId}:t2`);
  });
});

function prompt(who: string) {
  return [{ role: 'user' as const, content: `Add ${who}` }];
}

function traceIdOf(carrier: Record<string, string> | null | undefined): string {
  const spanContext = spanContextFromCarrier(carrier);
  if (!spanContext) throw new Error(`the run kept no trace context: ${JSON.stringify(carrier)}`);
  return spanContext.traceId;
}

function only(stored: JaegerTrace, operationName: string): JaegerSpan {
  const spans = stored.spans.filter((span) => span.operationName === operationName);
  expect(spans, operationName).toHaveLength(1);
  return spans[0]!;
}

function toolSpan(stored: JaegerTrace, toolCallId: string): JaegerSpan {
  const span = stored.spans.find((s) => tagsOf(s)['gen_ai.tool.call.id'] === toolCallId);
  if (!span) throw new Error(`no execute_tool span for ${toolCallId} in trace ${stored.traceID}`);
  return span;
}
