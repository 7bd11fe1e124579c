import type { JSONSchema } from './define-tool.ts';

/**
 * The sub-schema that describes `path` (property names and array indexes) in a JSON Schema as
 * `z.toJSONSchema` writes it; follows `properties`, `items`/`prefixItems`, `anyOf`/`oneOf`/`allOf`
 * and local `$ref`s. Undefined when the path leads nowhere.
 */
export function schemaAtPath(root: JSONSchema, path: readonly (string | number)[]): JSONSchema | undefined {
  let node: JSONSchema | undefined = resolve(root, root);
  for (const segment of path) {
    if (!node) return undefined;
    node = resolve(root, child(root, node, segment));
  }
  return node;
}

/**
 * The sub-schema of `segment` under `node`, looking through its `anyOf`/`oneOf`/`allOf` options.
 * Each option node is searched once (`searched`): a `$defs` chain of unions naming the level below
 * three times is 3^levels paths but only `levels` nodes (issue 39 item 5: 3 s at 14 levels).
 */
function child(
  root: JSONSchema,
  node: JSONSchema,
  segment: string | number,
  searched = new Set<JSONSchema>(),
): JSONSchema | undefined {
  if (searched.has(node)) return undefined;
  searched.add(node);
  const properties = node.properties as Record<string, JSONSchema> | undefined;
  if (properties && typeof segment === 'string' && Object.hasOwn(properties, segment))
    return properties[segment];
  if (typeof segment === 'number' || /^\d+$/.test(String(segment))) {
    const index = Number(segment);
    const prefix = node.prefixItems as JSONSchema[] | undefined;
    if (prefix?.[index]) return prefix[index];
    if (node.items && typeof node.items === 'object') return node.items as JSONSchema;
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = node[key] as JSONSchema[] | undefined;
    for (const option of options ?? []) {
      const resolved = resolve(root, option);
      const found = resolved === undefined ? undefined : child(root, resolved, segment, searched);
      if (found) return found;
    }
  }
  return undefined;
}

function resolve(root: JSONSchema, node: JSONSchema | undefined): JSONSchema | undefined {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 32; hops++) {
    const ref = current.$ref as string;
    if (ref === '#') current = root;
    else if (ref.startsWith('#/')) {
      current = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], root) as JSONSchema;
    } else return current;
  }
  return current;
}

/** Allowed values of a schema node: `enum`, `const`, or the union of its `anyOf` options' enums. */
export function allowedValues(node: JSONSchema | undefined): unknown[] | undefined {
  if (!node) return undefined;
  if (Array.isArray(node.enum)) return node.enum;
  if ('const' in node) return [node.const];
  const options = (node.anyOf ?? node.oneOf) as JSONSchema[] | undefined;
  if (!options) return undefined;
  const values = options.map(allowedValues);
  return values.every((v) => v !== undefined) ? values.flat() : undefined;
}
