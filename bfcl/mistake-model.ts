import {
  type JSONSchema,
  type RetryReason,
  TOOL_ID_PATTERN,
  type Tool,
  validateToolInput,
} from '../tools/index.ts';
import { seededRandom } from './seeded-random.ts';

/**
 * A seeded model of the wrong calls LLMs make, built from a correct call (a BFCL ground truth)
 * and the tool's model-facing JSON Schema. Each mistake says which RetryReason the tool boundary
 * (docs/tool-boundary.md §Failures) must report for it, so a run can check the boundary's hints against it.
 *
 * | kind                | what the planner sends                              | expected reason     | applies when |
 * |---------------------|-----------------------------------------------------|---------------------|--------------|
 * | `none`              | the correct call                                     | none (success)      | always |
 * | `missing_required`  | one required argument left out                       | `missing_fields`    | a required field is present |
 * | `number_as_string`  | a number sent as a string (`5` → `"5"`)              | `invalid_arguments` | a field typed number holds a number |
 * | `enum_wrong_case`   | an enum value in another case (`"celsius"` → `"CELSIUS"`) | `invalid_arguments` | the changed value is not itself allowed |
 * | `unknown_argument`  | one extra, made-up argument                          | `invalid_arguments` | the object is closed (`additionalProperties: false`) |
 * | `hallucinated_tool` | a near name (typo, plural) that is no tool           | `tool_unavailable`  | such a name exists |
 * | `truncated_json`    | the arguments as JSON text, cut short                | `invalid_arguments` | always |
 * | `timeout_once`      | the correct call; the tool times out the first time  | `timeout`           | always |
 * | `rate_limited_once` | the correct call; the tool is rate limited the first time | `rate_limited` | always |
 *
 * Arguments are searched through nested objects and arrays (`properties`, `items`, and unions
 * of constants); inside other unions nothing is changed, as the outcome would depend on the
 * branches. When the correct call does not pass the tool's own validation (a ground-truth quirk),
 * only the kinds decided before validation apply: `hallucinated_tool` and `truncated_json`.
 *
 * Same `(target.key, seed)` → same kind and same change. The PRNG is mulberry32.
 */
export const MISTAKE_KINDS = [
  'none',
  'missing_required',
  'number_as_string',
  'enum_wrong_case',
  'unknown_argument',
  'hallucinated_tool',
  'truncated_json',
  'timeout_once',
  'rate_limited_once',
] as const;
export type MistakeKind = (typeof MISTAKE_KINDS)[number];

/** The RetryReason the boundary must report for each kind; undefined: the call succeeds. */
export const EXPECTED_REASON: Readonly<Record<MistakeKind, RetryReason | undefined>> = {
  none: undefined,
  missing_required: 'missing_fields',
  number_as_string: 'invalid_arguments',
  enum_wrong_case: 'invalid_arguments',
  unknown_argument: 'invalid_arguments',
  hallucinated_tool: 'tool_unavailable',
  truncated_json: 'invalid_arguments',
  timeout_once: 'timeout',
  rate_limited_once: 'rate_limited',
};

export interface MistakeTarget {
  /** Identifies the call for seeding, e.g. `live_simple_3-2-1#0`. */
  key: string;
  /** The correct call: tool id and input object. */
  call: { name: string; input: Record<string, unknown> };
  /** The tool the call is for; its `inputSchema` decides which mistakes apply. */
  tool: Tool;
  /** Every tool id the planner may call; a hallucinated name is none of them. */
  toolIds: readonly string[];
}

export interface Mistake {
  kind: MistakeKind;
  expectedReason: RetryReason | undefined;
  /** What the planner sends: an input object, or JSON text for `truncated_json`. */
  call: { name: string; input: unknown };
  /** The change, e.g. `removed "unit"`, `days: 5 → "5"`. */
  detail: string;
  /** The fault the tool shows on its first execution (see `withFaultOnce`). */
  fault?: 'timeout' | 'rate_limited';
  /** Every kind that applied to the target, in {@link MISTAKE_KINDS} order. */
  applicable: MistakeKind[];
}

/** Thrown by {@link applyMistake} for a kind that does not apply to the target. */
export class MistakeNotApplicableError extends Error {
  override readonly name = 'MistakeNotApplicableError';
}

