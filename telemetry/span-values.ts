/**
 * What the telemetry plugin writes onto spans that may fail to serialize or come from anything
 * thrown: never throwing is the plugin's promise (a hook of it never changes a result).
 *
 * @module
 */

import type { Exception, Span } from '@opentelemetry/api';
import { SpanStatusCode } from '../plugins/otel-api.ts';
import { jsonText } from '../tools/tool-error.ts';
import { ATTR_ERROR_TYPE } from './attributes.ts';

/** ERROR status, `error.type` (the thrown class, `_OTHER` for a non-Error) and an `exception` event. */
export function failSpan(span: Span, err: unknown): void {
  if (err instanceof Error) {
    span.recordException(err as Exception);
    span.setAttribute(ATTR_ERROR_TYPE, err.name || 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  } else {
    span.setAttribute(ATTR_ERROR_TYPE, '_OTHER');
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
  }
}

/** JSON text of a value; never throws (cycles and BigInts fall back to `String`). */
export const toJson: (value: unknown) => string = jsonText;
