/**
 * A shallow copy of an object without the given fields (injected fields, which a model never
 * sends); any other value is returned unchanged. Internal to tools/, not exported by the index.
 */
export function withoutFields(value: unknown, fields: readonly string[]): unknown {
  if (fields.length === 0 || value === null || typeof value !== 'object' || Array.isArray(value))
    return value;
  const copy = { ...(value as Record<string, unknown>) };
  for (const field of fields) delete copy[field];
  return copy;
}
