import type { BfclSchema } from './bfcl-types.ts';

/**
 * Writes a ground-truth value as the Java or JavaScript source text a model sends for it in
 * BFCL's Java/JavaScript categories, where every argument is a string (`source-text` form of
 * `mapFunctionDoc`). The text is what upstream `java_type_converter` / `js_type_converter`
 * decode back into the ground-truth value:
 *
 * | type (Java)               | value          | text                                          |
 * |---------------------------|----------------|-----------------------------------------------|
 * | `boolean`                 | `true`         | `true`                                        |
 * | `integer`, `double`       | `42`, `0.5`    | `42`, `0.5`                                   |
 * | `long`, `float`           | `42`, `0.5`    | `42L`, `0.5f`                                 |
 * | `String`, `any`, `char`   | `"abc"`        | `abc` (the converters keep the text as is)    |
 * | `Array` of `integer`      | `[1, 2]`       | `new int[]{1, 2}`                             |
 * | `ArrayList` of `String`   | `["a", "b"]`   | `new ArrayList<>(Arrays.asList("a", "b"))`    |
 * | `HashMap`                 | `{"k": "v"}`   | `new HashMap<String, Object>() {{ put("k", "v"); }}` |
 *
 * | type (JavaScript)  | value          | text              |
 * |--------------------|----------------|-------------------|
 * | `Boolean`          | `false`        | `false`           |
 * | `integer`, `float` | `3`, `2.5`     | `3`, `2.5`        |
 * | `Bigint`           | `9`            | `9n`              |
 * | `String`, `any`    | `"abc"`        | `abc`             |
 * | `array`            | `["a", 1]`     | `["a", 1]`        |
 * | `dict`             | `{"k": "v"}`   | `{"k": "v"}`      |
 *
 * A string where the type wants something else is a variable or an expression in the ground
 * truth (`"textBuffer"` for a `char[]`): it is written as is, which the converters also keep.
 */
export function toSourceText(value: unknown, schema: BfclSchema, language: 'java' | 'javascript'): string {
  if (typeof value === 'string') return value;
  return language === 'java' ? java(value, schema) : javascript(value, schema);
}

const JAVA_ELEMENT_TYPES: Record<string, string> = {
  integer: 'int',
  long: 'long',
  short: 'short',
  byte: 'byte',
  float: 'float',
  double: 'double',
  boolean: 'boolean',
  char: 'char',
  String: 'String',
};

function java(value: unknown, schema: BfclSchema): string {
  const type = schema.type ?? 'any';
  const itemType = schema.items?.type;
  switch (type) {
    case 'long':
      return typeof value === 'number' ? `${value}L` : text(value);
    case 'float':
      return typeof value === 'number' ? `${value}f` : text(value);
    case 'Array': {
      if (!Array.isArray(value)) return text(value);
      const element = JAVA_ELEMENT_TYPES[itemType ?? ''] ?? 'Object';
      // parse_array converts each element with java_type_converter: strings stay unquoted.
      const items = value.map((item) => (typeof item === 'string' ? item : java(item, { type: itemType })));
      return `new ${element}[]{${items.join(', ')}}`;
    }
    case 'ArrayList': {
      if (!Array.isArray(value)) return text(value);
      if (value.length === 0) return 'new ArrayList<>()';
      return `new ArrayList<>(Arrays.asList(${value.map((item) => javaElement(item, itemType)).join(', ')}))`;
    }
    case 'HashMap': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return text(value);
      const entries = Object.entries(value);
      if (entries.length === 0) return 'new HashMap<>()';
      const puts = entries.map(([key, item]) => `put(${JSON.stringify(key)}, ${javaLiteral(item)});`);
      return `new HashMap<String, Object>() {{ ${puts.join(' ')} }}`;
    }
    default:
      return text(value);
  }
}

/** An ArrayList element: parse_arraylist strips the quotes of String and char elements. */
function javaElement(item: unknown, itemType: string | undefined): string {
  if (itemType === 'String') return JSON.stringify(String(item));
  if (itemType === 'char') return `'${String(item)}'`;
  if (itemType === undefined || itemType === 'any') return javaLiteral(item);
  return typeof item === 'string' ? item : java(item, { type: itemType });
}

/** A value as parse_java_value reads it: strings in double quotes. */
function javaLiteral(item: unknown): string {
  return typeof item === 'string' ? JSON.stringify(item) : text(item);
}

function javascript(value: unknown, schema: BfclSchema): string {
  const type = schema.type ?? 'any';
  if (type === 'Bigint' && typeof value === 'number') return `${value}n`;
  if (type === 'array' && Array.isArray(value)) {
    const itemType = schema.items?.type;
    // js_type_converter strips the quotes of String elements; other elements are read raw.
    return `[${value.map((item) => (typeof item === 'string' && itemType !== 'String' && itemType ? item : JSON.stringify(item))).join(', ')}]`;
  }
  return text(value);
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}
