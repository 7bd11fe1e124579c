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
 */
import { createTraceState, isSpanContextValid, type SpanContext } from '@opentelemetry/api';

/** A W3C trace context carrier: `traceparent` and, when there is one, `tracestate`. */
export type TraceContextCarrier = Record<string, string>;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

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
