/**
 * The W3C Trace Context form of a span context (`traceparent`, `tracestate`), as a run keeps it in
 * its snapshot (`RunContext.traceContext`) so a run resumed after awaiting or a restart continues
 * its trace (docs/telemetry.md).
 *
 * Written here rather than through `propagation.inject`: the global propagator is the app's
 * choice (it may be unset, B3 or a composite), while the snapshot needs one stable format that any
 * later process can read back whatever it configured. Only `@opentelemetry/api` is used.
 *
 * | key | format (W3C Trace Context level 1) | example |
 * |---|---|---|
 * | `traceparent` | `00-{trace-id: 32 hex}-{parent-id: 16 hex}-{flags: 2 hex}` | `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01` |
 * | `tracestate` | vendor list, kept as is; absent when empty | `congo=t61rcWkgMzE` |
 * | `toolwarden.segment.traceparent` | the run's latest segment (its `invoke_agent` span), same format; absent while that is the first | `00-4bf9…4736-b7ad6b7169203331-01` |
 *
 * `traceparent` names the run's first segment, the parent of every later one; the latest segment
 * is what the next one links (the telemetry plugin stores it through the host, docs/telemetry.md).
 */
import type { SpanContext } from '@opentelemetry/api';
import { createTraceState, isSpanContextValid } from '../plugins/otel-api.ts';

/** A W3C trace context carrier: `traceparent` and, when there is one, `tracestate`. */
export type TraceContextCarrier = Record<string, string>;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The carrier key of the run's latest segment's `traceparent` (see the table above). */
export const SEGMENT_TRACEPARENT_KEY = 'toolwarden.segment.traceparent';

/** The carrier of a span context, or `null` for an invalid one (a no-op tracer's span). */
export function traceContextCarrier(spanContext: SpanContext): TraceContextCarrier | null {
  if (!isSpanContextValid(spanContext)) return null;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: TraceContextCarrier = {
    traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`,
  };
  const tracestate = spanContext.traceState?.serialize();
  if (tracestate) carrier.tracestate = tracestate;
  return carrier;
}

/**
 * The (remote) span context a carrier names, or `undefined` when it names none: no carrier, no
 * `traceparent`, a malformed one, version `ff`, all-zero ids, or version `00` with extra fields.
 * Later versions are read by their first four fields, as the W3C spec asks.
 */
export function spanContextFromCarrier(
  carrier: TraceContextCarrier | null | undefined,
): SpanContext | undefined {
  const traceparent = carrier?.traceparent?.trim();
  if (!traceparent) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const spanContext: SpanContext = {
    traceId: traceId!,
    spanId: spanId!,
    traceFlags: Number.parseInt(flags!, 16),
    isRemote: true,
  };
  if (!isSpanContextValid(spanContext)) return undefined;
  const tracestate = carrier?.tracestate?.trim();
  if (tracestate) spanContext.traceState = createTraceState(tracestate);
  return spanContext;
}

/**
 * The span context of the run's latest segment its carrier names: the `toolwarden.segment.traceparent`
 * entry when it is a span of the carrier's own trace, else the first segment (`traceparent`).
 */
export function latestSegmentOf(carrier: TraceContextCarrier | null | undefined): SpanContext | undefined {
  const root = spanContextFromCarrier(carrier);
  const traceparent = carrier?.[SEGMENT_TRACEPARENT_KEY];
  const latest = traceparent ? spanContextFromCarrier({ traceparent }) : undefined;
  return latest && latest.traceId === root?.traceId ? latest : root;
}

/** The carrier with `spanContext` as the run's latest segment (the first segment's entries kept). */
export function withLatestSegment(
  carrier: TraceContextCarrier,
  spanContext: SpanContext,
): TraceContextCarrier {
  const traceparent = traceContextCarrier(spanContext)?.traceparent;
  if (!traceparent) return carrier;
  return { ...carrier, [SEGMENT_TRACEPARENT_KEY]: traceparent };
}
