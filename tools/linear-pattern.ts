import { createRequire } from 'node:module';
import type { RE2JS as RE2JSClass } from 're2js';

// Loaded on the first pattern, not with the package: most apps never build a JSON Schema tool
// with a `pattern`, and re2js is ~17 ms of CPU of a cold `import('toolwarden')` (docs/packaging.md
// §Cost). `require` gives its CommonJS build synchronously, as a RegExp constructor must be.
let re2js: typeof RE2JSClass | undefined;
function RE2JS(): typeof RE2JSClass {
  re2js ??= (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  return re2js;
}

/**
 * Regular expressions a JSON Schema brings (`pattern`, `patternProperties`, `propertyNames`) come
 * from whoever wrote the schema: an MCP server, a catalog. V8's engine backtracks, so a pattern
 * like `^(a+)+$` on 34 `a`s and a `!` blocks the process for minutes (issue 25 item 6). Under
 * {@link withLinearPatterns} every `new RegExp(...)` is a {@link LinearPattern}, which matches with
 * RE2JS (a pure-JS port of RE2: time linear in the input, whatever the pattern).
 *
 * @module
 */

const NativeRegExp = RegExp;

/** RE2 flags for JavaScript ones (`g`, `y`, `u`, `d`, `v` change nothing for a yes/no test). */
function re2Flags(flags: string): number {
  let out = 0;
  if (flags.includes('i')) out |= RE2JS().CASE_INSENSITIVE;
  if (flags.includes('m')) out |= RE2JS().MULTILINE;
  if (flags.includes('s')) out |= RE2JS().DOTALL;
  return out;
}

/**
 * A RegExp whose `test` and `exec` run on RE2JS. A pattern RE2 cannot run (a back reference, a
 * lookaround) is not enforced: it passes every string, and is listed in `unenforced` of the
 * {@link withLinearPatterns} call that made it.
 */
export class LinearPattern extends NativeRegExp {
  readonly linear: RE2JSClass | undefined;

  constructor(pattern: string | RegExp, flags?: string) {
    super(pattern, flags);
    let linear: RE2JSClass | undefined;
    try {
      linear = RE2JS().compile(this.source, re2Flags(this.flags));
    } catch {
      linear = undefined;
      current?.push(this.source);
    }
    this.linear = linear;
  }

  override test(input: string): boolean {
    return this.linear === undefined ? true : this.linear.matcher(String(input)).find();
  }

  /** A match with its text and index only (no groups): what a yes/no check needs. */
  override exec(input: string): RegExpExecArray | null {
    const text = String(input);
    if (this.linear === undefined) return Object.assign([''], { index: 0, input: text }) as RegExpExecArray;
    const matcher = this.linear.matcher(text);
    if (!matcher.find()) return null;
    return Object.assign([matcher.group() ?? ''], { index: matcher.start(), input: text }) as RegExpExecArray;
  }

  static override get [Symbol.species](): RegExpConstructor {
    return NativeRegExp;
  }
}

let current: string[] | undefined;

/**
 * Runs `build` (synchronously) with the global `RegExp` replaced by {@link LinearPattern}, so the
 * patterns a schema converter compiles (zod's `z.fromJSONSchema` writes `new RegExp(pattern)`)
 * match in linear time. Returns what `build` returned and the patterns RE2 could not compile,
 * which are not enforced. Regex literals and patterns compiled before or after are untouched.
 */
export function withLinearPatterns<T>(build: () => T): { value: T; unenforced: string[] } {
  const global = globalThis as { RegExp: RegExpConstructor };
  const outer = current;
  const previous = global.RegExp;
  const unenforced: string[] = [];
  current = unenforced;
  global.RegExp = LinearPattern as unknown as RegExpConstructor;
  try {
    return { value: build(), unenforced };
  } finally {
    global.RegExp = previous;
    current = outer;
  }
}
