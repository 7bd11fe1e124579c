import type { JSONSchema } from './define-tool.ts';

/**
 * A plausible input built from a JSON Schema, for the `exampleInput` of hints when a tool has no
 * examples (SPEC §3). Required properties only; `examples`, `default`, `const` and `enum` win
 * over synthesized values; string formats get a canonical sample. The caller validates the
 * result against the real schema, since patterns and refinements cannot be synthesized.
 */
export function synthesizeExample(schema: JSONSchema): unknown {
  return synth(schema, schema, 0);
}

const FORMAT_SAMPLES: Record<string, string> = {
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '12:00:00',
  duration: 'P1D',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
};

function synth(root: JSONSchema, node: JSONSchema, depth: number): unknown {
  if (depth > 16) return null;
  if (typeof node.$ref === 'string') {
    const target = node.$ref === '#' ? root : lookupRef(root, node.$ref);
    return target ? synth(root, target, depth + 1) : null;
  }
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0];
  if ('default' in node) return node.default;
  if ('const' in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = node[key] as JSONSchema[] | undefined;
    if (options?.length) {
      const preferred = options.find((option) => option.type !== 'null') ?? options[0]!;
      return synth(root, preferred, depth + 1);
    }
  }
  if (Array.isArray(node.allOf)) {
    return Object.assign({}, ...(node.allOf as JSONSchema[]).map((part) => synth(root, part, depth + 1)));
  }
  const type = Array.isArray(node.type) ? (node.type.find((t) => t !== 'null') ?? node.type[0]) : node.type;
  switch (type) {
    case 'object':
      return synthObject(root, node, depth);
    case 'array': {
      const count = Math.max(1, Number(node.minItems ?? 0));
      const prefix = (node.prefixItems as JSONSchema[] | undefined) ?? [];
      if (prefix.length > 0) return prefix.map((item) => synth(root, item, depth + 1));
      const items = (node.items as JSONSchema | undefined) ?? {};
      const limit = node.maxItems === undefined ? count : Math.min(count, Number(node.maxItems));
      return Array.from({ length: limit }, () => synth(root, items, depth + 1));
    }
    case 'string':
      return synthString(node);
    case 'integer':
    case 'number':
      return synthNumber(node, type === 'integer');
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return node.properties ? synthObject(root, node, depth) : 'example';
  }
}

function synthObject(root: JSONSchema, node: JSONSchema, depth: number): Record<string, unknown> {
  const properties = (node.properties as Record<string, JSONSchema> | undefined) ?? {};
  const required = (node.required as string[] | undefined) ?? [];
  const out: Record<string, unknown> = {};
  for (const name of required) {
    out[name] = synth(root, properties[name] ?? {}, depth + 1);
  }
  return out;
}

function synthString(node: JSONSchema): string {
  const format = typeof node.format === 'string' ? FORMAT_SAMPLES[node.format] : undefined;
  let value = format ?? 'example';
  const min = Number(node.minLength ?? 0);
  if (value.length < min) value = value.padEnd(min, 'x');
  if (node.maxLength !== undefined) value = value.slice(0, Number(node.maxLength));
  return value;
}

function synthNumber(node: JSONSchema, integer: boolean): number {
  const min =
    node.minimum ?? (node.exclusiveMinimum !== undefined ? Number(node.exclusiveMinimum) + 1 : undefined);
  const max =
    node.maximum ?? (node.exclusiveMaximum !== undefined ? Number(node.exclusiveMaximum) - 1 : undefined);
  // zod writes safe-integer bounds (±2^53-1) for every int; those are limits, not examples.
  const lower = min !== undefined && Number(min) > -Number.MAX_SAFE_INTEGER ? Number(min) : undefined;
  const upper = max !== undefined && Number(max) < Number.MAX_SAFE_INTEGER ? Number(max) : undefined;
  let value = lower ?? (upper !== undefined ? Math.min(1, upper) : 1);
  if (lower !== undefined && lower <= 1 && (upper === undefined || upper >= 1)) value = 1;
  if (integer) value = Math.ceil(value);
  const multipleOf = Number(node.multipleOf ?? 0);
  if (multipleOf > 0) value = Math.ceil(value / multipleOf) * multipleOf;
  return value;
}

function lookupRef(root: JSONSchema, ref: string): JSONSchema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], root) as
    | JSONSchema
    | undefined;
}
