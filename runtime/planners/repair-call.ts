import { closestIds } from '../../tools/closest-ids.ts';
import type { FieldIssue, RetryHint } from '../../tools/retry-hint.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import type { PlannedToolCall } from '../planner.ts';

/**
 * How a planner reads a RetryHint and repairs the call, the way the seeds recommend
 * (`tool-validation-retry-hints`, "Pattern: Auto-Repairing Invalid Tool Calls"). No LLM: each
 * reason maps to one repair, and this table is the whole of it.
 *
 * | reason               | repair                                                              |
 * |----------------------|---------------------------------------------------------------------|
 * | `missing_fields`     | ask a person (AwaitClarification) when one can answer; otherwise fill each missing path from `exampleInput` |
 * | `invalid_arguments`  | per issue: coerce to the `expected` type, pick the allowed value that matches ignoring case, drop an `unknown_field`, close truncated JSON in `priorInput.$raw` |
 * | `tool_unavailable`   | call the closest advertised tool with the same input                |
 * | `rate_limited`, `timeout` | send the same call again (the backoff itself is a policy's job) |
 * | `malformed_response` | give up on the call: the tool, not the input, is wrong              |
 *
 * Every repair starts from `priorInput`, the input that was rejected, so nothing the model got
 * right is lost.
 */
export type Repair =
  | { kind: 'call'; call: PlannedToolCall; note: string }
  | { kind: 'ask'; hint: RetryHint; note: string }
  | { kind: 'give_up'; note: string };

export interface RepairOptions {
  /** Tool ids the planner may call now (`PlanInput.tools`). */
  advertised: string[];
  /** Whether a person can be asked; when false, missing fields are filled from `exampleInput`. */
  canAsk: boolean;
}

export function repairCall(result: ToolResult, options: RepairOptions): Repair {
  const hint = result.retryHint;
  if (!hint)
    return { kind: 'give_up', note: `${result.name}: ${result.error?.message ?? 'failed'} (no hint)` };
  const prior = hint.priorInput ?? {};
  switch (hint.reason) {
    case 'missing_fields': {
      if (options.canAsk) return { kind: 'ask', hint, note: `ask for ${hint.missingFields.join(', ')}` };
      const input = structuredClone(fixIssues(parseRaw(prior), hint.issues ?? []));
      for (const path of hint.missingFields) setPath(input, path, getPath(hint.exampleInput ?? {}, path));
      return {
        kind: 'call',
        call: { name: hint.tool, input },
        note: `filled ${hint.missingFields.join(', ')} from exampleInput`,
      };
    }
    case 'invalid_arguments': {
      const input = fixIssues(parseRaw(prior), hint.issues ?? []);
      return { kind: 'call', call: { name: hint.tool, input }, note: `fixed ${describeIssues(hint.issues)}` };
    }
    case 'tool_unavailable': {
      const [closest] = closestIds(
        hint.tool,
        options.advertised.filter((id) => id !== hint.tool),
        1,
      );
      if (!closest) return { kind: 'give_up', note: `no tool close to ${hint.tool} is available` };
      return { kind: 'call', call: { name: closest, input: prior }, note: `${hint.tool} → ${closest}` };
    }
    case 'rate_limited':
    case 'timeout':
      return {
        kind: 'call',
        call: { name: hint.tool, input: prior },
        note: `retry ${hint.tool} after ${hint.reason}`,
      };
    default:
      return { kind: 'give_up', note: `${hint.tool}: ${hint.message}` };
  }
}

/** Fills `answers` (path → value) into a prior input, for a clarification that was answered. */
export function withAnswers(
  prior: Record<string, unknown>,
  answers: Record<string, unknown>,
): Record<string, unknown> {
  const input = structuredClone(parseRaw(prior));
  for (const [path, value] of Object.entries(answers)) setPath(input, path, value);
  return input;
}

function describeIssues(issues: FieldIssue[] | undefined): string {
  return (
    (issues ?? []).map((issue) => `${issue.path || '(arguments)'} (${issue.constraint})`).join(', ') ||
    'the input'
  );
}

/** Applies the repair each issue names; issues it cannot repair leave the value as it was. */
function fixIssues(prior: Record<string, unknown>, issues: FieldIssue[]): Record<string, unknown> {
  const input = structuredClone(prior);
  for (const issue of issues) {
    if (issue.constraint === 'unknown_field' || issue.constraint === 'forbidden_key') {
      deletePath(input, issue.path);
    } else if (issue.constraint === 'invalid_value' && issue.allowed) {
      const current = getPath(input, issue.path);
      const match = issue.allowed.find(
        (value) => String(value).toLowerCase() === String(current).toLowerCase(),
      );
      if (match !== undefined) setPath(input, issue.path, match);
    } else if (issue.constraint === 'invalid_type' && issue.expected) {
      const coerced = coerce(getPath(input, issue.path), issue.expected);
      if (coerced !== undefined) setPath(input, issue.path, coerced);
    }
  }
  return input;
}

/** The value as `expected` (a zod type name), when the conversion loses nothing. */
export function coerce(value: unknown, expected: string): unknown {
  switch (expected) {
    case 'number':
    case 'int':
    case 'integer': {
      if (typeof value !== 'string' || value.trim() === '') return undefined;
      const n = Number(value);
      return Number.isFinite(n) && (expected === 'number' || Number.isInteger(n)) ? n : undefined;
    }
    case 'string':
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    case 'boolean':
      if (value === 'true' || value === 'True') return true;
      if (value === 'false' || value === 'False') return false;
      return undefined;
    case 'array':
      return value === undefined ? undefined : Array.isArray(value) ? value : [value];
    default:
      return undefined;
  }
}

/**
 * `priorInput.$raw` is JSON text the boundary could not parse. A model that sent it cut short
 * would send it again whole; without a model, closing the open strings and brackets recovers
 * what was there, and any field still missing comes back as its own hint.
 */
function parseRaw(prior: Record<string, unknown>): Record<string, unknown> {
  if (typeof prior.$raw !== 'string') return prior;
  const repaired = closeJson(prior.$raw);
  try {
    const value = JSON.parse(repaired);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

export function closeJson(text: string): string {
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') stack.pop();
  }
  let out = text.endsWith('\\') ? text.slice(0, -1) : text;
  if (inString) out += '"';
  // A dangling key, colon or comma cannot be completed; cut back to the last complete member.
  out = out
    .replace(/,\s*$/, '')
    .replace(/,\s*"[^"]*"\s*:?\s*$/, '')
    .replace(/\{\s*"[^"]*"\s*:?\s*$/, '{');
  return out + stack.reverse().join('');
}

function segments(path: string): string[] {
  return path === '' ? [] : path.split('.');
}

function getPath(root: unknown, path: string): unknown {
  let at: unknown = root;
  for (const key of segments(path)) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys = segments(path);
  let at: Record<string, unknown> = root;
  keys.forEach((key, index) => {
    if (index === keys.length - 1) {
      if (value === undefined) delete at[key];
      else at[key] = value;
      return;
    }
    const nextIsIndex = /^\d+$/.test(keys[index + 1]!);
    if (at[key] === null || typeof at[key] !== 'object') at[key] = nextIsIndex ? [] : {};
    at = at[key] as Record<string, unknown>;
  });
}

function deletePath(root: Record<string, unknown>, path: string): void {
  setPath(root, path, undefined);
}
