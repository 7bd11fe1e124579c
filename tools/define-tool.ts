import { z } from 'zod';
import type { ToolCallMeta } from './tool-call-meta.ts';
import type { Artifact, Bounds } from './tool-result.ts';
import { withoutFields } from './without-fields.ts';

/** A JSON Schema document (draft 2020-12, as `z.toJSONSchema` emits it). */
export type JSONSchema = Record<string, unknown>;

/** What a tool's `execute` receives besides its input (docs/tool-boundary.md §Failures). */
export interface ToolContext {
  /**
   * Who calls: run, turn, call. `meta.toolCallId` is the idempotency key: with a durable store, a
   * call in flight when its process died runs again after resume with the same id, so a tool with
   * side effects hands it to the system it changes (or skips work already done under it), and the
   * effect happens once (docs/durability.md).
   */
  meta: ToolCallMeta;
  /**
   * The call's idempotency key (tools/idempotency-key.ts, docs/durability.md §Effects): from the
   * run id, the call id and a digest of the validated input, so it is the same whenever this
   * call runs again (a retry, a resume, a recovery on another process) and different once an
   * approver edits the input. Hand it to the system the tool changes. Made when first read.
   */
  readonly idempotencyKey: string;
  /** Aborted when the call times out or the run is canceled. */
  signal: AbortSignal;
  labels: Record<string, string>;
}

/**
 * What a tool's `reconcile` says of a call whose outcome is unknown (docs/durability.md §Effects):
 * it happened (`done`, with the output `execute` would have returned: recorded, not run again),
 * it did not (`not_done`: run it now, under the same idempotency key), or it cannot tell
 * (`unknown`: the run waits in `awaiting.inDoubt` for a person or code to resolve the call).
 */
export type ReconcileOutcome =
  | { status: 'done'; output: unknown }
  | { status: 'not_done' }
  | { status: 'unknown' };

/**
 * A result with the extras that never go to the model: {@link Bounds} for bounded tools and
 * {@link Artifact}s for UIs (Goa-AI's toolsets guide, docs/sources.md §Names: "Bounded results", "Server data").
 * Return `toolOutput(...)` from `execute` instead of the bare value to attach them.
 */
export class ToolOutput<T = unknown> {
  constructor(
    readonly result: T,
    readonly extras: { bounds?: Bounds; artifacts?: Artifact[] } = {},
  ) {}
}

/**
 * Wraps what `execute` returns when it carries more than the result: `bounds` of a bounded
 * result and `artifacts` for UIs (docs/tool-boundary.md §Bounded results, §Artifacts).
 */
export function toolOutput<T>(
  result: T,
  extras: { bounds?: Bounds; artifacts?: Artifact[] } = {},
): ToolOutput<T> {
  return new ToolOutput(result, extras);
}

/** `toolset.tool`: two or more dot-separated segments of letters, digits, `_` and `-`. */
export const TOOL_ID_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;

