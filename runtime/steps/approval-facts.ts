import type { ApprovalFacts } from '../../machines/run-context.ts';
import type { ApprovalRisk, Tool } from '../../tools/define-tool.ts';
import type { RetryHint } from '../../tools/retry-hint.ts';
import type { ToolCallMeta } from '../../tools/tool-call-meta.ts';

const RISKS: readonly ApprovalRisk[] = ['low', 'medium', 'high'];
/** Characters kept of a tool's `summary`. */
const MAX_SUMMARY_CHARS = 500;

/**
 * A call's approval facts (docs/policies.md §Permissions and risk), from its tool's `permissions`,
 * `risk` and `summary` (each a value or a function of the validated input and meta), failing
 * closed: `permissions` that throw or are not strings need a permission no run has
 * (`(permissions check failed)`), a `risk` that throws or is not `low|medium|high` is `high`, a
 * `summary` that throws is left out. `undefined` when the tool declares none of them.
 */
export function approvalFactsOf(
  tool: Tool,
  input: Record<string, unknown>,
  meta: ToolCallMeta,
  grants: readonly string[] | undefined,
): ApprovalFacts | undefined {
  if (tool.permissions === undefined && tool.risk === undefined && tool.summary === undefined)
    return undefined;
  const facts: ApprovalFacts = {};
  if (tool.permissions !== undefined) {
    const permissions = permissionsOf(tool, input, meta);
    facts.permissions = permissions;
    const granted = new Set(grants ?? []);
    const missing = permissions.filter((permission) => !granted.has(permission));
    if (missing.length > 0) facts.missing = missing;
  }
  if (tool.risk !== undefined) facts.risk = riskOf(tool, input, meta);
  if (tool.summary !== undefined) {
    const summary = summaryOf(tool, input, meta);
    if (summary !== undefined) facts.summary = summary;
  }
  return facts;
}

function permissionsOf(tool: Tool, input: Record<string, unknown>, meta: ToolCallMeta): string[] {
  try {
    const value = typeof tool.permissions === 'function' ? tool.permissions(input, meta) : tool.permissions;
    if (Array.isArray(value) && value.every((p) => typeof p === 'string' && p.length > 0))
      return [...new Set(value)];
  } catch {
    // Fail closed, below.
  }
  return ['(permissions check failed)'];
}

function riskOf(tool: Tool, input: Record<string, unknown>, meta: ToolCallMeta): ApprovalRisk {
  try {
    const value = typeof tool.risk === 'function' ? tool.risk(input, meta) : tool.risk;
    if (RISKS.includes(value as ApprovalRisk)) return value as ApprovalRisk;
  } catch {
    // Fail closed, below.
  }
  return 'high';
}

function summaryOf(tool: Tool, input: Record<string, unknown>, meta: ToolCallMeta): string | undefined {
  try {
    const value = typeof tool.summary === 'function' ? tool.summary(input, meta) : tool.summary;
    return typeof value === 'string' ? value.slice(0, MAX_SUMMARY_CHARS) : undefined;
  } catch {
    return undefined;
  }
}

/** The hint of a call refused for permissions the run lacks (`permission_denied`, naming them). */
export function permissionDeniedHint(
  tool: string,
  missing: readonly string[],
  priorInput: Record<string, unknown>,
): RetryHint {
  const names = missing.map((permission) => `"${permission}"`).join(', ');
  return {
    reason: 'permission_denied',
    tool,
    restrictToTool: false,
    missingFields: [],
    message: `Not run: ${tool} needs the permission${missing.length === 1 ? '' : 's'} ${names}, which this run was not granted. Do not call it again; tell the user it needs ${names}.`,
    priorInput,
  };
}
