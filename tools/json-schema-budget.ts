import type { JSONSchema } from './define-tool.ts';

/**
 * What a JSON Schema from outside (an MCP server's `inputSchema`) may cost before it is converted
 * (issue 25 item 6): a ~1.3 KB `$defs` chain naming the previous level three times is 3^n nodes
 * once its `$ref`s are inlined, and converting it back from zod stalled the process for minutes.
 * Measured in one linear pass, before zod sees the schema.
 *
 * | budget | over it |
 * |---|---|
 * | {@link MAX_SCHEMA_CHARS} characters of JSON | the tool is refused |
 * | {@link MAX_SCHEMA_DEPTH} levels of nesting | the tool is refused |
 * | a `$ref` cycle that consumes no input (`A → B → A`, `allOf: [{ $ref: '#' }]`) | the tool is refused (validation would never end) |
 * | {@link MAX_EXPANDED_NODES} nodes with every `$ref` inlined | the model is shown the schema as written, `$ref`s kept |
 *
 * @module
 */

/** Largest schema accepted, in characters of its JSON (256 KiB; real tools stay under 20 KB). */
export const MAX_SCHEMA_CHARS = 256 * 1024;
/** Deepest nesting of a schema accepted, in JSON levels. */
export const MAX_SCHEMA_DEPTH = 64;
/**
 * Largest schema, in nodes once its `$ref`s are inlined, whose model-facing form is written back
 * from zod (which inlines every `$ref` that is not a cycle); above it the written form is kept.
 */
export const MAX_EXPANDED_NODES = 10_000;

/** What {@link measureSchema} found. */
export interface SchemaMeasure {
  /** Why the schema is refused, or undefined. */
  refused?: string;
  /** Nodes with `$ref`s inlined (cycles counted once), at most `MAX_EXPANDED_NODES + 1`. */
  expandedNodes: number;
}

/** Keywords whose value is one schema that applies to the same value (no input consumed). */
const IN_PLACE = ['not', 'if', 'then', 'else'];
/** Keywords whose value is a list of schemas that apply to the same value. */
const IN_PLACE_LISTS = ['allOf', 'anyOf', 'oneOf'];

/** Measures a schema against the budgets above, never recursing deeper than the schema's own depth limit. */
export function measureSchema(schema: JSONSchema): SchemaMeasure {
  let chars: number;
  try {
    chars = JSON.stringify(schema)?.length ?? 0;
  } catch (error) {
    return { refused: `it is not JSON (${(error as Error).message})`, expandedNodes: 0 };
  }
  if (chars > MAX_SCHEMA_CHARS) {
    return { refused: `it is ${chars} characters of JSON (budget ${MAX_SCHEMA_CHARS})`, expandedNodes: 0 };
  }
  const depth = depthOf(schema, 0);
  if (depth > MAX_SCHEMA_DEPTH) {
    return { refused: `it nests deeper than ${MAX_SCHEMA_DEPTH} levels`, expandedNodes: 0 };
  }
  const cycle = emptyCycle(schema);
  if (cycle !== undefined) {
    return { refused: `its $refs form a cycle that consumes no input (${cycle})`, expandedNodes: 0 };
  }
  return { expandedNodes: expandedSize(schema) };
}

function depthOf(value: unknown, depth: number): number {
  if (depth > MAX_SCHEMA_DEPTH || value === null || typeof value !== 'object') return depth;
  let deepest = depth;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child, depth + 1));
  return deepest;
}

/** The node a local `$ref` (`#`, `#/$defs/a~1b`) points at, or undefined. */
export function resolveLocalRef(root: JSONSchema, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * A cycle of `$ref`s through keywords that apply to the same value (`$ref`, `allOf`, `anyOf`,
 * `oneOf`, `not`, `if`/`then`/`else`): zod's lazy schemas would recurse on one value forever
 * (a `RangeError` on the first call). Returns the cycle as `#/$defs/A → #/$defs/B → #/$defs/A`.
 */
function emptyCycle(root: JSONSchema): string | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (ref: string, path: string[]): string | undefined => {
    if (state.get(ref) === 'done') return undefined;
    if (state.get(ref) === 'open') return [...path.slice(path.indexOf(ref)), ref].join(' → ');
    state.set(ref, 'open');
    const found = refsInPlace(resolveLocalRef(root, ref)).reduce<string | undefined>(
      (hit, next) => hit ?? visit(next, [...path, ref]),
      undefined,
    );
    state.set(ref, 'done');
    return found;
  };
  return [...allRefs(root, new Set())].reduce<string | undefined>(
    (hit, ref) => hit ?? visit(ref, []),
    undefined,
  );
}

/** Every local `$ref` anywhere in the schema. */
function allRefs(node: unknown, into: Set<string>): Set<string> {
  if (node === null || typeof node !== 'object') return into;
  const ref = (node as Record<string, unknown>).$ref;
  if (typeof ref === 'string' && ref.startsWith('#')) into.add(ref);
  for (const child of Object.values(node)) allRefs(child, into);
  return into;
}

/** The local `$ref`s reached from `node` without descending into a property or item. */
function refsInPlace(node: unknown, seen = new Set<unknown>()): string[] {
  if (node === null || typeof node !== 'object' || seen.has(node)) return [];
  seen.add(node);
  const schema = node as Record<string, unknown>;
  const refs = typeof schema.$ref === 'string' && schema.$ref.startsWith('#') ? [schema.$ref] : [];
  for (const key of IN_PLACE) refs.push(...refsInPlace(schema[key], seen));
  for (const key of IN_PLACE_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) for (const item of list) refs.push(...refsInPlace(item, seen));
  }
  return refs;
}

/**
 * Nodes of the schema with every local `$ref` inlined (a `$ref` back into its own expansion
 * counts 1, as zod writes a cycle as a `$ref`), saturating at `MAX_EXPANDED_NODES + 1`. Linear:
 * each `$ref` target is counted once and remembered.
 */
function expandedSize(root: JSONSchema): number {
  const cap = MAX_EXPANDED_NODES + 1;
  const byRef = new Map<string, number>();
  const open = new Set<string>();
  const count = (node: unknown): number => {
    if (node === null || typeof node !== 'object') return 1;
    let total = 1;
    const ref = (node as Record<string, unknown>).$ref;
    if (typeof ref === 'string' && ref.startsWith('#')) {
      if (open.has(ref)) return 1;
      let size = byRef.get(ref);
      if (size === undefined) {
        open.add(ref);
        size = count(resolveLocalRef(root, ref));
        open.delete(ref);
        byRef.set(ref, size);
      }
      total += size;
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === '$defs' || key === 'definitions' || key === '$ref') continue;
      total += count(child);
      if (total >= cap) return cap;
    }
    return Math.min(total, cap);
  };
  return count(root);
}
