import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunContext } from '../machines/run-context.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { SEGMENT_TRACEPARENT_KEY } from '../telemetry/trace-context.ts';
import {
  JAEGER_OTLP_HTTP_URL,
  JaegerClient,
  type JaegerSpan,
  type JaegerTrace,
  jaegerSuite,
  type OtlpSpan,
  otlpAttributes,
  parentSpanId,
  tagsOf,
} from './support/jaeger.ts';
import { type RestartedRuns, runAcrossRestart } from './support/restarted-runs.ts';

const SUITE = 'span link from a resumed segment across a process restart, in a real Jaeger';
const jaegerGate = await jaegerSuite(SUITE);

const SEGMENT = 'invoke_agent Support agent';

describe.skipIf(!jaegerGate.run)(SUITE, () => {
  const jaeger = new JaegerClient();
  /** The run killed while it awaited `q2`, and the run killed inside a tool call. */
  const runs = {} as Record<
    'awaiting' | 'midTool',
    { trace: JaegerTrace; segments: JaegerSpan[]; otlp: OtlpSpan[] }
  >;
  let restarted: RestartedRuns | undefined;
  let killedBy: unknown;
  let stored: Record<string, string | undefined> = {};

  /** The run's trace once it has `count` `invoke_agent` spans, its segments by start time. */
  async function read(traceId: string, count: number) {
    const trace = await jaeger.waitForTrace(traceId, {
      until: (t) => t.spans.filter((span) => span.operationName === SEGMENT).length >= count,
    });
    const segments = trace.spans
      .filter((span) => span.operationName === SEGMENT)
      .sort((a, b) => a.startTime - b.startTime);
    return { trace, segments, otlp: await jaeger.otlpSpans(traceId) };
  }
  const linksOf = (run: (typeof runs)['awaiting'], span: JaegerSpan) =>
    run.otlp
      .find((candidate) => candidate.spanId === span.spanID)
      ?.links?.map((link) => ({ spanId: link.spanId, attributes: otlpAttributes(link.attributes) }));
  const pid = (trace: JaegerTrace, span: JaegerSpan) =>
    tagsOf({ tags: trace.processes[span.processID]?.tags ?? [] })['process.pid'];

  beforeAll(async () => {
    jaegerGate.assertAvailable();
    restarted = await runAcrossRestart(JAEGER_OTLP_HTTP_URL);
    killedBy = restarted.killedBy;
    const { traceIds, config } = restarted;
    // The mid-tool run's second segment never ended: Jaeger has its first and its third.
    [runs.awaiting, runs.midTool] = await Promise.all([
      read(traceIds.awaiting, 3),
      read(traceIds.midTool, 2),
    ]);
    const store = sqliteStore({ path: config.db });
    const context = (await store.load(config.runIds.midTool))?.snapshot as { context: RunContext };
    stored = context.context.traceContext ?? {};
    await store.close();
  }, 60_000);

  afterAll(() => restarted?.dispose());

  it('has the segments of each run in one trace, from two processes', () => {
    expect(killedBy).toBe('SIGKILL');
    const { trace, segments } = runs.awaiting;
    expect(segments.map((span) => tagsOf(span)['toolwarden.run.status'])).toEqual([
      'awaiting',
      'awaiting',
      'completed',
    ]);
    expect(pid(trace, segments[1]!)).not.toBe(pid(trace, segments[2]!));
    const midTool = runs.midTool.segments;
    expect(midTool.map((span) => tagsOf(span)['toolwarden.run.status'])).toEqual(['awaiting', 'completed']);
    expect(pid(runs.midTool.trace, midTool[0]!)).not.toBe(pid(runs.midTool.trace, midTool[1]!));
  });

  it("links the resumed segment to the killed process's last segment; its parent stays the first", () => {
    const { trace, segments } = runs.awaiting;
    const [first, second, third] = segments as [JaegerSpan, JaegerSpan, JaegerSpan];
    expect(parentSpanId(second)).toBe(first.spanID);
    expect(parentSpanId(third)).toBe(first.spanID);
    const links = third.references.filter((ref) => ref.refType === 'FOLLOWS_FROM');
    expect(links).toEqual([{ refType: 'FOLLOWS_FROM', traceID: trace.traceID, spanID: second.spanID }]);
    // Why, on the link (Jaeger's API v3 has link attributes): restored while awaiting an answer.
    expect(linksOf(runs.awaiting, third)).toEqual([
      {
        spanId: second.spanID,
        attributes: {
          'toolwarden.resume.restored': true,
          'toolwarden.resume.state': 'awaiting.clarification',
        },
      },
    ]);
  });

  it('links the segment a crash cut short, which the spans it ended name as their parent', () => {
    const { trace, segments } = runs.midTool;
    const [first, recovered] = segments as [JaegerSpan, JaegerSpan];
    // The killed segment's plan span (turn 2) was exported; its own span never ended.
    const plans = trace.spans.filter((span) => span.operationName === 'plan Support agent');
    const cutShort = plans.find((span) => tagsOf(span)['toolwarden.turn.id']?.toString().endsWith(':t2'));
    const killedSegment = parentSpanId(cutShort!);
    expect(killedSegment).toBeDefined();
    expect(trace.spans.some((span) => span.spanID === killedSegment)).toBe(false);
    expect(parentSpanId(recovered)).toBe(first.spanID);
    expect(linksOf(runs.midTool, recovered)).toEqual([
      {
        spanId: killedSegment,
        attributes: { 'toolwarden.resume.restored': true, 'toolwarden.resume.state': 'executing' },
      },
    ]);
    // The tool call ran again in the recovered segment, which opened at the restore and is stored
    // as the run's latest segment.
    const tools = trace.spans.filter((span) => span.operationName === 'execute_tool work.step');
    expect(tools.map(parentSpanId)).toEqual([recovered.spanID]);
    expect(stored[SEGMENT_TRACEPARENT_KEY]).toContain(`-${recovered.spanID}-`);
  });
});
