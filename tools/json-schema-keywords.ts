/**
 * JSON Schema (draft 2020-12 and draft-07) keywords whose values are themselves schemas, for the
 * walkers that rewrite a schema: the MCP schema sanitiser (json-schema-tool.ts) and the schema a
 * model is sent (models/model-tool-schema.ts).
 *
 * @module
 */

/** Keywords whose value is one schema. */
export const ONE_SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
]);

/** Keywords whose value is a list of schemas. */
export const SCHEMA_LIST_KEYWORDS: ReadonlySet<string> = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