export function applicableMistakes(target: MistakeTarget): MistakeKind[] {
  const baselineValid = validateToolInput(target.tool, target.call.input).ok;
  const sites = sitesOf(target);
  const available: Record<MistakeKind, boolean> = {
    none: baselineValid,
    missing_required: baselineValid && sites.required.length > 0,
    number_as_string: baselineValid && sites.numbers.length > 0,
    enum_wrong_case: baselineValid && sites.enums.length > 0,
    unknown_argument: baselineValid && sites.closed.length > 0,
    hallucinated_tool: nearNames(target.call.name, target.toolIds).length > 0,
    truncated_json: true,
    timeout_once: baselineValid,
    rate_limited_once: baselineValid,
  };
  return MISTAKE_KINDS.filter((kind) => available[kind]);
}

/** Picks one applicable kind, uniformly, from `kinds` (default: all). */
export function chooseMistake(
  target: MistakeTarget,
  seed: number | string,
  options: { kinds?: readonly MistakeKind[] } = {},
): MistakeKind {
  const allowed = new Set(options.kinds ?? MISTAKE_KINDS);
  const candidates = applicableMistakes(target).filter((kind) => allowed.has(kind));
  if (candidates.length === 0) {
    throw new MistakeNotApplicableError(`No mistake of ${[...allowed].join(', ')} applies to ${target.key}`);
  }
  return seededRandom(seed, target.key, 'kind').pick(candidates);
}

/** @throws MistakeNotApplicableError when `kind` does not apply to the target. */
export function applyMistake(target: MistakeTarget, kind: MistakeKind, seed: number | string): Mistake {
  const applicable = applicableMistakes(target);
  if (!applicable.includes(kind)) {
    throw new MistakeNotApplicableError(
      `${kind} does not apply to ${target.key}; applicable: ${applicable.join(', ') || '(none)'}`,
    );
  }
  const random = seededRandom(seed, target.key, kind);
  const sites = sitesOf(target);
  const input = structuredClone(target.call.input);
  const base = { kind, expectedReason: EXPECTED_REASON[kind], applicable };
  const same = { name: target.call.name, input };
  switch (kind) {
    case 'none':
      return { ...base, call: same, detail: 'the correct call' };
    case 'missing_required': {
      const site = random.pick(sites.required);
      deleteAt(input, site.path);
      return { ...base, call: same, detail: `removed required "${site.path.join('.')}"` };
    }
    case 'number_as_string': {
      const site = random.pick(sites.numbers);
      setAt(input, site.path, String(site.value));
      return { ...base, call: same, detail: `${site.path.join('.')}: ${site.value} → "${site.value}"` };
    }
    case 'enum_wrong_case': {
      const site = random.pick(sites.enums);
      const changed = random.pick(site.variants);
      setAt(input, site.path, changed);
      return { ...base, call: same, detail: `${site.path.join('.')}: "${site.value}" → "${changed}"` };
    }
    case 'unknown_argument': {
      const site = random.pick(sites.closed);
      const name = random.pick(MADE_UP_NAMES.filter((candidate) => !site.known.includes(candidate)));
      const value = random.pick(MADE_UP_VALUES);
      setAt(input, [...site.path, name], value);
      const where = [...site.path, name].join('.');
      return { ...base, call: same, detail: `added unknown "${where}": ${JSON.stringify(value)}` };
    }
    case 'hallucinated_tool': {
      const name = random.pick(nearNames(target.call.name, target.toolIds));
      return { ...base, call: { name, input }, detail: `${target.call.name} → ${name}` };
    }
    case 'truncated_json': {
      const text = JSON.stringify(input);
      // Any proper prefix of an object's JSON text is invalid JSON.
      const cut = 1 + random.int(text.length - 1);
      return {
        ...base,
        call: { name: target.call.name, input: text.slice(0, cut) },
        detail: `JSON text cut to ${cut} of ${text.length} characters`,
      };
    }
    case 'timeout_once':
      return { ...base, call: same, fault: 'timeout', detail: 'the tool times out on its first execution' };
    case 'rate_limited_once':
      return {
        ...base,
        call: same,
        fault: 'rate_limited',
        detail: 'the tool is rate limited on its first execution',
      };
  }
}

/** {@link chooseMistake} then {@link applyMistake}. */
export function makeMistake(
  target: MistakeTarget,
  seed: number | string,
  options: { kinds?: readonly MistakeKind[] } = {},
): Mistake {
  return applyMistake(target, chooseMistake(target, seed, options), seed);
}

/** Parameter names models invent; one not declared by the object is used. */
const MADE_UP_NAMES = ['verbose', 'format', 'limit', 'timeout', 'language', 'api_key', 'debug', 'retries'];
const MADE_UP_VALUES: unknown[] = [true, 10, 'auto'];