/** What `defineTool` takes. `I`/`O` are the input and output zod schemas. */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** `"<toolset>.<tool>"`, e.g. `crm.upsert_profile`. */
  id: string;
  description: string;
  /** A human-readable name for UIs and catalogs (MCP's `title`); the model sees `id` and `description`. */
  title?: string;
  input: I;
  /** When set, a result that fails it becomes `malformed_response`. */
  output?: O;
  /**
   * Valid inputs as a model would send them; the first is the `exampleInput` of hints. Each must
   * pass `input` without its injected fields (which it may leave out).
   */
  examples?: z.input<I>[];
  /**
   * Per-call execution limit in milliseconds, at most {@link MAX_TIMEOUT_MS} (~24.8 days); the
   * runtime default applies when absent.
   */
  timeoutMs?: number;
  tags?: string[];
  /** Absent for external tools, whose results the app provides while the run awaits. */
  execute?: (input: z.output<I>, ctx: ToolContext) => Promise<unknown> | unknown;
  /**
   * Running the tool changes nothing (MCP's `readOnlyHint`): a call whose outcome is unknown
   * after a crash simply runs again (docs/durability.md §Effects). Default false.
   */
  readOnly?: boolean;
  /**
   * Running the call again with the same `ctx.idempotencyKey` has no further effect (MCP's
   * `idempotentHint`: the tool hands the key to the system it changes): a call whose outcome is
   * unknown after a crash runs again under that key. Default false: the tool's effect must not
   * happen twice, and such a call is reconciled or waits in `awaiting.inDoubt`.
   */
  idempotent?: boolean;
  /**
   * Asked, instead of running the call again, when a call of this (neither read-only nor
   * idempotent) tool was started and not recorded finished (a crash, a takeover, a lost Temporal
   * worker): did its effect happen? It gets the validated input and a context with the same
   * `idempotencyKey` and `meta` the call had. A throw, or a run past the tool's timeout, counts as
   * `unknown`. docs/durability.md §Effects.
   */
  // A method, not a property: its parameter is then bivariant, so a tool of a narrower input is still a `Tool`.
  reconcile?(input: z.output<I>, ctx: ToolContext): Promise<ReconcileOutcome> | ReconcileOutcome;
  /**
   * What a call in doubt that `reconcile` could not settle becomes: `'await'` (default) the run
   * waits in `awaiting.inDoubt` for `runtime.resolveInDoubt`; `'tell_model'` the call's result is
   * an error with a RetryHint of reason `outcome_unknown` and the planner decides (it may look
   * the effect up with another tool before calling again).
   */
  whenInDoubt?: 'await' | 'tell_model';
  /**
   * The run asks for approval (`awaiting.confirmation`) before each call (`true`), or before the
   * calls this function says (AI SDK 6's `needsApproval` shape): it gets the validated input and
   * the call's ToolCallMeta, e.g. `({ amountEur }) => amountEur > 100`. A function that throws or
   * outlives the run's time budget counts as `true` (ask). docs/tool-boundary.md §Defining tools.
   */
  requiresConfirmation?: boolean | ConfirmationCheck<z.output<I>>;
  /**
   * Permissions a call needs (docs/policies.md §Permissions and risk), or a function of the
   * validated input and meta giving them: a run started without one of them in its `grants`
   * (`runtime.start({ grants })`) has the call refused, `permission_denied` naming it, unless a
   * policy's `confirm` sends it for approval instead. A function that throws refuses the call.
   */
  permissions?: readonly string[] | ApprovalFacet<z.output<I>, readonly string[]>;
  /**
   * How risky an approval of this call is: `low`, `medium`, `high`, or a function of the input,
   * e.g. `({ amount }) => amount > 1000 ? 'high' : 'medium'`. Shown with the confirmation; a
   * `high` call is never approved by a remembered approval (unless the runtime's
   * `approvals.rememberHighRisk`). A function that throws means `high`.
   */
  risk?: ApprovalRisk | ApprovalFacet<z.output<I>, ApprovalRisk>;
  /** One line for the approver (`Refund 40 EUR of A-17`), or a function of the input giving it. */
  summary?: string | ApprovalFacet<z.output<I>, string>;
  /**
   * `runUnapproved`: what a call of this tool that needs no approval does while other calls of
   * its batch wait for one: `parallel` runs it first, `wait` holds it with them. Default: the
   * runtime's `approvals.runUnapproved` (`wait`). docs/policies.md §Mixed batches.
   */
  approvals?: { runUnapproved?: RunUnapproved };
  /** Fields filled by plugins from ToolCallMeta or labels; hidden from the model (docs/tool-boundary.md). */
  inject?: string[];
  /**
   * `reject` (default): an unknown field is an `unknown_field` issue, because a hallucinated
   * parameter is a signal, not noise (docs/tool-boundary.md §Failures). `passthrough`: unknown fields reach `execute`.
   */
  unknownFields?: 'reject' | 'passthrough';
  /** The tool must return `toolOutput(result, { bounds })`; a bare result is `malformed_response`. */
  bounded?: boolean;
  /**
   * The model-facing JSON Schema, when it must not be written back from `input` (a schema from
   * outside whose `$ref`s would multiply when inlined: `toolFromJsonSchema`). Used as given.
   */
  inputSchema?: JSONSchema;
}

/** A defined tool: its definition plus the model-facing JSON Schema. */
/**
 * A tool's conditional `requiresConfirmation`: whether this call needs approval. Declared as a
 * method so a tool of a narrower input is still a `Tool` (parameters of methods are bivariant).
 */
export type ConfirmationCheck<T> = {
  check(input: T, meta: ToolCallMeta): boolean | Promise<boolean>;
}['check'];

/** See `ToolDefinition.approvals` and the runtime's `approvals.runUnapproved` (docs/policies.md §Mixed batches). */
export type RunUnapproved = 'parallel' | 'wait';

/** How risky approving a call is (docs/policies.md §Permissions and risk). */
export type ApprovalRisk = 'low' | 'medium' | 'high';

/** A tool's `permissions`, `risk` or `summary` as a function of the validated input and meta (a method, so bivariant). */
export type ApprovalFacet<T, R> = {
  facet(input: T, meta: ToolCallMeta): R;
}['facet'];

export interface Tool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType>
  extends ToolDefinition<I, O> {
  readonly kind: 'tool';
  /** The input schema without injected fields: what the model may send. */
  readonly modelInput: z.ZodType;
  /** JSON Schema of `modelInput`, from `z.toJSONSchema` (docs/tool-boundary.md §Failures). */
  readonly inputSchema: JSONSchema;
  readonly outputSchema?: JSONSchema;
}

/** Thrown by {@link defineTool} for a definition that can never work (bad id, bad example). */
export class ToolDefinitionError extends Error {
  override readonly name = 'ToolDefinitionError';
}

