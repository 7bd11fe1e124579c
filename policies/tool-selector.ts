/**
 * Which tools a policy applies to: by id (`crm.upsert_profile`, or a whole toolset as `crm.*`)
 * or by tag (`write`). A tool matches when any id or any tag matches; an empty or absent
 * selector matches every tool.
 */
export interface ToolSelector {
  ids?: readonly string[];
  tags?: readonly string[];
}

/** True when the selector names nothing, so it matches every tool. */
export function selectsAll(selector: ToolSelector | undefined): boolean {
  return !selector || ((selector.ids?.length ?? 0) === 0 && (selector.tags?.length ?? 0) === 0);
}

/** Does `tool` (its id and tags) match `selector`? */
export function matchesTool(
  selector: ToolSelector | undefined,
  tool: { id: string; tags: readonly string[] },
): boolean {
  if (selectsAll(selector)) return true;
  const ids = selector?.ids ?? [];
  const tags = selector?.tags ?? [];
  return (
    ids.some((id) => (id.endsWith('.*') ? tool.id.startsWith(id.slice(0, -1)) : id === tool.id)) ||
    tags.some((tag) => tool.tags.includes(tag))
  );
}

/** A short description for notes: `ids crm.*, tags write`. */
export function describeSelector(selector: ToolSelector | undefined): string {
  if (selectsAll(selector)) return 'every tool';
  const parts: string[] = [];
  if (selector?.ids?.length) parts.push(`ids ${selector.ids.join(', ')}`);
  if (selector?.tags?.length) parts.push(`tags ${selector.tags.join(', ')}`);
  return parts.join('; ');
}
