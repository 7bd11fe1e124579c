/**
 * Tool ids as a model provider accepts them, and back (docs/planners.md). OpenAI and Anthropic
 * take function names matching `^[a-zA-Z0-9_-]{1,64}$` and answer HTTP 400 to
 * `crm.upsert_profile`. The mapping is the one place that knows it:
 *
 * | tool id                               | provider name                               |
 * |---------------------------------------|---------------------------------------------|
 * | `crm.upsert_profile`                  | `crm__upsert_profile` (`.` → `__`)          |
 * | a name another id already maps to     | the same, then `_` and 6 characters of hash |
 * | longer than 64 characters             | cut, then `_` and 6 characters of hash      |
 *
 * It is reversible for the ids it was built from (a lookup, not a parse), and no two ids share
 * a name.
 */
export const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ToolNameMap {
  /** The provider-safe name of a tool id. */
  toProvider(id: string): string;
  /** The tool id behind a provider name; the name itself when no id maps to it (a made-up tool). */
  fromProvider(name: string): string;
}

/** Builds the mapping for a set of tool ids (order does not change any name but a collision's). */
export function toolNameMap(ids: Iterable<string>): ToolNameMap {
  const byId = new Map<string, string>();
  const byName = new Map<string, string>();
  for (const id of [...new Set(ids)].sort()) {
    let name = safeName(id);
    if (byName.has(name) || name.length > 64) name = `${name.slice(0, 57)}_${hash6(id)}`;
    for (let n = 1; byName.has(name); n++) name = `${name.slice(0, 55)}_${hash6(`${id}#${n}`)}`;
    byId.set(id, name);
    byName.set(name, id);
  }
  return {
    toProvider: (id) => byId.get(id) ?? safeName(id).slice(0, 64),
    fromProvider: (name) => byName.get(name) ?? name,
  };
}

function safeName(id: string): string {
  const name = id.replaceAll('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_');
  return name === '' ? '_' : name;
}

/** FNV-1a, base 36, 6 characters: stable across processes, so a resumed run maps alike. */
function hash6(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36).padStart(6, '0').slice(-6);
}
