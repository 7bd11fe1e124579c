import { definePolicy, type Policy, type PolicyContext, type PolicyDecision } from '../define-policy.ts';
import type { BatchCall } from '../policy-runner.ts';
import { describeSelector, matchesTool, type ToolSelector } from '../tool-selector.ts';

export interface ToolListOptions extends ToolSelector {
  /** Default `tool-allowlist` / `tool-denylist`. */
  name?: string;
}

/**
 * Only the listed tools (by id, `toolset.*`, or tag) are usable (docs/policies.md §Built-in). Every other
 * tool of the catalog is disabled when the run starts, so the planner never sees it; a call to
 * one is `tool_unavailable` and never runs. It checks every batch again, so a run restored from
 * before the policy was added is covered too. An empty list allows nothing.
 *
 * ```ts
 * toolAllowlist({ tags: ['read'], ids: ['crm.lookup'] })
 * ```
 */
export function toolAllowlist(options: ToolListOptions): Policy {
  const selector: ToolSelector = { ids: options.ids ?? [], tags: options.tags ?? [] };
  const allowed = (tool: { id: string; tags: readonly string[] }) =>
    (selector.ids!.length > 0 || selector.tags!.length > 0) && matchesTool(selector, tool);
  return listPolicy(
    options.name ?? 'tool-allowlist',
    (tool) => !allowed(tool),
    `not in the allowlist (${describeSelector(selector)})`,
  );
}

/**
 * The listed tools (by id, `toolset.*`, or tag) are never usable (docs/policies.md §Built-in): disabled
 * when the run starts, so the planner never sees them; a call to one is `tool_unavailable` and
 * never runs. Checked again on every batch.
 *
 * ```ts
 * toolDenylist({ tags: ['destructive'], ids: ['crm.delete_profile'] })
 * ```
 */
export function toolDenylist(options: ToolListOptions): Policy {
  const selector: ToolSelector = { ids: options.ids ?? [], tags: options.tags ?? [] };
  const denied = (tool: { id: string; tags: readonly string[] }) =>
    (selector.ids!.length > 0 || selector.tags!.length > 0) && matchesTool(selector, tool);
  return listPolicy(
    options.name ?? 'tool-denylist',
    denied,
    `in the denylist (${describeSelector(selector)})`,
  );
}

function listPolicy(
  name: string,
  excluded: (tool: { id: string; tags: readonly string[] }) => boolean,
  why: string,
) {
  const decide = (ids: Iterable<string>, ctx: PolicyContext): PolicyDecision | undefined => {
    const disable = [...new Set(ids)].filter((id) => {
      const tool = ctx.tool(id);
      return tool.known && tool.enabled && excluded(tool);
    });
    return disable.length > 0 ? { disableTools: disable, note: `${disable.join(', ')}: ${why}` } : undefined;
  };
  return definePolicy({
    name,
    onRunStart: (ctx) => decide(Object.keys(ctx.tools), ctx),
    onToolBatch: (batch: readonly BatchCall[], ctx) =>
      decide([...Object.keys(ctx.tools), ...batch.map((call) => call.name)], ctx),
  });
}
