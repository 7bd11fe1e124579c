import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JSONSchema } from '../../tools/index.ts';

/**
 * BFCL (Berkeley Function Calling Leaderboard) data for tests. The data lives outside the repo
 * at `../shared/data/bfcl` (relative to the repo root; `BFCL_DATA_DIR` overrides it) and is never
 * copied into it; suites that need it skip locally when it is absent and fail under `CI=true`.
 */
export const BFCL_DIR = resolve(
  process.env.BFCL_DATA_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '../../../shared/data/bfcl'),
);

export function bfclDataAvailable(): boolean {
  return existsSync(BFCL_DIR);
}

/** Reads a BFCL file: JSON Lines, one entry per non-empty line. */
export function readBfclJsonLines<T>(relativePath: string): T[] {
  return readFileSync(join(BFCL_DIR, relativePath), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** A BFCL parameter schema: JSON Schema with Python type names (`dict`, `float`, `tuple`, `any`). */
export interface BfclSchema {
  type?: string;
  description?: string;
  properties?: Record<string, BfclSchema>;
  required?: string[];
  items?: BfclSchema;
  enum?: unknown[];
  default?: unknown;
  [keyword: string]: unknown;
}

export interface BfclFunctionDoc {
  name: string;
  description: string;
  parameters: BfclSchema;
}

/** One line of `BFCL_v4_<category>.json`. */
export interface BfclEntry {
  id: string;
  question: unknown;
  function: BfclFunctionDoc[];
}

/**
 * One line of `possible_answer/BFCL_v4_<category>.json`: per function, per argument, the list of
 * acceptable values. `""` among them means "may be omitted"; nested objects use the same form.
 */
export interface BfclPossibleAnswer {
  id: string;
  ground_truth: Record<string, Record<string, unknown[]>>[];
}

const BFCL_TYPES: Record<string, string | undefined> = {
  dict: 'object',
  float: 'number',
  tuple: 'array',
  any: undefined,
  integer: 'integer',
  string: 'string',
  boolean: 'boolean',
  array: 'array',
};

/**
 * The small BFCL → JSON Schema mapping these tests need (the full one belongs in `bfcl/`):
 * `dict` → `object`, `float` → `number`, `tuple` → `array`, `any` → no `type`; `integer`,
 * `string`, `boolean`, `array` unchanged. Keeps `description`, `properties`, `required`,
 * `items`, `enum` and `default`; drops everything else (BFCL's non-standard `optional` flag).
 *
 * @throws Error for a BFCL type it does not know, so new data cannot be mapped silently wrong.
 */
export function bfclToJsonSchema(schema: BfclSchema): JSONSchema {
  const out: JSONSchema = {};
  if (schema.type !== undefined) {
    if (!Object.hasOwn(BFCL_TYPES, schema.type)) throw new Error(`Unknown BFCL type "${schema.type}"`);
    const type = BFCL_TYPES[schema.type];
    if (type !== undefined) out.type = type;
  }
  if (schema.description !== undefined) out.description = schema.description;
  if (schema.properties !== undefined) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, sub]) => [name, bfclToJsonSchema(sub)]),
    );
  }
  if (schema.required !== undefined) out.required = schema.required;
  if (schema.items !== undefined) out.items = bfclToJsonSchema(schema.items);
  if (schema.enum !== undefined) out.enum = schema.enum;
  if (Object.hasOwn(schema, 'default')) out.default = schema.default;
  return out;
}

/**
 * A call built from BFCL's acceptable values: the first value of each argument; an argument
 * whose first acceptable value is `""` may be omitted, so it is. Objects nested in a value (also
 * inside arrays, e.g. a list of conditions) use the same form and are resolved the same way.
 */
export function firstAcceptableArguments(args: Record<string, unknown[]>): Record<string, unknown> {
  const call: Record<string, unknown> = {};
  for (const [name, acceptable] of Object.entries(args)) {
    const first = acceptable[0];
    if (first === '') continue;
    call[name] = resolveNested(first);
  }
  return call;
}

function resolveNested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveNested);
  return isAcceptableValueMap(value) ? firstAcceptableArguments(value) : value;
}

/** A nested object in a possible answer: every value is itself a list of acceptable values. */
function isAcceptableValueMap(value: unknown): value is Record<string, unknown[]> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => Array.isArray(item))
  );
}
