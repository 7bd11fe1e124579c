/**
 * A JSON-like preview of any value, at most `maxChars` characters (then `…(truncated)`), for
 * hints and messages about input the boundary refused (`{ $raw }` in a hint's `priorInput`).
 *
 * It reads only what it writes: an array's items and an object's members are visited until the
 * budget is spent, so `new Array(1e7)` costs a few thousand reads, not ten million (issue 24
 * item 8: `JSON.stringify` with a replacer called it for every slot, 2.6 s). Keys are clipped to
 * {@link PREVIEW_KEY_CHARS}. What JSON cannot carry is shown rather than refused: a BigInt as
 * `12n`, a cycle as `"[Circular]"`, a function or symbol inside a value as JSON drops it; a
 * function, symbol or `undefined` as the whole value as `String` gives it. A getter, `toJSON` or
 * proxy trap that throws ends the preview with what was written, or `String(value)`, or
 * `(unreadable value)`. Never throws.
 */
export function previewValue(value: unknown, maxChars = PREVIEW_CHARS): string {
  const parts: string[] = [];
  let length = 0;
  const write = (text: string) => {
    parts.push(text);
    length += text.length;
  };
  const seen = new Set<object>();
  const visit = (input: unknown, key: string): void => {
    let item = input;
    if (
      item !== null &&
      typeof item === 'object' &&
      typeof (item as { toJSON?: unknown }).toJSON === 'function'
    ) {
      item = (item as { toJSON(key: string): unknown }).toJSON(key);
    }
    switch (typeof item) {
      case 'string':
        write(JSON.stringify(item.length > maxChars ? item.slice(0, maxChars) : item));
        return;
      case 'number':
        write(Number.isFinite(item) ? String(item) : 'null');
        return;
      case 'boolean':
        write(String(item));
        return;
      case 'bigint':
        write(`${item}n`);
        return;
      case 'object':
        break;
      default:
        // undefined, a function, a symbol: `null` where JSON would write one in an array.
        write('null');
        return;
    }
    if (item === null) {
      write('null');
      return;
    }
    if (seen.has(item)) {
      write('"[Circular]"');
      return;
    }
    seen.add(item);
    if (Array.isArray(item)) {
      write('[');
      for (let index = 0; index < item.length && length < maxChars; index++) {
        if (index > 0) write(',');
        visit(item[index], String(index));
      }
      write(']');
    } else {
      write('{');
      let first = true;
      for (const name of Object.keys(item)) {
        if (length >= maxChars) break;
        const member = (item as Record<string, unknown>)[name];
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
        write(`${first ? '' : ','}${JSON.stringify(clipKey(name))}:`);
        first = false;
        visit(member, name);
      }
      write('}');
    }
    seen.delete(item);
  };
  let text: string;
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') {
    text = stringOf(value);
  } else {
    try {
      visit(value, '');
      text = parts.join('');
    } catch {
      // A getter, toJSON or proxy trap threw: what was written so far, if anything.
      text = parts.length > 0 ? parts.join('') : stringOf(value);
    }
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…(truncated)` : text;
}

/** Characters of a preview (and of a refused input's `$raw` in a hint). */
export const PREVIEW_CHARS = 4096;

/** Characters kept of one key or path segment in previews, hints and messages. */
export const PREVIEW_KEY_CHARS = 100;

/** Characters kept of a whole dotted path in hints and messages. */
export const PREVIEW_PATH_CHARS = 300;

/** A key or path segment as hints and messages show it: at most {@link PREVIEW_KEY_CHARS} characters, then `…`. */
export function clipKey(key: string): string {
  return clipText(key, PREVIEW_KEY_CHARS);
}

/**
 * A path (`items.0.sku`) as hints and messages show it: each segment clipped by {@link clipKey},
 * the whole to {@link PREVIEW_PATH_CHARS} characters.
 */
export function displayPath(path: readonly PropertyKey[]): string {
  return clipText(path.map((segment) => clipKey(String(segment))).join('.'), PREVIEW_PATH_CHARS);
}

/** `text` cut to `max` characters, with `…` when cut. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function stringOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      // A Proxy whose every trap throws: nothing of it can be read.
      return '(unreadable value)';
    }
  }
}

/** Characters of a refused call's input the run's transcript keeps whole. */
export const REFUSED_INPUT_CHARS = 8_192;

/**
 * A refused call's input as the transcript keeps it (issue 24 item 8: a refused call's 5 MB of
 * arguments stayed in the transcript and were sent to the model again every turn, 25.6 MB after
 * five): as sent when its text or preview is at most {@link REFUSED_INPUT_CHARS} characters,
 * else `{ $truncated: <the first half of that>…, $chars? }` (`$chars`, the whole length, for text).
 * Reads no more of an object than the preview does.
 */
export function clippedRefusedInput(input: unknown): unknown {
  const half = REFUSED_INPUT_CHARS / 2;
  if (typeof input === 'string') {
    return input.length <= REFUSED_INPUT_CHARS
      ? input
      : { $truncated: `${input.slice(0, half)}…`, $chars: input.length };
  }
  if (input === null || typeof input !== 'object') return input;
  const preview = previewValue(input, REFUSED_INPUT_CHARS);
  return preview.length <= REFUSED_INPUT_CHARS ? input : { $truncated: `${preview.slice(0, half)}…` };
}
