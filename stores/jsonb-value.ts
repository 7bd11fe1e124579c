/**
 * JSON values in and out of PostgreSQL `jsonb`, losslessly.
 *
 * `jsonb` refuses two things JSON and JavaScript allow: the NUL character (`\u0000`: error
 * 22P05) and lone UTF-16 surrogates (`\ud800`: error 22P02), in strings and in keys. Both occur
 * in real runs (binary tool output; a tool result cut with `slice` between the halves of an
 * emoji), and a run whose snapshot cannot be saved is a run lost. So values containing them are
 * stored in an escaped form:
 *
 *     { "$toolwarden.jsonb": 1, "value": <escaped> }
 *
 * where, inside `<escaped>`, every object is `{ "$o": [[key, value], ...] }` and every string
 * that jsonb refuses is `{ "$s": [utf16 code units] }` (arrays, numbers, booleans, null and other
 * strings are unchanged). Because every object is wrapped in escaped form, no user value can be
 * mistaken for an escape. Values without such strings (nearly all) are stored as plain jsonb and
 * stay queryable; so is the rare top-level object that happens to use the marker key, which is
 * escaped too.
 *
 * The SQLite and memory stores need none of this: SQLite keeps the JSON text as is.
 *
 * @module
 */

const MARKER = '$toolwarden.jsonb';

/** Escapes in JSON text that jsonb refuses: `\u0000` and surrogates (JSON.stringify escapes lone ones). */
const REFUSED_ESCAPE = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * The JSON text to send as a `jsonb` parameter. Throws TypeError for values JSON cannot
 * represent at the top level (`undefined`, functions).
 */
export function toJsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('value must be a JSON value');
  // False positives (an escaped backslash followed by "u0000", the marker inside a string) only
  // take the slower, equally correct path.
  if (!REFUSED_ESCAPE.test(text) && !text.includes(`"${MARKER}"`)) return text;
  return JSON.stringify({ [MARKER]: 1, value: escapeRefused(JSON.parse(text)) });
}

/** The value a `jsonb` column held (as `pg` parsed it), with escapes undone. */
export function fromJsonb(stored: unknown): unknown {
  if (
    typeof stored === 'object' &&
    stored !== null &&
    !Array.isArray(stored) &&
    Object.hasOwn(stored, MARKER)
  ) {
    return unescapeRefused((stored as { value: unknown }).value);
  }
  return stored;
}

function escapeRefused(value: unknown): unknown {
  if (typeof value === 'string') return isRefused(value) ? { $s: codeUnits(value) } : value;
  if (Array.isArray(value)) return value.map(escapeRefused);
  if (typeof value === 'object' && value !== null) {
    return { $o: Object.entries(value).map(([key, item]) => [escapeRefused(key), escapeRefused(item)]) };
  }
  return value;
}

function unescapeRefused(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapeRefused);
  if (typeof value === 'object' && value !== null) {
    if (Object.hasOwn(value, '$s')) return fromCodeUnits((value as { $s: number[] }).$s);
    // Object.fromEntries defines own properties, so a "__proto__" key stays a key.
    const entries = (value as { $o: [unknown, unknown][] }).$o;
    return Object.fromEntries(entries.map(([key, item]) => [unescapeRefused(key), unescapeRefused(item)]));
  }
  return value;
}

/** Whether jsonb refuses the string: it holds NUL, or a surrogate that is not half of a pair. */
function isRefused(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return true;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1); // NaN past the end
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      i++; // a valid pair
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return true;
    }
  }
  return false;
}

function codeUnits(text: string): number[] {
  const units = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return units;
}

function fromCodeUnits(units: number[]): string {
  // In chunks: spreading a long array into fromCharCode overflows the stack.
  let text = '';
  for (let i = 0; i < units.length; i += 8192) text += String.fromCharCode(...units.slice(i, i + 8192));
  return text;
}
