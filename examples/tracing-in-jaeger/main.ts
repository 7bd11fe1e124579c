/**
 * A toolwarden run traced in Jaeger (docs/architecture.md §Uses, §6):
 *
 *     docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/jaeger:2
 *     node --import tsx examples/tracing-in-jaeger/main.ts
 *
 * A scripted planner (standing in for an LLM) calls a CRM tool without a required field; the tool
 * boundary turns that into a `missing_fields` RetryHint, the `restrictOnInvalidArguments` policy
 * restricts the next turn to the tool, the planner repairs the call, and the run completes. The
 * runtime's built-in telemetry plugin records it all through `@opentelemetry/api`;
 * `startTelemetry` registers the SDK that exports it over OTLP/HTTP. The script prints the trace's
 * URL and, when Jaeger's query API answers, the span tree Jaeger stored.
 *
 * Environment: `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`), `JAEGER_UI`
 * (default `http://localhost:16686`), and the other `OTEL_*` variables `startTelemetry` documents.
 */
import { trace } from '@opentelemetry/api';
import { createRuntime, defineTool, restrictOnInvalidArguments } from 'toolwarden';
import { spanContextFromCarrier } from 'toolwarden/telemetry';
import { startTelemetry } from 'toolwarden/telemetry/setup';
import { scriptedPlanner } from 'toolwarden/testing';
import { z } from 'zod';

const JAEGER_UI = process.env.JAEGER_UI ?? 'http://localhost:16686';

// Before the runtime runs anything: registers the global tracer and meter providers.
const telemetry = startTelemetry({ serviceName: 'toolwarden-example' });

const upsertProfile = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
  output: z.object({ id: z.string() }),
  execute: async ({ email, plan }, { meta }) =>
    // Your own instrumentation inside `execute` nests under the tool's `execute_tool` span.
    trace.getTracer('crm-client').startActiveSpan('crm.db upsert', async (span) => {
      span.setAttribute('db.operation.name', 'upsert');
      await new Promise((resolve) => setTimeout(resolve, 15));
      span.end();
      return { id: `cus_${email.split('@')[0]}_${plan}_${meta.attempt}` };
    }),
});

const planner = scriptedPlanner([
  // Turn 1: the model forgets `plan` → missing_fields, the call never runs.
  { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com' } }] },
  // Turn 2: the policy restricted this turn to crm.upsert_profile; the model repairs the call.
  (input) => ({
    notes: [`tools advertised: ${input.tools.map((tool) => tool.name).join(', ')}`],
    toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } }],
  }),
  { finalResponse: { text: 'Ada is on the pro plan.' } },
]);

const runtime = createRuntime({
  agent: { id: 'crm-assistant', name: 'CRM assistant' },
  planner,
  tools: [upsertProfile],
  policies: [restrictOnInvalidArguments({ maxRetries: 2 })],
  // Telemetry is on by default; `telemetry: { captureContent: true, redact }` would also record
  // tool arguments and results, `telemetry: false` turns it off.
});

const run = runtime.start({
  sessionId: 'example-session',
  messages: [{ role: 'user', content: 'Put ada@example.com on the pro plan' }],
});
run.events$.subscribe((event) => {
  if (event.type === 'tool_result') {
    const { name, toolCallId, executed, error } = event.result;
    console.log(`tool ${name} (${toolCallId}): ${error ? `failed, executed=${executed}` : 'ok'}`);
  }
  if (event.type === 'retry_hint') console.log(`  hint: ${event.hint.reason} ${event.hint.missingFields}`);
  if (event.type === 'policy_decision')
    console.log(`  policy ${event.decision.policy}: ${event.decision.note}`);
  if (event.type === 'planner_note') console.log(`  planner: ${event.note}`);
});
const outcome = await run.result();
console.log(`run ${outcome.status}: ${outcome.finalResponse?.text}`);

// The run keeps its trace context in its snapshot (that is how a resumed run continues the trace).
const traceId = spanContextFromCarrier(run.context.traceContext)?.traceId;

try {
  await telemetry.shutdown(); // flushes the spans
} catch (err) {
  console.error(`\nCould not export to the OTLP endpoint (${(err as Error).message}). Start Jaeger with:`);
  console.error('  docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/jaeger:2');
  process.exit(1);
}
console.log(`\ntrace ${traceId}\n  ${JAEGER_UI}/trace/${traceId}`);
if (traceId) await printTree(traceId);

/** Reads the trace back from Jaeger's query API and prints its span tree (skipped if it does not answer). */
async function printTree(id: string): Promise<void> {
  interface Span {
    spanID: string;
    operationName: string;
    startTime: number;
    duration: number;
    references: { refType: string; spanID: string }[];
    tags: { key: string; value: unknown }[];
    logs: { fields: { key: string; value: unknown }[] }[];
  }
  let spans: Span[] = [];
  for (let attempt = 0; attempt < 20 && spans.length < 7; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    try {
      const response = await fetch(`${JAEGER_UI}/api/traces/${id}`, { signal: AbortSignal.timeout(2000) });
      if (response.ok)
        spans = ((await response.json()) as { data: { spans: Span[] }[] }).data[0]?.spans ?? [];
    } catch {
      return; // no query API here (another OTLP backend): the URL above is all there is
    }
  }
  const tag = (span: Span, key: string) => span.tags.find((t) => t.key === key)?.value;
  const parentOf = (span: Span) => span.references.find((ref) => ref.refType === 'CHILD_OF')?.spanID;
  const print = (span: Span, depth: number) => {
    const details = [
      tag(span, 'toolwarden.tool_call.executed') === false ? 'executed=false' : '',
      tag(span, 'error.type') ? `error.type=${tag(span, 'error.type')}` : '',
      tag(span, 'toolwarden.run.status') ? `status=${tag(span, 'toolwarden.run.status')}` : '',
      ...span.logs.map((log) => `event ${log.fields.find((f) => f.key === 'event')?.value}`),
    ].filter(Boolean);
    const ms = (span.duration / 1000).toFixed(1);
    console.log(`${'  '.repeat(depth + 1)}${span.operationName}  ${ms} ms  ${details.join('  ')}`.trimEnd());
    const children = spans.filter((child) => parentOf(child) === span.spanID);
    for (const child of children.sort((a, b) => a.startTime - b.startTime)) print(child, depth + 1);
  };
  console.log('\nspan tree as Jaeger stored it:');
  for (const root of spans.filter((span) => !parentOf(span))) print(root, 0);
}
