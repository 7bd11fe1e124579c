import type { JSONSchema } from './define-tool.ts';

/**
 * A plausible input built from a JSON Schema, for the `exampleInput` of hints when a tool has no
 * examples (docs/tool-boundary.md §Failures). Required properties only; `examples`, `default`, `const` and `enum` win
 * over synthesized values; string formats get a canonical sample. The caller validates the
 * result against the real schema, since patterns and refinements cannot be synthesized.
 */
export function synthesizeExample(schema: JSONSchema): unknown {
  visited = 0;
  return synth(schema, schema, 0);
}

/**
 * Schema nodes visited per example at most, and items per array: a schema from outside whose
 * `$ref`s name the previous level three times would otherwise be 3^16 nodes (issue 25 item 6).
 */
const MAX_SYNTH_NODES = 2_000;
const MAX_SYNTH_ITEMS = 16;
let visited = 0;

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
  if (depth > 16 || ++visited > MAX_SYNTH_NODES) return null;
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
      const count = Math.min(MAX_SYNTH_ITEMS, Math.max(1, Number(node.minItems ?? 0)));
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

/**
 * A number inside the bounds: 1 when allowed (a friendly default), else the lower bound (nudged
 * past an exclusive one), else the upper bound, else the middle of both; then rounded to an
 * integer or a `multipleOf` that still fits when one does.
 */
function synthNumber(node: JSONSchema, integer: boolean): number {
  const bound = (inclusive: unknown, exclusive: unknown) => {
    // zod writes safe-integer bounds (±2^53-1) for every int; those are limits, not examples.
    const value = inclusive ?? exclusive;
    return typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER
      ? { value, exclusive: inclusive === undefined }
      : undefined;
  };
  const low = bound(node.minimum, node.exclusiveMinimum);
  const high = bound(node.maximum, node.exclusiveMaximum);
  const fits = (n: number) =>
    (!low || (low.exclusive ? n > low.value : n >= low.value)) &&
    (!high || (high.exclusive ? n < high.value : n <= high.value));
  const step = typeof node.multipleOf === 'number' && node.multipleOf > 0 ? node.multipleOf : integer ? 1 : 0;
  const candidates = [1];
  if (low) candidates.push(low.exclusive ? low.value + (step || 1) : low.value);
  if (high) candidates.push(high.exclusive ? high.value - (step || 1) : high.value);
  if (low && high) candidates.push((low.value + high.value) / 2);
  for (const candidate of candidates) {
    const rounded = step
      ? [Math.ceil(candidate / step) * step, Math.floor(candidate / step) * step]
      : [candidate];
    const found = rounded.find((n) => fits(n) && (!integer || Number.isInteger(n)));
    if (found !== undefined) return found;
  }
  return candidates[candidates.length - 1]!;
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
