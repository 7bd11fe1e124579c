import type { JSONSchema, Tool } from './define-tool.ts';
import { synthesizeExample } from './example-input.ts';
import { allowedValues, schemaAtPath } from './json-schema-path.ts';
import type { FieldIssue, RetryHint } from './retry-hint.ts';
import { withoutFields } from './without-fields.ts';

const exampleCache = new WeakMap<Tool, Record<string, unknown> | null>();

/**
 * The `exampleInput` of a hint: the tool's first example (without injected fields, which a model
 * must never send), else one synthesized from its model-facing JSON Schema that passes the input
 * schema, else undefined (docs/tool-boundary.md §Failures). Computed once per tool.
 */
export function exampleInputFor(tool: Tool): Record<string, unknown> | undefined {
  let example = exampleCache.get(tool);
  if (example === undefined) {
    const passes = (candidate: unknown): candidate is Record<string, unknown> =>
      isRecord(candidate) && tool.modelInput.safeParse(candidate).success;
    const first = withoutFields(tool.examples?.[0], tool.inject ?? []);
    const synthesized = passes(first) ? undefined : synthesizeExample(tool.inputSchema);
    example = passes(first) ? first : passes(synthesized) ? synthesized : null;
    exampleCache.set(tool, example);
  }
  return example ?? undefined;
}

/**
 * A question a person can answer, naming up to three fields with their descriptions and
 * allowed values (docs/tool-boundary.md §Failures), e.g. `I need more information to run crm.upsert_profile. Please
 * provide: email (Customer email); plan (one of: free, pro).` With no fields it asks for the
 * arguments as a whole.
 */
export function clarifyingQuestion(
  tool: Tool,
  fields: readonly string[],
  issues: readonly FieldIssue[] = [],
): string {
  const named = [...new Set(fields)]
    .slice(0, 3)
    .map((field) => describeField(tool.inputSchema, field, issues));
  if (named.length === 0) return `I need more information to run ${tool.id}. Please provide its arguments.`;
  return `I need more information to run ${tool.id}. Please provide: ${named.join('; ')}.`;
}

function describeField(schema: JSONSchema, field: string, issues: readonly FieldIssue[]): string {
  const node = schemaAtPath(schema, field === '' ? [] : field.split('.'));
  const parts: string[] = [];
  if (typeof node?.description === 'string' && node.description.trim()) parts.push(node.description.trim());
  const allowed =
    allowedValues(node) ?? issues.find((issue) => issue.path === field && issue.allowed)?.allowed;
  if (
    allowed?.length &&
    !issues.some((issue) => issue.path === field && issue.constraint === 'unknown_field')
  ) {
    parts.push(`one of: ${allowed.map(String).join(', ')}`);
  }
  return parts.length > 0 ? `${field || 'arguments'} (${parts.join('; ')})` : field || 'arguments';
}

/** The hint for a validation failure (`missing_fields` or `invalid_arguments`), docs/tool-boundary.md §Failures rows 1–3. */
export function validationHint(
  tool: Tool,
  reason: 'missing_fields' | 'invalid_arguments',
  priorInput: Record<string, unknown>,
  missingFields: string[],
  issues: FieldIssue[],
  message: string,
): RetryHint {
  const fields = questionFields(tool, missingFields, issues);
  const question = fields.length > 0 ? clarifyingQuestion(tool, fields, issues) : undefined;
  return {
    reason,
    tool: tool.id,
    restrictToTool: true,
    missingFields: missingFields.slice(0, HINT_LIST_ITEMS).map((field) => clip(field)),
    exampleInput: exampleInputFor(tool),
    priorInput: boundedPrior(priorInput),
    clarifyingQuestion: question === undefined ? undefined : clip(question, HINT_TEXT_CHARS * 2),
    message: clip(message, HINT_TEXT_CHARS * 2),
    issues: issues.slice(0, HINT_LIST_ITEMS).map(boundedIssue),
  };
}

/**
 * Size bounds of a hint's parts, so a hint stays under ~16 KB whatever the input (issue 12,
 * defect 2): list items kept, characters of a text kept, JSON characters of `priorInput` kept
 * before it is replaced by a `{ $truncated, $chars }` preview.
 */
export const HINT_LIST_ITEMS = 20;
export const HINT_TEXT_CHARS = 500;
export const HINT_PRIOR_INPUT_CHARS = 8_192;

function clip(text: string, max = HINT_TEXT_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function boundedIssue(issue: FieldIssue): FieldIssue {
  const bounded: FieldIssue = { ...issue, path: clip(issue.path), message: clip(issue.message) };
  if (issue.expected !== undefined) bounded.expected = clip(issue.expected);
  if (issue.received !== undefined) bounded.received = clip(issue.received);
  if (issue.allowed !== undefined) {
    bounded.allowed = issue.allowed
      .slice(0, HINT_LIST_ITEMS)
      .map((value) => (typeof value === 'string' ? clip(value, 100) : value));
  }
  return bounded;
}

/** The rejected input as the hint carries it: whole when small, else a JSON preview. */
function boundedPrior(priorInput: Record<string, unknown>): Record<string, unknown> {
  let text: string;
  try {
    text = JSON.stringify(priorInput) ?? '';
  } catch {
    return { $truncated: '(not JSON)', $chars: 0 };
  }
  if (text.length <= HINT_PRIOR_INPUT_CHARS) return priorInput;
  return { $truncated: `${text.slice(0, HINT_PRIOR_INPUT_CHARS / 2)}…`, $chars: text.length };
}

/**
 * The fields a person could supply: the missing ones; else those with a wrong value (not the
 * unknown or forbidden ones, which nobody should supply); else, when nothing could be read (bad
 * JSON), the tool's required top-level fields.
 */
function questionFields(tool: Tool, missingFields: string[], issues: FieldIssue[]): string[] {
  if (missingFields.length > 0) return missingFields;
  if (issues.length > 0) {
    return issues
      .filter((issue) => issue.constraint !== 'unknown_field' && issue.constraint !== 'forbidden_key')
      .map((issue) => issue.path);
  }
  const required = tool.inputSchema.required;
  return Array.isArray(required) ? required.filter((field) => typeof field === 'string') : [];
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
