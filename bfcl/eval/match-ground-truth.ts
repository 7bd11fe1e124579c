import type { JSONSchema } from '../../tools/index.ts';

/**
 * Did the run call what the ground truth asks for? A simplified BFCL AST checker
 * (`bfcl_eval/eval_checker/ast_eval/ast_checker.py` at the pinned commit), applied to the echoes
 * of the calls that ran (the eval's tools return their validated input):
 *
 * | check                                    | passes when                                              |
 * |------------------------------------------|----------------------------------------------------------|
 * | an argument the call has                 | its value matches one acceptable value, or the ground truth does not list it and the value is the schema's `default` (zod filled it in) |
 * | an argument the call lacks               | `""` is among its acceptable values (may be left out)     |
 * | strings                                  | equal after BFCL's `standardize_string` (case, spaces and `,./-_*^` ignored; `'` as `"`) |
 * | numbers, booleans, null                  | equal (`3` matches `3.0`)                                 |
 * | lists                                    | same length, matching element by element                 |
 * | dicts in the ground truth (`{k: [values]}`) | matched field by field, like the arguments            |
 * | a run's calls (parallel categories)      | one-to-one with the expected calls, in any order; no other call ran |
 */
export interface ExpectedCall {
  /** `<entry id>#<index>` or `<entry id>@<turn>.<index>` (`groundTruthToolCalls`). */
  key: string;
  /** The tool id. */
  tool: string;
  /** Acceptable values per argument, in the form the call sends them. */
  args: Record<string, unknown[]>;
  /** The correct input a model sends: the first acceptable value of each argument. */
  input: Record<string, unknown>;
  /** The tool's model-facing input schema, for defaults. */
  schema?: JSONSchema;
}

export interface ExecutedCall {
  tool: string;
  input: Record<string, unknown>;
}

/** Why `call` does not match `expected`, or undefined when it does. */
export function mismatch(call: ExecutedCall, expected: ExpectedCall): string | undefined {
  if (call.tool !== expected.tool) return `called ${call.tool}, expected ${expected.tool}`;
  return fieldsMismatch(call.input, expected.args, expected.schema, '');
}

/**
 * Matches the calls that ran against the expected ones, one to one in any order. Undefined when
 * every expected call is matched and nothing else ran; else what is wrong.
 */
export function callsMismatch(
  calls: readonly ExecutedCall[],
  expected: readonly ExpectedCall[],
): string | undefined {
  if (calls.length !== expected.length) {
    return `${calls.length} call(s) ran, the ground truth has ${expected.length}`;
  }
  const used = new Set<number>();
  const assign = (index: number): boolean => {
    if (index === expected.length) return true;
    for (let i = 0; i < calls.length; i++) {
      if (used.has(i) || mismatch(calls[i]!, expected[index]!) !== undefined) continue;
      used.add(i);
      if (assign(index + 1)) return true;
      used.delete(i);
    }
    return false;
  };
  if (assign(0)) return undefined;
  // Pair what matches, then say why the first unpaired expected call differs from a call left.
  const left = [...calls];
  const unpaired = expected.filter((want) => {
    const index = left.findIndex((call) => mismatch(call, want) === undefined);
    if (index >= 0) left.splice(index, 1);
    return index < 0;
  });
  const want = unpaired[0]!;
  const other = left.find((call) => call.tool === want.tool) ?? left[0]!;
  return `${want.key}: ${mismatch(other, want)}`;
}

function fieldsMismatch(
  input: Record<string, unknown>,
  acceptable: Record<string, unknown[]>,
  schema: JSONSchema | undefined,
  prefix: string,
): string | undefined {
  const properties = (schema?.properties ?? {}) as Record<string, JSONSchema>;
  for (const [key, value] of Object.entries(input)) {
    const path = prefix + key;
    const values = acceptable[key];
    const isDefault = properties[key] !== undefined && sameValue(properties[key]!.default, value);
    if (values === undefined) {
      if (isDefault) continue;
      return `${path}: not in the ground truth (${JSON.stringify(value)})`;
    }
    if (values.some((want) => valueMatches(value, want, properties[key]))) continue;
    if (isDefault && values.includes('')) continue;
    return `${path}: ${JSON.stringify(value)} is none of ${JSON.stringify(values.filter((v) => v !== ''))}`;
  }
  for (const [key, values] of Object.entries(acceptable)) {
    if (!Object.hasOwn(input, key) && !values.includes('')) return `${prefix + key}: missing`;
  }
  return undefined;
}

function valueMatches(value: unknown, want: unknown, schema: JSONSchema | undefined): boolean {
  if (typeof want === 'string' && typeof value === 'string') return standardize(value) === standardize(want);
  if (Array.isArray(want)) {
    if (!Array.isArray(value) || value.length !== want.length) return false;
    const items = schema?.items as JSONSchema | undefined;
    return want.every((item, index) => valueMatches(value[index], item, items));
  }
  if (isRecord(want)) {
    if (!isRecord(value)) return false;
    // A ground-truth dict lists acceptable values per field (upstream `dict_checker`).
    if (Object.values(want).every(Array.isArray)) {
      return fieldsMismatch(value, want as Record<string, unknown[]>, schema, '') === undefined;
    }
    return sameValue(value, want);
  }
  return sameValue(value, want);
}

/** Upstream `standardize_string`. */
export function standardize(text: string): string {
  return text
    .replace(/[ ,./\-_*^]/g, '')
    .toLowerCase()
    .replace(/'/g, '"');
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => sameValue(item, b[index]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => sameValue(a[key], b[key]));
  }
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
