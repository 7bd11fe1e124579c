import { z } from 'zod';
import type { Tool } from './define-tool.ts';
import { allowedValues, schemaAtPath } from './json-schema-path.ts';
import { parseWithinBudget } from './json-schema-step-budget.ts';
import { clipText, displayPath, previewValue } from './preview-value.ts';
import type { FieldIssue } from './retry-hint.ts';

/**
 * Checks a parsed input against a tool's model-facing schema and sorts the failures the way
 * docs/tool-boundary.md §Failures asks:
 *
 * | finding                                       | reason              |
 * |-----------------------------------------------|---------------------|
 * | some required field absent (or `undefined`)   | `missing_fields`    |
 * | anything else (type, enum, range, format, unknown field) | `invalid_arguments` |
 *
 * "Absent" is decided by looking the path up in the input, not by the zod issue code: zod
 * reports a missing enum as `invalid_value` and a missing string as `invalid_type` (FACTS.md).
 * When both kinds occur the call is `missing_fields` and `issues` lists everything.
 */
export type InputValidation =
  | { ok: true; value: unknown }
  | {
      ok: false;
      reason: 'missing_fields' | 'invalid_arguments';
      missingFields: string[];
      /** At most {@link MAX_HINT_ISSUES}. */
      issues: FieldIssue[];
      /** How many issues there were in all (`issues` lists the first ones). */
      issueCount: number;
    };

/**
 * Issues described in full per rejected call; the rest are counted (issue 12, defect 2: a
 * 500,000-item array built a 77 MB hint). Missing fields are still all found, up to
 * {@link MAX_MISSING_FIELDS}.
 */
export const MAX_HINT_ISSUES = 20;
export const MAX_MISSING_FIELDS = 50;

export function validateToolInput(tool: Tool, input: unknown): InputValidation {
  const issues: FieldIssue[] = [];
  let issueCount = 0;
  if (tool.unknownFields !== 'passthrough') {
    const unknown = findUnknownFields(tool.modelInput, input, [], { found: [], count: 0 });
    issues.push(...unknown.found);
    issueCount += unknown.count;
  }
  const { parsed, budget } = parseWithinBudget(tool.modelInput, input);
  if (parsed.success && issueCount === 0) return { ok: true, value: parsed.data };
  if (budget.exhausted) return tooComplex(tool, budget.limit, issues, issueCount);
  const missingFields = new Set<string>();
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    if (issues.length < MAX_HINT_ISSUES) {
      for (const fieldIssue of toFieldIssues(tool, input, issue)) {
        if (fieldIssue.constraint === 'missing') missingFields.add(fieldIssue.path);
        issues.push(fieldIssue);
        issueCount++;
      }
      continue;
    }
    // Past the described issues only absence is looked up (a path walk, no schema work).
    issueCount += issue.code === 'unrecognized_keys' ? issue.keys.length : 1;
    if (
      missingFields.size < MAX_MISSING_FIELDS &&
      issue.path.length > 0 &&
      !valueAt(input, issue.path).present
    ) {
      missingFields.add(displayPath(issue.path));
    }
  }
  return {
    ok: false,
    reason: missingFields.size > 0 ? 'missing_fields' : 'invalid_arguments',
    missingFields: [...missingFields],
    issues: issues.slice(0, MAX_HINT_ISSUES),
    issueCount,
  };
}

/**
 * The refusal of an input whose check ran out of steps (tools/json-schema-step-budget.ts): it
 * does not match, and which branch of the schema it missed would cost more to find than the
 * budget allows. Unknown fields found before are kept.
 */
function tooComplex(tool: Tool, steps: number, unknown: FieldIssue[], unknownCount: number): InputValidation {
  return {
    ok: false,
    reason: 'invalid_arguments',
    missingFields: [],
    issues: [
      {
        path: '',
        constraint: 'schema_too_complex',
        message: `The arguments do not match the input schema of ${tool.id}; the schema is too complex (its anyOf/oneOf/allOf branches) to explain further within ${steps} validation steps. Check each value's type against the schema`,
      },
      ...unknown,
    ].slice(0, MAX_HINT_ISSUES),
    issueCount: unknownCount + 1,
  };
}

/** `['items', 0, 'sku']` → `items.0.sku`. */
export function dottedPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

