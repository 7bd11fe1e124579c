import { TOOL_ID_PATTERN } from '../tools/index.ts';

/**
 * The reversible mapping between BFCL function names and toolwarden tool ids.
 *
 * Tool ids are `toolset.tool` with segments of `[A-Za-z0-9_-]` (docs/tool-boundary.md §Vocabulary, `TOOL_ID_PATTERN`);
 * BFCL names are free text (`math.sqrt`, `requests.get`, `version_api.VersionApi.get_version`).
 * Every name gets the `bfcl.` prefix, dots stay segment separators, and anything a segment may
 * not hold is escaped as `-<hex code point>-` (so `-` itself is `-2d-`, and an empty segment is
 * `--`):
 *
 * | BFCL name        | tool id                |
 * |------------------|------------------------|
 * | `get_weather`    | `bfcl.get_weather`     |
 * | `math.sqrt`      | `bfcl.math.sqrt`       |
 * | `send-mail`      | `bfcl.send-2d-mail`    |
 * | `a b`            | `bfcl.a-20-b`          |
 * | `.hidden`        | `bfcl.--.hidden`       |
 *
 * All 1,998 distinct names in the BFCL v4 files need no escape; the escape exists so that any
 * name maps to a valid id and back to itself.
 */
export const BFCL_TOOLSET = 'bfcl';

export function toolIdForName(name: string, toolset: string = BFCL_TOOLSET): string {
  const segments = name
    .split('.')
    .map((segment) =>
      segment === ''
        ? '--'
        : Array.from(segment, (char) =>
            /^[A-Za-z0-9_]$/.test(char) ? char : `-${char.codePointAt(0)!.toString(16)}-`,
          ).join(''),
    );
  return `${toolset}.${segments.join('.')}`;
}

/**
 * The BFCL name a tool id stands for; undefined when the id is not of the toolset or is not the
 * canonical id of any name.
 */
export function nameForToolId(id: string, toolset: string = BFCL_TOOLSET): string | undefined {
  if (!id.startsWith(`${toolset}.`) || !TOOL_ID_PATTERN.test(id)) return undefined;
  const segments = id.slice(toolset.length + 1).split('.');
  const decoded: string[] = [];
  for (const segment of segments) {
    if (segment === '--') {
      decoded.push('');
      continue;
    }
    if (!/^(?:[A-Za-z0-9_]|-[0-9a-f]{1,6}-)+$/.test(segment)) return undefined;
    let text = '';
    for (const [, plain, hex] of segment.matchAll(/([A-Za-z0-9_])|-([0-9a-f]+)-/g)) {
      const code = hex === undefined ? undefined : Number.parseInt(hex, 16);
      if (code !== undefined && code > 0x10ffff) return undefined;
      text += plain ?? String.fromCodePoint(code!);
    }
    decoded.push(text);
  }
  const name = decoded.join('.');
  // Only the canonical spelling maps back: `bfcl.-61-` is not another name for `bfcl.a`.
  return toolIdForName(name, toolset) === id ? name : undefined;
}
