/**
 * What a server says about its tools is untrusted input (issue 13: control characters, 100 KB
 * descriptions, names that collide). Names become the last segment of a toolwarden id
 * (`<toolset>.<tool>`, letters, digits, `_` and `-`), descriptions go to a model verbatim.
 *
 * @module
 */

/** Longest tool name kept, in characters (OpenAI and Anthropic accept 64 for a whole name). */
export const MAX_MCP_TOOL_NAME = 64;
/** Longest description kept, in characters; the rest is cut with a marker. */
export const MAX_MCP_DESCRIPTION = 4_000;

/** Control characters other than tab, line feed and carriage return, and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * The id segment for an MCP tool name: characters outside `[A-Za-z0-9_-]` become `_`, cut to
 * {@link MAX_MCP_TOOL_NAME}; an empty result is `tool`. `taken` holds segments already used in
 * the toolset: a collision gets `_2`, `_3`, ...
 */
export function toolSegment(name: string, taken: ReadonlySet<string>): string {
  const base = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_MCP_TOOL_NAME) || 'tool';
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${base.slice(0, MAX_MCP_TOOL_NAME - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** A description a model can be given: control characters removed, at most {@link MAX_MCP_DESCRIPTION}. */
export function cleanDescription(text: string | undefined): { text: string; changed: string[] } {
  const changed: string[] = [];
  let out = text ?? '';
  const stripped = out.replace(CONTROL, '');
  if (stripped !== out) changed.push('control characters removed');
  out = stripped;
  if (out.length > MAX_MCP_DESCRIPTION) {
    changed.push(`cut from ${out.length} to ${MAX_MCP_DESCRIPTION} characters`);
    out = `${out.slice(0, MAX_MCP_DESCRIPTION)} …(cut)`;
  }
  return { text: out, changed };
}

/** A name or message safe to print in a warning: no control characters, at most 120 characters. */
export function printable(text: string): string {
  const clean = text.replace(CONTROL, '?');
  return clean.length > 120 ? `${clean.slice(0, 117)}...` : clean;
}
