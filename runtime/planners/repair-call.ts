import type { PlannedToolCall } from '../../run/planner.ts';
import { closestIds } from '../../tools/closest-ids.ts';
import type { JSONSchema } from '../../tools/define-tool.ts';
import type { FieldIssue } from '../../tools/retry-hint.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import { recoverTruncatedJson } from './truncated-json.ts';

/**
 * How a planner reads a RetryHint and repairs the call, the way Goa-AI recommends (docs/sources.md §Retry hints)
 * (`tool-validation-retry-hints`, "Pattern: Auto-Repairing Invalid Tool Calls"). No LLM: each
 * reason maps to one repair, and this table is the whole of it.
 *
 * | reason               | repair                                                              |
 * |----------------------|---------------------------------------------------------------------|
 * | `missing_fields`     | ask a person (AwaitClarification) when one can answer; otherwise fill each missing path from `exampleInput` |
 * | `invalid_arguments`  | per issue: coerce to the `expected` type (of a union: its first type that fits), pick the allowed value that matches ignoring case, drop an `unknown_field` |
 * | `invalid_arguments`, JSON text cut short (`priorInput.$raw`) | keep its complete members ({@link recoverTruncatedJson}); when a person can answer, ask for what the cut may have lost: the member it went through and every declared field not in the text |
 * | `tool_unavailable`   | call the closest advertised tool with the same input                |
 * | `rate_limited`, `timeout` | send the same call again (the backoff itself is a policy's job) |
 * | `malformed_response` | give up on the call: the tool, not the input, is wrong              |
 *
 * Every repair starts from `priorInput`, the input that was rejected, so nothing the model got
 * right is lost. Hints of calls that ran (`timeout`, `rate_limited`) carry no `priorInput`: the
 * input is then the one the call sent (`RepairOptions.sent`, from the transcript).
 */
export type Repair =
  | { kind: 'call'; call: PlannedToolCall; note: string }
  | { kind: 'ask'; question: Question; note: string }
  | { kind: 'give_up'; note: string };

/** A question for a person (an AwaitClarification) and the call whose gaps the answer fills. */
export interface Question {
  question: string;
  missingFields: string[];
  call: PlannedToolCall;
  exampleInput?: Record<string, unknown>;
}

export interface RepairOptions {
  /** Tool ids the planner may call now (`PlanInput.tools`). */
  advertised: string[];
  /** Whether a person can be asked; when false, missing fields are filled from `exampleInput`. */
  canAsk: boolean;
  /** The input the failed call sent, for hints without `priorInput`. */
  sent?: unknown;
  /** The failed tool's input schema (`PlanInput.tools`): which fields a cut may have lost. */
  inputSchema?: JSONSchema;
}

export function repairCall(result: ToolResult, options: RepairOptions): Repair {
  const hint = result.retryHint;
  if (!hint)
    return { kind: 'give_up', note: `${result.name}: ${result.error?.message ?? 'failed'} (no hint)` };
  const prior = hint.priorInput ?? (isRecord(options.sent) ? options.sent : {});
  switch (hint.reason) {
    case 'missing_fields': {
      if (options.canAsk) {
        const question: Question = {
          question: hint.clarifyingQuestion ?? `Please provide: ${hint.missingFields.join(', ')}`,
          missingFields: hint.missingFields,
          call: { name: hint.tool, input: prior },
          exampleInput: hint.exampleInput,
        };
        return { kind: 'ask', question, note: `ask for ${hint.missingFields.join(', ')}` };
      }
      const input = structuredClone(fixIssues(parseRaw(prior), hint.issues ?? []));
      for (const path of hint.missingFields) setPath(input, path, getPath(hint.exampleInput ?? {}, path));
      return {
        kind: 'call',
        call: { name: hint.tool, input },
        note: `filled ${hint.missingFields.join(', ')} from exampleInput`,
      };
    }
    case 'invalid_arguments': {
      if (typeof prior.$raw === 'string') {
        const { value, cut, open } = recoverTruncatedJson(prior.$raw);
        const call = { name: hint.tool, input: value };
        // Members after the cut were never seen: any declared field of an open object may be one.
        const unseen = open.flatMap((path) => {
          const at = getPath(value, path);
          return declaredFields(options.inputSchema, path)
            .filter((field) => !(at !== null && typeof at === 'object' && Object.hasOwn(at, field)))
            .map((field) => (path === '' ? field : `${path}.${field}`));
        });
        const lost = [...new Set([...cut, ...unseen])];
        if (lost.length > 0 && options.canAsk) {
          const question: Question = {
            question: `My arguments for ${hint.tool} were cut short. What should ${lost.join(', ')} be? Leave out what you did not ask for.`,
            missingFields: lost,
            call,
          };
          return { kind: 'ask', question, note: `JSON text cut short: ask for ${lost.join(', ')}` };
        }
        const dropped = cut.length > 0 ? `, dropped the cut ${cut.join(', ')}` : '';
        return {
          kind: 'call',
          call,
          note: `kept the complete members of JSON text cut short${dropped}`,
        };
      }
      const input = fixIssues(prior, hint.issues ?? []);
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
    } else if (
      (issue.constraint === 'invalid_type' || issue.constraint === 'invalid_union') &&
      issue.expected
    ) {
      // A union names its branches' types: `one of types: number, null`; the first that fits wins.
      const types = issue.expected.replace(/^one of types: /, '').split(', ');
      const current = getPath(input, issue.path);
      const coerced = types.map((type) => coerce(current, type)).find((value) => value !== undefined);
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

/** The fields an object schema declares at a dotted path of the input (through `properties`). */
function declaredFields(schema: JSONSchema | undefined, path: string): string[] {
  let node: unknown = schema;
  for (const key of segments(path)) {
    node = ((node as JSONSchema | undefined)?.properties as Record<string, unknown> | undefined)?.[key];
  }
  const properties = (node as JSONSchema | undefined)?.properties;
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : [];
}

/** `priorInput.$raw` is JSON text the boundary could not parse: its complete members. */
function parseRaw(prior: Record<string, unknown>): Record<string, unknown> {
  return typeof prior.$raw === 'string' ? recoverTruncatedJson(prior.$raw).value : prior;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
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
