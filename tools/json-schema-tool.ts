import { z } from 'zod';
import {
  defineTool,
  type JSONSchema,
  TOOL_ID_PATTERN,
  type Tool,
  type ToolDefinition,
  ToolDefinitionError,
} from './define-tool.ts';
import { MAX_EXPANDED_NODES, measureSchema } from './json-schema-budget.ts';
import { ONE_SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS } from './json-schema-keywords.ts';
import { withStepBudget } from './json-schema-step-budget.ts';
import { withLinearPatterns } from './linear-pattern.ts';

/** A function declaration as OpenAI, MCP and BFCL write it: plain JSON Schema parameters. */
export interface JsonSchemaFunction {
  name: string;
  description?: string;
  parameters?: JSONSchema;
}

/** Options for {@link toolFromJsonSchema}. */
export interface JsonSchemaToolOptions
  extends Partial<Omit<ToolDefinition, 'input' | 'description' | 'inputSchema'>> {
  /** Toolset prefix for a bare name (`get_weather` → `<toolset>.get_weather`). Default `catalog`. */
  toolset?: string;
  /** Told what was given up to keep the schema safe: unenforced patterns, `$ref`s kept. */
  onWarning?: (message: string) => void;
}

/**
 * Builds a tool from a plain JSON Schema declaration (OpenAI / MCP style), validated by
 * `z.fromJSONSchema`. Objects that declare `properties` and do not say otherwise get
 * `additionalProperties: false`, so an unknown argument is reported as `unknown_field` (docs/tool-boundary.md §Failures);
 * `{ type: 'object' }` without `properties` stays a free-form map.
 *
 * The id is `name` when it already has the `toolset.tool` form, else `<toolset>.<name>`.
 *
 * The schema is untrusted (issue 25 item 6, docs/mcp.md §Hostile schemas):
 *
 * | what | how |
 * |---|---|
 * | size, depth, a `$ref` cycle that consumes no input | measured first (`measureSchema`); over budget the tool is refused |
 * | the work of one validation (a union chain explores 3^levels branches for a wrong-typed value) | a step budget linear in the input (`withStepBudget`); past it the call is refused with one `schema_too_complex` issue |
 * | `pattern`, `patternProperties`, `propertyNames` | run by RE2JS (linear time); one RE2 cannot run is not enforced, with a warning |
 * | the model-facing `inputSchema` | written back from the zod schema, so it says what is enforced (a `required` property with a `default` becomes optional); when inlining its `$ref`s would pass `MAX_EXPANDED_NODES`, the schema as written (objects closed, `$ref`s kept), with a warning |
 *
 * @throws ToolDefinitionError when the schema is over budget, cannot be converted, or the id is
 *   malformed.
 */
export function toolFromJsonSchema(fn: JsonSchemaFunction, options: JsonSchemaToolOptions = {}): Tool {
  const { toolset = 'catalog', onWarning, ...rest } = options;
  const written = fn.parameters ?? { type: 'object', properties: {} };
  const measure = measureSchema(written);
  if (measure.refused !== undefined) {
    throw new ToolDefinitionError(`Tool ${fn.name}: its parameters are refused: ${measure.refused}`);
  }
  const parameters = closeObjects(written, rest.unknownFields);
  let input: z.ZodType;
  try {
    const built = withLinearPatterns(() =>
      z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]),
    );
    // Validation of an outside schema is bounded in steps: a union chain explores 3^n branches.
    input = withStepBudget(built.value);
    if (built.unenforced.length > 0) {
      onWarning?.(
        `Tool ${fn.name}: patterns a linear-time engine cannot run are not checked here (the server still does): ${built.unenforced.map((pattern) => JSON.stringify(pattern.slice(0, 80))).join(', ')}`,
      );
    }
  } catch (err) {
    throw new ToolDefinitionError(
      `Tool ${fn.name}: its parameters are not JSON Schema zod can read: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const keepRefs = measure.expandedNodes > MAX_EXPANDED_NODES;
  if (keepRefs) {
    onWarning?.(
      `Tool ${fn.name}: its schema is shown as written, $refs kept (inlined it would pass ${MAX_EXPANDED_NODES} nodes)`,
    );
  }
  return defineTool({
    id: TOOL_ID_PATTERN.test(fn.name) ? fn.name : `${toolset}.${fn.name}`,
    description: fn.description ?? '',
    input,
    ...rest,
    ...(keepRefs ? { inputSchema: parameters } : {}),
  });
}

/** Keywords whose value maps names to schemas: the keys are names, not keywords. */
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);

/**
 * Deep copy with `additionalProperties: false` on every object schema that declares `properties`
 * and says nothing about other keys. An object schema without `properties` (`{ type: 'object' }`)
 * is a free-form map and stays open. Only schema positions are visited: data keywords (`default`,
 * `const`, `enum`, `examples`) are copied untouched even when their values look like schemas.
 */
function closeObjects(schema: JSONSchema, unknownFields: 'reject' | 'passthrough' | undefined): JSONSchema {
  if (unknownFields === 'passthrough') return schema;
  const visit = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (ONE_SCHEMA_KEYWORDS.has(key)) out[key] = visit(value);
      else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value)) out[key] = value.map(visit);
      else if (SCHEMA_MAP_KEYWORDS.has(key) && value !== null && typeof value === 'object') {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, visit(sub)]));
      } else out[key] = value;
    }
    const declaresFields = out.properties !== undefined && (out.type === 'object' || out.type === undefined);
    const saysNothingElse =
      out.additionalProperties === undefined &&
      out.patternProperties === undefined &&
      out.unevaluatedProperties === undefined;
    if (declaresFields && saysNothingElse) out.additionalProperties = false;
    return out;
  };
  return visit(schema) as JSONSchema;
}