function toFieldIssues(tool: Tool, input: unknown, issue: z.core.$ZodIssue): FieldIssue[] {
  // Paths and keys as hints show them: a key the model made up may be kilobytes long.
  const path = displayPath(issue.path);
  const node = schemaAtPath(tool.inputSchema, issue.path as (string | number)[]);
  const received = valueAt(input, issue.path);
  const base = { path, message: issue.message };
  if (issue.code === 'unrecognized_keys') {
    const allowed = Object.keys((node?.properties as object | undefined) ?? {});
    return issue.keys.map((key) => unknownField(displayPath([...issue.path, key]), allowed));
  }
  // Absent is absent whatever zod calls it (invalid_type, invalid_value, invalid_union, a custom
  // refinement on the field): FACTS.md. The root is never "missing": no arguments at all is a
  // type error of the whole call.
  if (!received.present && issue.path.length > 0) {
    const allowed = issue.code === 'invalid_value' ? issue.values : allowedValues(node);
    return [
      {
        ...base,
        constraint: 'missing',
        message: `Required field "${path}" is missing`,
        expected:
          issue.code === 'invalid_type' && issue.expected !== 'nonoptional'
            ? issue.expected
            : issue.code === 'invalid_union'
              ? unionExpectation(issue)
              : undefined,
        allowed,
      },
    ];
  }
  const receivedType = received.present ? jsonType(received.value) : undefined;
  switch (issue.code) {
    case 'invalid_type':
      return [{ ...base, constraint: 'invalid_type', expected: issue.expected, received: receivedType }];
    case 'invalid_value':
      return [
        {
          ...base,
          constraint: 'invalid_value',
          expected: `one of: ${issue.values.map(String).join(', ')}`,
          received: describeReceived(received.value),
          allowed: issue.values,
        },
      ];
    case 'too_small':
    case 'too_big':
      return [{ ...base, constraint: issue.code, expected: describeBound(issue), received: receivedType }];
    case 'invalid_format':
      return [
        {
          ...base,
          constraint: 'invalid_format',
          expected: issue.format,
          received: describeReceived(received.value),
        },
      ];
    case 'invalid_union': {
      const allowed = allowedValues(node);
      return [
        {
          ...base,
          constraint: 'invalid_union',
          expected: unionExpectation(issue),
          received: receivedType,
          allowed,
        },
      ];
    }
    default:
      return [{ ...base, constraint: issue.code, received: receivedType }];
  }
}

/** Characters of the allowed field names an unknown-field message lists. */
const ALLOWED_FIELDS_CHARS = 300;

function unknownField(path: string, allowed: string[]): FieldIssue {
  return {
    path,
    constraint: 'unknown_field',
    message: `Unknown field "${path}"; allowed fields: ${
      clipText(allowed.join(', '), ALLOWED_FIELDS_CHARS) || '(none)'
    }`,
    allowed,
  };
}

/**
 * Zod's default objects strip unknown keys silently; docs/tool-boundary.md §Failures wants them reported. Walks the
 * schema beside the value and reports keys that a stripping object would drop. Objects with a
 * catchall (`.strict()` reports them itself; `.passthrough()`/`.loose()` accepts them) are left out.
 */
function findUnknownFields(
  schema: z.ZodType,
  value: unknown,
  path: PropertyKey[],
  acc: { found: FieldIssue[]; count: number },
): { found: FieldIssue[]; count: number } {
  const inner = unwrap(schema);
  if (!inner || value === null || typeof value !== 'object') return acc;
  if (inner instanceof z.ZodObject) {
    if (Array.isArray(value)) return acc;
    const shape = inner.shape as Record<string, z.ZodType>;
    const strips = inner._zod.def.catchall === undefined;
    for (const [key, item] of Object.entries(value)) {
      if (Object.hasOwn(shape, key)) findUnknownFields(shape[key]!, item, [...path, key], acc);
      else if (strips) {
        acc.count++;
        if (acc.found.length < MAX_HINT_ISSUES)
          acc.found.push(unknownField(displayPath([...path, key]), Object.keys(shape)));
      }
    }
    return acc;
  }
  if (inner instanceof z.ZodArray && Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      findUnknownFields(inner.element as z.ZodType, item, [...path, index], acc);
    }
    return acc;
  }
  if (inner instanceof z.ZodRecord && !Array.isArray(value)) {
    for (const [key, item] of Object.entries(value)) {
      findUnknownFields(inner._zod.def.valueType as z.ZodType, item, [...path, key], acc);
    }
  }
  return acc;
}

/** Strips wrappers (optional, nullable, default, readonly, pipe, lazy, ...) to the shape-bearing type. */
function unwrap(schema: z.ZodType): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (let i = 0; current && i < 32; i++) {
    const def = current._zod.def as {
      type: string;
      innerType?: z.ZodType;
      in?: z.ZodType;
      getter?: () => z.ZodType;
    };
    if (def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else if (def.type === 'lazy' && def.getter) current = def.getter();
    else return current;
  }
  return undefined;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): { present: boolean; value?: unknown } {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key as string)) {
      return { present: false };
    }
    current = (current as Record<string, unknown>)[key as string];
  }
  return current === undefined ? { present: false } : { present: true, value: current };
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** A received value in at most 80 characters, reading no more of it than that (a refused value may be huge). */
function describeReceived(value: unknown): string {
  const text = previewValue(value, 80);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function describeBound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const limit = small
    ? (issue as z.core.$ZodIssueTooSmall).minimum
    : (issue as z.core.$ZodIssueTooBig).maximum;
  const inclusive = issue.inclusive !== false;
  const unit =
    issue.origin === 'string'
      ? ' characters'
      : issue.origin === 'array' || issue.origin === 'set'
        ? ' items'
        : issue.origin === 'file'
          ? ' bytes'
          : '';
  if (unit) return `${small ? 'at least' : 'at most'} ${String(limit)}${unit}`;
  return `${small ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<'} ${String(limit)}`;
}

function unionExpectation(issue: z.core.$ZodIssueInvalidUnion): string | undefined {
  const expected = issue.errors
    .map((branch) => branch.find((sub) => sub.path.length === 0 && sub.code === 'invalid_type'))
    .map((sub) => (sub as z.core.$ZodIssueInvalidType | undefined)?.expected)
    .filter((type): type is NonNullable<typeof type> => type !== undefined);
  return expected.length > 0 ? `one of types: ${[...new Set(expected)].join(', ')}` : undefined;
}
