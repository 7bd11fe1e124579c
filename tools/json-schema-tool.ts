import { z } from 'zod';
import {
  defineTool,
  type JSONSchema,
  TOOL_ID_PATTERN,
  type Tool,
  type ToolDefinition,
  ToolDefinitionError,
} from './define-tool.ts';

/** A function declaration as OpenAI, MCP and BFCL write it: plain JSON Schema parameters. */
export interface JsonSchemaFunction {
  name: string;
  description?: string;
  parameters?: JSONSchema;
}

/** Options for {@link toolFromJsonSchema}. */
export interface JsonSchemaToolOptions extends Partial<Omit<ToolDefinition, 'input' | 'description'>> {
  /** Toolset prefix for a bare name (`get_weather` → `<toolset>.get_weather`). Default `catalog`. */
  toolset?: string;
}

/**
 * Builds a tool from a plain JSON Schema declaration (OpenAI / MCP style), validated by
 * `z.fromJSONSchema`. Objects that do not say otherwise get `additionalProperties: false`,
 * so an unknown argument is reported as `unknown_field` (SPEC §3).
 *
 * The id is `name` when it already has the `toolset.tool` form, else `<toolset>.<name>`.
 *
 * @throws ToolDefinitionError when the schema cannot be converted or the id is malformed.
 */
export function toolFromJsonSchema(fn: JsonSchemaFunction, options: JsonSchemaToolOptions = {}): Tool {
  const { toolset = 'catalog', ...rest } = options;
  const parameters = closeObjects(fn.parameters ?? { type: 'object', properties: {} }, rest.unknownFields);
  let input: z.ZodType;
  try {
    input = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    throw new ToolDefinitionError(
      `Tool ${fn.name}: its parameters are not JSON Schema zod can read: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return defineTool({
    id: TOOL_ID_PATTERN.test(fn.name) ? fn.name : `${toolset}.${fn.name}`,
    description: fn.description ?? '',
    input,
    ...rest,
  });
}

/** Deep copy with `additionalProperties: false` on every object schema that leaves it unset. */
function closeObjects(schema: JSONSchema, unknownFields: 'reject' | 'passthrough' | undefined): JSONSchema {
  if (unknownFields === 'passthrough') return schema;
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      // `properties` maps names to schemas: its keys are field names, not keywords.
      out[key] =
        key === 'properties' && value && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, visit(sub)]))
          : visit(value);
    }
    const isObject = out.type === 'object' || (out.properties !== undefined && out.type === undefined);
    if (isObject && out.additionalProperties === undefined && out.patternProperties === undefined) {
      out.additionalProperties = false;
    }
    return out;
  };
  return visit(schema) as JSONSchema;
}
