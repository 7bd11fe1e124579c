import type { JSONSchema } from '../tools/define-tool.ts';
import { ONE_SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS } from '../tools/json-schema-keywords.ts';

/**
 * A tool's JSON Schema as a model is sent it (issue 24 item 9). `z.toJSONSchema` writes what zod
 * knows, and a small model copies it into its arguments: `"snp_id":
 * "https://json-schema.org/draft/2020-12/schema"` from `$schema`, `initial_value:
 * 9007199254740991` from the bounds zod puts on every integer. The model gets the shape the AI
 * SDK's `zodSchema` sends (draft-07, references inlined, objects closed), without those:
 *
 * | in the tool's schema (`z.toJSONSchema`, 2020-12)          | sent to the model                               |
 * |-----------------------------------------------------------|-------------------------------------------------|
 * | `$schema`                                                 | left out                                        |
 * | `minimum: -9007199254740991`, `maximum: 9007199254740991` (zod's safe-integer bounds) | left out (other bounds kept) |
 * | `$ref` to a `$defs` entry that does not refer to itself   | the entry, inlined                              |
 * | `$ref` to a recursive entry (`z.lazy`)                    | `#/definitions/<name>`, zod's `__schemaN` names as `schemaN` |
 * | `prefixItems` + `items` (a tuple)                         | `items: [...]` + `additionalItems` (draft-07)   |
 * | an object with `properties` and no `additionalProperties` | `additionalProperties: false`, as `zodSchema` adds (the boundary refuses unknown fields) |
 *
 * Data keywords (`default`, `const`, `enum`, `examples`) are copied as they are. The result is a
 * fresh object, the same for the same input object (cached): a turn does not rebuild it.
 */
export function modelToolSchema(schema: JSONSchema): JSONSchema {
  let cleaned = cache.get(schema);
  if (!cleaned) {
    cleaned = clean(schema);
    cache.set(schema, cleaned);
  }
  return cleaned;
}

const cache = new WeakMap<JSONSchema, JSONSchema>();

/** zod's bounds for `z.int()`, `z.number().int()`, `z.number().safe()`. */
const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas']);

function clean(root: JSONSchema): JSONSchema {
  const defs = {
    ...asRecord(root.definitions),
    ...asRecord(root.$defs),
  } as Record<string, JSONSchema>;
  const recursive = new Set(Object.keys(defs).filter((name) => refersTo(defs, name)));
  const defName = (name: string) => name.replace(/^__schema(\d+)$/, 'schema$1');
  const refName = (ref: unknown): string | undefined => {
    if (typeof ref !== 'string') return undefined;
    const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
    return match && Object.hasOwn(defs, match[1]!) ? match[1] : undefined;
  };

  const visit = (node: unknown, depth: number): unknown => {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || depth > 64) return node;
    let source = node as JSONSchema;
    const target = refName(source.$ref);
    if (target !== undefined && !recursive.has(target)) {
      // Inlined: the entry's keywords, then the referring node's own (a description beside $ref).
      const { $ref: _ref, ...siblings } = source;
      source = { ...defs[target], ...siblings };
    }
    const out: JSONSchema = {};
    for (const [key, value] of Object.entries(source)) {
      if (key === '$schema' || key === '$defs' || key === 'definitions' || key === '$id') continue;
      if ((key === 'minimum' || key === 'maximum') && SAFE_INTEGER_BOUNDS.has(value as number)) continue;
      if (key === '$ref') {
        const name = refName(value);
        // `#` (the root itself) and outside references stay as they are.
        out.$ref = name === undefined ? value : `#/definitions/${defName(name)}`;
      } else if (ONE_SCHEMA_KEYWORDS.has(key)) out[key] = visit(value, depth + 1);
      else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value))
        out[key] = value.map((item) => visit(item, depth + 1));
      else if (SCHEMA_MAP.has(key) && value !== null && typeof value === 'object') {
        out[key] = Object.fromEntries(
          Object.entries(value).map(([name, sub]) => [name, visit(sub, depth + 1)]),
        );
      } else out[key] = value;
    }
    if (Array.isArray(out.prefixItems)) {
      // A tuple, as draft-07 writes it.
      const rest = out.items;
      out.items = out.prefixItems;
      delete out.prefixItems;
      if (rest !== undefined) out.additionalItems = rest;
    }
    if (
      out.properties !== undefined &&
      (out.type === 'object' || out.type === undefined) &&
      out.additionalProperties === undefined &&
      out.patternProperties === undefined
    ) {
      out.additionalProperties = false;
    }
    return out;
  };

  const out = visit(root, 0) as JSONSchema;
  if (recursive.size > 0) {
    out.definitions = Object.fromEntries([...recursive].map((name) => [defName(name), visit(defs[name], 1)]));
  }
  return out;
}

/** Whether the entry `name` can reach a `$ref` to itself. */
function refersTo(defs: Record<string, JSONSchema>, name: string): boolean {
  const seen = new Set<string>();
  const pending = [name];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for (const ref of refsIn(defs[current])) {
      if (ref === name) return true;
      if (!seen.has(ref) && Object.hasOwn(defs, ref)) {
        seen.add(ref);
        pending.push(ref);
      }
    }
  }
  return false;
}

function refsIn(node: unknown, found: string[] = []): string[] {
  if (node === null || typeof node !== 'object') return found;
  if (Array.isArray(node)) {
    for (const item of node) refsIn(item, found);
    return found;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(value);
      if (match) found.push(match[1]!);
    } else refsIn(value, found);
  }
  return found;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
