import { createTraceState, INVALID_SPAN_CONTEXT, type SpanContext, TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  latestSegmentOf,
  SEGMENT_TRACEPARENT_KEY,
  spanContextFromCarrier,
  traceContextCarrier,
  withLatestSegment,
} from '../telemetry/trace-context.ts';

// The run snapshot keeps its trace as a W3C Trace Context carrier (docs/telemetry.md), written and read
// without the app's global propagator.

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('W3C trace context carrier of a run snapshot', () => {
  it('writes traceparent (version 00, lowercase hex, flags) and tracestate when there is one', () => {
    const sampled: SpanContext = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED };
    expect(traceContextCarrier(sampled)).toEqual({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01` });
    const withState = {
      ...sampled,
      traceFlags: TraceFlags.NONE,
      traceState: createTraceState('congo=t61rcWkgMzE'),
    };
    expect(traceContextCarrier(withState)).toEqual({
      traceparent: `00-${TRACE_ID}-${SPAN_ID}-00`,
      tracestate: 'congo=t61rcWkgMzE',
    });
  });

  it('writes nothing for the invalid context of a no-op tracer', () => {
    expect(traceContextCarrier(INVALID_SPAN_CONTEXT)).toBeNull();
  });

  it('reads back what it wrote, as a remote span context', () => {
    const original: SpanContext = {
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.SAMPLED,
      traceState: createTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'),
    };
    const read = spanContextFromCarrier(traceContextCarrier(original));
    expect(read).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true });
    expect(read?.traceState?.get('rojo')).toBe('00f067aa0ba902b7');
    expect(read?.traceState?.serialize()).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
  });

  it.each([
    ['no carrier', null],
    ['no traceparent', {}],
    ['garbage', { traceparent: 'hello' }],
    ['uppercase hex', { traceparent: `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01` }],
    ['version ff', { traceparent: `ff-${TRACE_ID}-${SPAN_ID}-01` }],
    ['all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01` }],
    ['all-zero span id', { traceparent: `00-${TRACE_ID}-${'0'.repeat(16)}-01` }],
    ['version 00 with extra fields', { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01-extra` }],
  ])('reads no span context from %s', (_what, carrier) => {
    expect(spanContextFromCarrier(carrier)).toBeUndefined();
  });

  it('reads a later version by its first four fields, as the W3C spec asks', () => {
    expect(spanContextFromCarrier({ traceparent: `01-${TRACE_ID}-${SPAN_ID}-01-future` })?.spanId).toBe(
      SPAN_ID,
    );
  });
});

describe("the run's latest segment in its carrier (toolwarden.segment.traceparent)", () => {
  const root = { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'congo=t61rcWkgMzE' };
  const segment: SpanContext = {
    traceId: TRACE_ID,
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
  };

  it('adds the segment beside the first one, which stays the parent of later segments', () => {
    const carrier = withLatestSegment(root, segment);
    expect(carrier).toEqual({ ...root, [SEGMENT_TRACEPARENT_KEY]: `00-${TRACE_ID}-b7ad6b7169203331-01` });
    expect(spanContextFromCarrier(carrier)?.spanId).toBe(SPAN_ID);
    expect(latestSegmentOf(carrier)).toMatchObject({
      traceId: TRACE_ID,
      spanId: 'b7ad6b7169203331',
      isRemote: true,
    });
    expect(root).not.toHaveProperty(SEGMENT_TRACEPARENT_KEY); // a new carrier: the run's context is not mutated
  });

  it('is the first segment while there is no other, and nothing without a carrier', () => {
    expect(latestSegmentOf(root)?.spanId).toBe(SPAN_ID);
    expect(latestSegmentOf(null)).toBeUndefined();
    expect(withLatestSegment(root, INVALID_SPAN_CONTEXT)).toBe(root);
  });

  it('ignores a latest segment of another trace or a malformed one (e.g. a stale entry)', () => {
    const other = `00-${'1'.repeat(32)}-b7ad6b7169203331-01`;
    expect(latestSegmentOf({ ...root, [SEGMENT_TRACEPARENT_KEY]: other })?.spanId).toBe(SPAN_ID);
    expect(latestSegmentOf({ ...root, [SEGMENT_TRACEPARENT_KEY]: 'garbage' })?.spanId).toBe(SPAN_ID);
  });
});
