/**
 * `json.dumps(value)` with Python's defaults (`", "` and `": "` separators, `ensure_ascii=True`),
 * so text BFCL builds with it (the JavaScript dict hint of `_func_doc_language_specific_pre_processing`)
 * comes out the same here. Floats that JSON cannot tell from integers (`1.0`) print as `1`: the
 * distinction is already gone once the data is parsed.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
    return JSON.stringify(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(
      ([key, item]) => `${quote(key)}: ${pythonJsonDumps(item)}`,
    );
    return `{${entries.join(', ')}}`;
  }
  return quote(String(value));
}

function quote(text: string): string {
  // JSON.stringify escapes what JSON needs; Python then writes every non-ASCII UTF-16 unit as \uXXXX.
  return JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