/** Longest delay `setTimeout` honours; a longer one fires at once (Node clamps it to 1 ms). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Defines a tool (docs/tool-boundary.md §Failures). Checks the id (`toolset.tool`) and that every example passes the
 * model-facing input schema, and derives that schema (injected fields removed) and its JSON
 * Schema.
 *
 * With `unknownFields: 'passthrough'` an object input that would strip unknown keys (zod's
 * default) is made loose at the top level, so the unknown fields reach `execute`; nested objects
 * keep their own setting (declare them `z.looseObject` to pass theirs too).
 *
 * Examples are what a model may send: an injected field in one is ignored, and it need not
 * contain the injected fields.
 *
 * @throws ToolDefinitionError for a malformed id, a `timeoutMs` that is not a number of
 *   milliseconds in (0, {@link MAX_TIMEOUT_MS}], an example that fails the input schema, an
 *   injected field the input schema does not declare, or a schema `z.toJSONSchema` cannot
 *   represent.
 */
export function defineTool<I extends z.ZodType, O extends z.ZodType = z.ZodType>(
  definition: ToolDefinition<I, O>,
): Tool<I, O> {
  if (typeof definition.id !== 'string' || !TOOL_ID_PATTERN.test(definition.id)) {
    throw new ToolDefinitionError(
      `Tool id "${String(definition.id)}" must be "<toolset>.<tool>" (letters, digits, _ and -), e.g. "crm.upsert_profile"`,
    );
  }
  const { timeoutMs } = definition;
  if (timeoutMs !== undefined && !(timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new ToolDefinitionError(
      `Tool ${definition.id}: timeoutMs must be a number of milliseconds in (0, ${MAX_TIMEOUT_MS}], got ${timeoutMs}`,
    );
  }
  const inject = definition.inject ?? [];
  const input = definition.unknownFields === 'passthrough' ? loosen(definition.input) : definition.input;
  const modelInput = omitInjected(definition.id, input, inject);
  definition.examples?.forEach((example, index) => {
    const parsed = modelInput.safeParse(withoutFields(example, inject));
    if (!parsed.success) {
      throw new ToolDefinitionError(
        `Tool ${definition.id}: examples[${index}] does not pass the input schema: ${parsed.error.message}`,
      );
    }
  });
  const inputSchema = definition.inputSchema ?? toJSONSchema(definition.id, modelInput, 'input');
  refuseForbiddenFields(definition.id, inputSchema);
  return {
    ...definition,
    input: input as I,
    kind: 'tool',
    modelInput,
    inputSchema,
    outputSchema: definition.output ? toJSONSchema(definition.id, definition.output, 'output') : undefined,
  };
}

/** Field names the boundary refuses in any input (they reach `Object.prototype`). */
const FORBIDDEN_FIELD_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A schema with a field named `__proto__`, `constructor` or `prototype` could never be called:
 * the boundary refuses those keys in every input (issue 12, defect 9), so the tool is refused
 * here, naming the field, instead of failing every call.
 */
function refuseForbiddenFields(id: string, schema: unknown, path = ''): void {
  if (schema === null || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  const properties = node.properties;
  if (properties !== null && typeof properties === 'object') {
    for (const key of Object.keys(properties)) {
      const where = path ? `${path}.${key}` : key;
      if (FORBIDDEN_FIELD_NAMES.has(key)) {
        throw new ToolDefinitionError(
          `Tool ${id}: its input has a field named "${key}" (${where}); the boundary refuses that name in every call, rename it`,
        );
      }
      refuseForbiddenFields(id, (properties as Record<string, unknown>)[key], where);
    }
  }
  for (const key of ['items', 'additionalProperties'] as const) refuseForbiddenFields(id, node[key], path);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = node[key];
    if (Array.isArray(list)) for (const item of list) refuseForbiddenFields(id, item, path);
  }
}

/** A top-level object that strips unknown keys, made loose; anything else unchanged. */
function loosen(input: z.ZodType): z.ZodType {
  return input instanceof z.ZodObject && input._zod.def.catchall === undefined ? input.loose() : input;
}

function omitInjected(id: string, input: z.ZodType, inject: string[]): z.ZodType {
  if (inject.length === 0) return input;
  if (!(input instanceof z.ZodObject)) {
    throw new ToolDefinitionError(`Tool ${id}: injected fields need an object input schema`);
  }
  const shape = input.shape as Record<string, unknown>;
  const unknown = inject.filter((field) => !Object.hasOwn(shape, field));
  if (unknown.length > 0) {
    throw new ToolDefinitionError(
      `Tool ${id}: injected fields not in the input schema: ${unknown.join(', ')}`,
    );
  }
  return input.omit(Object.fromEntries(inject.map((field) => [field, true])) as never);
}

function toJSONSchema(id: string, schema: z.ZodType, io: 'input' | 'output'): JSONSchema {
  try {
    return z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JSONSchema;
  } catch (err) {
    throw new ToolDefinitionError(`Tool ${id}: its ${io} schema cannot be written as JSON Schema`, {
      cause: err,
    });
  }
}
