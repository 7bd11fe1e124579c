import { randomUUID } from 'node:crypto';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_TOOLWARDEN_RETRY_HINT_REASON,
  ATTR_TOOLWARDEN_RUN_ID,
  ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT,
  ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED,
  EVENT_TOOLWARDEN_RETRY_HINT,
  executeToolSpanName,
  GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
  INSTRUMENTATION_SCOPE,
  invokeAgentSpanName,
} from '../telemetry/attributes.ts';
import { startTelemetry } from '../telemetry/setup.ts';
import {
  eventNames,
  JAEGER_OTLP_HTTP_URL,
  JaegerClient,
  type JaegerTrace,
  jaegerSuite,
  parentSpanId,
  tagsOf,
} from './support/jaeger.ts';

// Project convention for suites that need a real peer: skipped with a message on a developer's
// machine without it, failing in CI (CI=true) so a missing peer can never pass silently.
const SUITE = 'startTelemetry → OTLP/HTTP → Jaeger query API';
const jaegerGate = await jaegerSuite(SUITE);

describe.skipIf(!jaegerGate.run)(SUITE, () => {
  const jaeger = new JaegerClient();
  const serviceName = `toolwarden-test-${randomUUID().slice(0, 8)}`;
  let traceId: string;
  let rootSpanId: string;
  let toolSpanId: string;
  let stored: JaegerTrace;

  beforeAll(async () => {
    jaegerGate.assertAvailable();
    const telemetry = startTelemetry({
      serviceName,
      otlpEndpoint: JAEGER_OTLP_HTTP_URL,
      resourceAttributes: { 'deployment.environment.name': 'test' },
    });
    try {
      const tracer = trace.getTracer(INSTRUMENTATION_SCOPE);
      tracer.startActiveSpan(
        invokeAgentSpanName('Support agent'),
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
            [ATTR_GEN_AI_AGENT_NAME]: 'Support agent',
            [ATTR_TOOLWARDEN_RUN_ID]: 'run-1',
          },
        },
        (root) => {
          // The child is started inside the root's active context, as the plugin will do.
          const tool = tracer.startSpan(executeToolSpanName('crm.upsert_profile'), {
            kind: SpanKind.INTERNAL,
            attributes: {
              [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
              [ATTR_GEN_AI_TOOL_NAME]: 'crm.upsert_profile',
              [ATTR_GEN_AI_TOOL_CALL_ID]: 'call-7',
              [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
              [ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT]: 2,
              [ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED]: false,
            },
          });
          tool.addEvent(EVENT_TOOLWARDEN_RETRY_HINT, {
            [ATTR_TOOLWARDEN_RETRY_HINT_REASON]: 'missing_fields',
          });
          tool.setAttribute(ATTR_ERROR_TYPE, 'missing_fields');
          tool.setStatus({ code: SpanStatusCode.ERROR, message: 'Argument validation failed' });
          tool.end();
          traceId = root.spanContext().traceId;
          rootSpanId = root.spanContext().spanId;
          toolSpanId = tool.spanContext().spanId;
          root.end();
        },
      );
    } finally {
      // Flushes the batch span processor: both spans are on the wire when this resolves.
      await telemetry.shutdown();
    }
    stored = await jaeger.waitForTrace(traceId, { timeoutMs: 10_000, until: (t) => t.spans.length >= 2 });
  });

  it('stores both spans in one trace, under the names they were started with', () => {
    expect(stored.traceID).toBe(traceId);
    expect(stored.spans.map((span) => span.operationName).sort()).toEqual([
      'execute_tool crm.upsert_profile',
      'invoke_agent Support agent',
    ]);
  });

  it('keeps the parent/child link: the tool span is a CHILD_OF the root, the root has no parent', () => {
    const root = stored.spans.find((span) => span.spanID === rootSpanId)!;
    const tool = stored.spans.find((span) => span.spanID === toolSpanId)!;
    expect(parentSpanId(root)).toBeUndefined();
    expect(parentSpanId(tool)).toBe(rootSpanId);
  });

  it('keeps attribute values and types (string, int, bool), span kind, status and events', () => {
    const tool = stored.spans.find((span) => span.spanID === toolSpanId)!;
    expect(tagsOf(tool)).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'crm.upsert_profile',
      'gen_ai.tool.call.id': 'call-7',
      'gen_ai.tool.type': 'function',
      'toolwarden.tool_call.attempt': 2,
      'toolwarden.tool_call.executed': false,
      'error.type': 'missing_fields',
      'span.kind': 'internal',
      'otel.status_code': 'ERROR',
      'otel.scope.name': 'toolwarden',
    });
    expect(eventNames(tool)).toEqual(['toolwarden.retry_hint']);
    expect(tagsOf({ tags: tool.logs[0]!.fields })).toMatchObject({
      'toolwarden.retry_hint.reason': 'missing_fields',
    });
    const root = stored.spans.find((span) => span.spanID === rootSpanId)!;
    expect(tagsOf(root)).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Support agent',
      'toolwarden.run.id': 'run-1',
    });
  });

  it('exports the resource: service name from serviceName, extra attributes from resourceAttributes', () => {
    const process = stored.processes[stored.spans[0]!.processID]!;
    expect(process.serviceName).toBe(serviceName);
    expect(tagsOf(process)).toMatchObject({
      'deployment.environment.name': 'test',
      'telemetry.sdk.language': 'nodejs',
    });
  });

  it('makes the trace findable by service and by attribute through the search API', async () => {
    expect(await jaeger.services()).toContain(serviceName);
    const found = await jaeger.findTraces({
      service: serviceName,
      tags: { 'gen_ai.tool.call.id': 'call-7' },
    });
    expect(found.map((t) => t.traceID)).toEqual([traceId]);
  });
});