type Path = (string | number)[];

interface Sites {
  required: { path: Path }[];
  numbers: { path: Path; value: number }[];
  enums: { path: Path; value: string; variants: string[] }[];
  /** Closed objects present in the input, with the names they declare. */
  closed: { path: Path; known: string[] }[];
}

function sitesOf(target: MistakeTarget): Sites {
  const sites = findSites(target.call.input, target.tool.inputSchema);
  // A tool that passes unknown fields through does not reject a made-up one.
  if (target.tool.unknownFields === 'passthrough') sites.closed = [];
  return sites;
}

function findSites(input: unknown, schema: JSONSchema): Sites {
  const sites: Sites = { required: [], numbers: [], enums: [], closed: [] };
  const visit = (value: unknown, node: JSONSchema | undefined, path: Path, depth: number): void => {
    if (!node || depth > 32) return;
    const types = typeList(node);
    if (isRecord(value) && types.includes('object')) {
      const properties = isRecord(node.properties) ? (node.properties as Record<string, JSONSchema>) : {};
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      for (const key of required)
        if (Object.hasOwn(value, key)) sites.required.push({ path: [...path, key] });
      if (node.additionalProperties === false) sites.closed.push({ path, known: Object.keys(properties) });
      for (const [key, item] of Object.entries(value))
        visit(item, properties[key], [...path, key], depth + 1);
      return;
    }
    if (Array.isArray(value) && types.includes('array') && isRecord(node.items)) {
      for (const [index, item] of value.entries())
        visit(item, node.items as JSONSchema, [...path, index], depth + 1);
      return;
    }
    if (
      typeof value === 'number' &&
      types.length > 0 &&
      types.every((t) => ['integer', 'number', 'null'].includes(t))
    ) {
      if (node.enum === undefined && node.const === undefined) sites.numbers.push({ path, value });
      return;
    }
    if (typeof value === 'string') {
      const allowed = allowedConstants(node);
      if (!allowed?.includes(value)) return;
      const variants = caseVariants(value).filter((variant) => !allowed.includes(variant));
      if (variants.length > 0) sites.enums.push({ path, value, variants });
    }
  };
  visit(input, schema, [], 0);
  return sites;
}

function typeList(node: JSONSchema): string[] {
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.map(String);
  return [];
}

/** `enum`, or a union whose every branch is a `const`, as zod writes mixed enums. */
function allowedConstants(node: JSONSchema): unknown[] | undefined {
  if (Array.isArray(node.enum)) return node.enum;
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches) && branches.length > 0 && branches.every((b) => isRecord(b) && 'const' in b)) {
    return branches.map((b) => (b as JSONSchema).const);
  }
  return undefined;
}

function caseVariants(value: string): string[] {
  const swapped = Array.from(value, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join(
    '',
  );
  return [...new Set([value.toUpperCase(), value.toLowerCase(), swapped])].filter(
    (variant) => variant !== value,
  );
}

/** Names one typo or one plural away from `name` that are valid ids but no known tool. */
function nearNames(name: string, toolIds: readonly string[]): string[] {
  const known = new Set(toolIds);
  const dot = name.lastIndexOf('.');
  const prefix = name.slice(0, dot + 1);
  const last = name.slice(dot + 1);
  const variants = new Set<string>();
  variants.add(last.endsWith('s') ? last.slice(0, -1) : `${last}s`);
  for (let i = 0; i + 1 < last.length; i++) {
    if (last[i] !== last[i + 1]) variants.add(last.slice(0, i) + last[i + 1] + last[i] + last.slice(i + 2));
  }
  for (let i = 0; i < last.length; i++) {
    variants.add(last.slice(0, i) + last.slice(i + 1));
    if (/[a-z]/i.test(last[i]!)) variants.add(last.slice(0, i + 1) + last[i] + last.slice(i + 1));
  }
  return [...variants]
    .map((variant) => prefix + variant)
    .filter((candidate) => candidate !== name && TOOL_ID_PATTERN.test(candidate) && !known.has(candidate))
    .sort();
}

function setAt(target: Record<string, unknown>, path: Path, value: unknown): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[key];
  Object.defineProperty(node, path[path.length - 1]!, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function deleteAt(target: Record<string, unknown>, path: Path): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[key];
  delete (node as Record<string | number, unknown>)[path[path.length - 1]!];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
