import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';
import { type RetryHint, RetryHintSchema } from './retry-hint.ts';
import { ToolError, ToolErrorJSONSchema } from './tool-error.ts';

/**
 * How much of a bounded result was returned (Goa-AI's toolsets guide, docs/sources.md §Names: "Bounded results";
 * docs/tool-boundary.md). `refinementHint` tells the model how to narrow the query when `truncated`.
 */
export const BoundsSchema = lazySchema(() =>
  z.object({
    returned: z.number().int().nonnegative(),
    total: z.number().int().nonnegative().optional(),
    truncated: z.boolean(),
    refinementHint: z.string().optional(),
  }),
);
/** How much of a bounded result was returned: `returned`, `total?`, `truncated`, `refinementHint?` (docs/tool-boundary.md §Bounded results). */
export type Bounds = z.infer<typeof BoundsSchema>;

/** Full-fidelity data for UIs; delivered on `tool_result` events, never sent to the model. */
export const ArtifactSchema = lazySchema(() =>
  z.object({
    kind: z.string(),
    data: z.unknown(),
    mimeType: z.string().optional(),
    title: z.string().optional(),
  }),
);
/** Full-fidelity data for UIs, delivered on `tool_result` events and never sent to the model (docs/tool-boundary.md §Artifacts). */
export type Artifact = z.infer<typeof ArtifactSchema>;

export const ToolTelemetrySchema = lazySchema(() => z.looseObject({ durationMs: z.number().nonnegative() }));

/**
 * The outcome of one tool call, successful or not (docs/tool-boundary.md §Vocabulary). `executed` is false when validation
 * or policy stopped the call before `execute` ran.
 */
export interface ToolResult {
  name: string;
  /** The run's id for the call (`<turnId>:c<n>`): unique across runs, the idempotency key. */
  toolCallId: string;
  /** The id the planner gave the call (a provider's `call_0`), when it gave one. */
  providerToolCallId?: string;
  executed: boolean;
  result?: unknown;
  error?: ToolError;
  retryHint?: RetryHint;
  telemetry?: { durationMs: number; [k: string]: unknown };
  bounds?: z.infer<typeof BoundsSchema>;
  artifacts?: Artifact[];
  /**
   * Set when the call's outcome is unknown (tools/call-in-doubt.ts, docs/durability.md §Effects):
   * it was started and its end never recorded. Such a result is not the call's: the run waits
   * in `awaiting.inDoubt` until it is resolved (a canceled run keeps it as its record).
   */
  inDoubt?: InDoubt;
}

/**
 * Why a call is in doubt: its process stopped (`restored`), its Temporal worker was lost
 * (`retried`), or the run was canceled while it ran (`canceled`).
 */
export type InDoubtCause = 'restored' | 'retried' | 'canceled';

export const InDoubtSchema = lazySchema(() =>
  z.object({
    cause: z.enum(['restored', 'retried', 'canceled']),
    /** When the call was started, epoch ms, when the run recorded it. */
    startedAt: z.number().optional(),
  }),
);
/** {@link ToolResult.inDoubt}: why the call is in doubt, and when it was started. */
export type InDoubt = z.infer<typeof InDoubtSchema>;

/** The JSON form of a {@link ToolResult} (its `error` as {@link ToolError.toJSON} gives it). */
export const ToolResultJSONSchema = lazySchema(() =>
  z.object({
    name: z.string(),
    toolCallId: z.string(),
    providerToolCallId: z.string().optional(),
    executed: z.boolean(),
    result: z.unknown().optional(),
    error: ToolErrorJSONSchema.optional(),
    retryHint: RetryHintSchema.optional(),
    telemetry: ToolTelemetrySchema.optional(),
    bounds: BoundsSchema.optional(),
    artifacts: z.array(ArtifactSchema).optional(),
    inDoubt: InDoubtSchema.optional(),
  }),
);
/** A ToolResult in its JSON form, as stored and sent on `tool_result` events. */
export type ToolResultJSON = z.infer<typeof ToolResultJSONSchema>;

/** Plain-JSON copy of a result, for snapshots, events and stores. */
export function toolResultToJSON(result: ToolResult): ToolResultJSON {
  // Object.assign, not a spread: a spread of a tool result (its `telemetry` out of object) gave
  // each copy a Map and DescriptorArray of its own, ~220 bytes and a map allocated per call, and
  // the objects no shape an inline cache could share (issue 29). Neither rest destructuring,
  // which is several times slower; each runs once or twice per tool call.
  if (result.error) return Object.assign({}, result, { error: result.error.toJSON() });
  if (isPlainSuccess(result)) {
    // The common result, as a literal: all five members in the object, where Object.assign's
    // `{}` holds four and puts the fifth in a property array of its own (~40 bytes a result kept
    // in the run's events; issue 29 item 3). The same members in the same order.
    const { name, toolCallId, executed, result: value, telemetry } = result;
    return { name, toolCallId, executed, result: value, telemetry };
  }
  if (!('error' in result)) return Object.assign({}, result) as ToolResultJSON;
  const { error: _none, ...rest } = result;
  return rest;
}

/** A result of exactly `name`, `toolCallId`, `executed`, `result`, `telemetry`, in that order. */
function isPlainSuccess(result: ToolResult): boolean {
  let index = 0;
  for (const key in result) {
    if (key !== PLAIN_SUCCESS[index]) return false;
    index++;
  }
  return index === PLAIN_SUCCESS.length;
}
const PLAIN_SUCCESS = ['name', 'toolCallId', 'executed', 'result', 'telemetry'];

/** Rebuilds a result (with a real {@link ToolError}) from its JSON form. */
export function toolResultFromJSON(json: ToolResultJSON): ToolResult {
  if (json.error) return { ...json, error: ToolError.fromJSON(json.error) };
  if (!('error' in json)) return { ...json } as ToolResult;
  const { error: _none, ...rest } = json;
  return rest;
}
