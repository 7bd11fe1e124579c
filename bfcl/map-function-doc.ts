import {
  type JSONSchema,
  type JsonSchemaFunction,
  type JsonSchemaToolOptions,
  type Tool,
  toolFromJsonSchema,
} from '../tools/index.ts';
import { BFCL_TOOLSET, toolIdForName } from './bfcl-tool-id.ts';
import type { BfclFunctionDoc, BfclLanguage, BfclSchema } from './bfcl-types.ts';
import { pythonJsonDumps } from './python-json-dumps.ts';
import { toSourceText } from './source-text.ts';

/**
 * BFCL function docs → JSON Schema tools (docs/tool-boundary.md §Failures "A tool catalog can also be built from plain
 * JSON Schema"), saying for each doc whether the schema says exactly what the doc says.
 *
 * "Exact" is judged against BFCL's own reading of its docs at the pinned commit: the type table
 * of its AST checker and of `GORILLA_TO_OPENAPI`, and `_func_doc_language_specific_pre_processing`.
 *
 * | BFCL                                   | JSON Schema                                   | fidelity |
 * |----------------------------------------|-----------------------------------------------|----------|
 * | `dict` (`HashMap`, native form)        | `object`; no `properties` → any keys          | exact    |
 * | `integer`, `float`/`double`            | `integer`, `number` (the checker takes 3 for 3.0) | exact |
 * | `string`/`String`, `boolean`/`Boolean` | `string`, `boolean`                           | exact    |
 * | `array`/`ArrayList`/`Array`            | `array` with mapped `items`                   | exact    |
 * | `tuple`                                | `array` (the checker turns tuples into lists) | exact, noted |
 * | `any` in Python docs                   | `string` (`GORILLA_TO_OPENAPI`, checker: str) | exact, noted |
 * | Java/JS parameter, `source-text` form  | `string` of Java/JS source, BFCL's hints added | exact, noted |
 * | `any` in Java/JS, `native` form        | no constraint                                 | approximate |
 * | Java `char` / `long`, JS `Bigint`, native | string of length 1 / `integer`             | approximate |
 * | `enum` contradicting `type` (`"True"` on a boolean) | the enum's values and the typed values they name (`true`) | approximate |
 * | `enum` on an `array`                   | moved to `items`                              | approximate |
 * | `minItems`/`maxItems` on an item schema | moved to the array                           | approximate |
 * | `required` naming undeclared fields    | those fields declared, unconstrained          | approximate |
 * | `optional: true` on a required field   | stays required (the checker reads `required`) | approximate |
 * | `default` outside its type or enum     | also accepted (`enum` + value, or `anyOf` + `const`) | approximate |
 * | `default` on an array's item schema   | dropped (it is the array's default, one level down) | approximate |
 * | `default` on a required field          | kept in the description only (zod would make the field optional) | exact, noted |
 * | `default: None`                        | `null` accepted too (a Python `Optional`; the ground truth lists `None`) | exact, noted |
 * | unknown or empty `type`                | no constraint                                 | approximate |
 * | a parameter named `__proto__`, `constructor` or `prototype` | left out, and said so (the tool boundary refuses those names in every call) | approximate |
 *
 * Tool ids come from {@link toolIdForName}; the BFCL name stays on the result as `name`.
 */
export type ArgumentForm = 'source-text' | 'native';

export interface MapFunctionDocOptions {
  /** The category's language (`categoryLanguage`). Default `python`. */
  language?: BfclLanguage;
  /**
   * How Java/JavaScript arguments travel. `source-text` (default) is BFCL's own: every
   * top-level argument is a string of Java/JS source (`"new int[]{1, 2}"`, `"true"`), which
   * BFCL's checker decodes before comparing. `native` maps Java/JS types to JSON types.
   */
  argumentForm?: ArgumentForm;
  /** Append BFCL's "Note that the provided function is in <language> syntax." Default true. */
  languageHint?: boolean;
  /** Default `bfcl`. */
  toolset?: string;
}

export type MappingCode =
  | 'any_unconstrained'
  | 'char_as_single_character_string'
  | 'long_as_integer'
  | 'enum_type_conflict'
  | 'array_enum_on_items'
  | 'item_count_moved_to_array'
  | 'required_undeclared'
  | 'optional_but_required'
  | 'default_outside_schema'
  | 'default_on_items'
  | 'unknown_type'
  | 'unknown_keyword'
  | 'forbidden_field_name';

export type MappingNoteCode =
  | 'any_as_string'
  | 'tuple_as_array'
  | 'source_text_arguments'
  | 'required_default_in_description'
  | 'none_default_nullable'
  | 'optional_keyword_dropped'
  | 'free_form_object'
  | 'response_not_mapped';

/** One place where the mapping approximates (or, for notes, makes a choice worth knowing). */
export interface MappingFinding<C extends string = MappingCode> {
  code: C;
  /** Dotted path of the parameter (`location`, `population.adults`, `items[]`); `''` for the function. */
  path: string;
  detail: string;
}

export interface MappedFunctionDoc {
  /** The BFCL name, as the data and the ground truth write it. */
  name: string;
  toolId: string;
  language: BfclLanguage;
  argumentForm: ArgumentForm;
  /** Ready for `toolFromJsonSchema`: `name` is the tool id. */
  function: JsonSchemaFunction & { parameters: JSONSchema };
  fidelity: 'exact' | 'approximate';
  /** Why the mapping is approximate; empty when exact. */
  approximations: MappingFinding[];
  notes: MappingFinding<MappingNoteCode>[];
}

/** Thrown for a doc that cannot be mapped at all (no usable name or parameters). */
export class BfclMappingError extends Error {
  override readonly name = 'BfclMappingError';
}

const LANGUAGE_HINTS: Record<BfclLanguage, string> = {
  python: ' Note that the provided function is in Python 3 syntax.',
  java: ' Note that the provided function is in Java 8 SDK syntax.',
  javascript: ' Note that the provided function is in JavaScript syntax.',
};

type JsonType = 'object' | 'integer' | 'number' | 'string' | 'boolean' | 'array';

/** Field names the tool boundary refuses in every input (tools/define-tool.ts). */
const FORBIDDEN_FIELD_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/** Native type table: BFCL type name → JSON type (upstream `GORILLA_TO_OPENAPI`, `any` aside). */
const NATIVE_TYPES: Record<string, JsonType> = {
  dict: 'object',
  object: 'object',
  HashMap: 'object',
  Hashtable: 'object',
  integer: 'integer',
  int: 'integer',
  byte: 'integer',
  short: 'integer',
  long: 'integer',
  Bigint: 'integer',
  float: 'number',
  double: 'number',
  number: 'number',
  string: 'string',
  String: 'string',
  str: 'string',
  char: 'string',
  boolean: 'boolean',
  Boolean: 'boolean',
  bool: 'boolean',
  array: 'array',
  list: 'array',
  ArrayList: 'array',
  Array: 'array',
  Queue: 'array',
  Stack: 'array',
  tuple: 'array',
};

const KNOWN_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'items',
  'enum',
  'default',
  'optional',
  'format',
  'maximum',
  'minimum',
  'minItems',
  'maxItems',
]);

/**
 * Maps one doc. Never mutates it.
 *
 * @throws BfclMappingError when `name` is not a string or `parameters` is not an object.
 */
export function mapFunctionDoc(doc: BfclFunctionDoc, options: MapFunctionDocOptions = {}): MappedFunctionDoc {
  if (typeof doc?.name !== 'string') throw new BfclMappingError('A function doc needs a string "name"');
  const parameters = doc.parameters ?? { type: 'dict', properties: {} };
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw new BfclMappingError(`Function ${doc.name}: "parameters" must be an object`);
  }
  const language = options.language ?? 'python';
  const argumentForm: ArgumentForm =
    language === 'python' ? 'native' : (options.argumentForm ?? 'source-text');
  const mapper = new Mapper(language);
  const root = argumentForm === 'source-text' ? toSourceTextForm(parameters, language, mapper) : parameters;
  const schema = mapper.object(root, '', { forceObject: true });
  if (doc.response !== undefined) {
    mapper.note(
      'response_not_mapped',
      '',
      'the "response" schema describes the result; only inputs are mapped',
    );
  }
  const toolId = toolIdForName(doc.name, options.toolset ?? BFCL_TOOLSET);
  const hint = options.languageHint === false ? '' : LANGUAGE_HINTS[language];
  return {
    name: doc.name,
    toolId,
    language,
    argumentForm,
    function: { name: toolId, description: `${doc.description ?? ''}${hint}`, parameters: schema },
    fidelity: mapper.approximations.length === 0 ? 'exact' : 'approximate',
    approximations: mapper.approximations,
    notes: mapper.notes,
  };
}

/**
 * {@link mapFunctionDoc} then `toolFromJsonSchema`: a tool whose id is the mapped id.
 *
 * @throws BfclMappingError, or ToolDefinitionError when zod cannot read the mapped schema.
 */
export function toolFromFunctionDoc(
  doc: BfclFunctionDoc,
  options: MapFunctionDocOptions & Omit<JsonSchemaToolOptions, 'toolset'> = {},
): { tool: Tool; mapping: MappedFunctionDoc } {
  const { language, argumentForm, languageHint, toolset, ...toolOptions } = options;
  const mapping = mapFunctionDoc(doc, { language, argumentForm, languageHint, toolset });
  const tool = toolFromJsonSchema(mapping.function, { ...toolOptions, toolset: toolset ?? BFCL_TOOLSET });
  return { tool, mapping };
}

/**
 * BFCL's `_func_doc_language_specific_pre_processing` for Java and JavaScript: every top-level
 * parameter becomes a string of source text, with the original type (and the element type, or
 * for JavaScript the dict's entries) told in its description.
 */
function toSourceTextForm(parameters: BfclSchema, language: BfclLanguage, mapper: Mapper): BfclSchema {
  const name = language === 'java' ? 'Java' : 'JavaScript';
  const properties: Record<string, BfclSchema> = {};
  for (const [key, original] of Object.entries(parameters.properties ?? {})) {
    if (!mapper.allowedName(key, '')) continue;
    const value: BfclSchema = { ...original };
    let description = value.description ?? '';
    if (value.type === 'any') {
      description += ` This parameter can be of any type of ${name} object in string representation.`;
    } else {
      description += ` This is ${name} ${value.type} type parameter in string representation.`;
    }
    const listType = language === 'java' ? ['ArrayList', 'Array'] : ['array'];
    if (listType.includes(String(value.type))) {
      description += ` The list elements are of type ${value.items?.type}; they are not in string representation.`;
      delete value.items;
    }
    if (language === 'javascript' && value.type === 'dict' && value.properties) {
      description += ` The dictionary entries have the following schema; they are not in string representation. ${pythonJsonDumps(value.properties)}`;
      delete value.properties;
      delete value.required;
    }
    value.description = description;
    value.type = 'string';
    // A default is a value; in this form it is written as the source text that stands for it.
    if (value.default !== undefined && value.default !== null && typeof value.default !== 'string') {
      value.default = toSourceText(value.default, original, language === 'java' ? 'java' : 'javascript');
    }
    properties[key] = value;
  }
  if (Object.keys(properties).length > 0) {
    mapper.note(
      'source_text_arguments',
      '',
      `${name} arguments are strings of ${name} source, which BFCL's checker decodes (BFCL's own form)`,
    );
  }
  return { ...parameters, properties };
}

interface NodeContext {
  /** The node is a property its parent object lists in `required`. */
  required?: boolean;
  /** The root: `parameters` is always an object. */
  forceObject?: boolean;
  /** The node is the `items` schema of an array. */
  items?: boolean;
}

class Mapper {
  readonly approximations: MappingFinding[] = [];
  readonly notes: MappingFinding<MappingNoteCode>[] = [];

  constructor(private readonly language: BfclLanguage) {}

  approximate(code: MappingCode, path: string, detail: string): void {
    this.approximations.push({ code, path, detail });
  }

  note(code: MappingNoteCode, path: string, detail: string): void {
    this.notes.push({ code, path, detail });
  }

  object(node: BfclSchema, path: string, context: NodeContext = {}): JSONSchema {
    return this.node(context.forceObject ? { ...node, type: 'dict' } : node, path, context);
  }

  node(node: BfclSchema, path: string, context: NodeContext = {}): JSONSchema {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      this.approximate(
        'unknown_type',
        path,
        `the schema is ${JSON.stringify(node)}, not an object: left unconstrained`,
      );
      return {};
    }
    const out: JSONSchema = {};
    let description = typeof node.description === 'string' ? node.description : undefined;
    const bfclType = typeof node.type === 'string' ? node.type : undefined;
    let type = this.jsonType(bfclType, path);

    for (const key of Object.keys(node)) {
      if (!KNOWN_KEYWORDS.has(key)) {
        this.approximate('unknown_keyword', path, `keyword "${key}" is not one BFCL uses: dropped`);
      }
    }

    if (type === 'object') Object.assign(out, this.objectBody(node, path));
    if (type === 'array') Object.assign(out, this.arrayBody(node, path));
    if (type === 'string' && bfclType === 'char') {
      out.minLength = 1;
      out.maxLength = 1;
    }
    if (typeof node.format === 'string') {
      if (type === 'string') out.format = node.format;
      else this.approximate('unknown_keyword', path, `"format" on a ${bfclType}: dropped`);
    }
    for (const bound of ['minimum', 'maximum'] as const) {
      if (typeof node[bound] === 'number') {
        if (type === 'integer' || type === 'number') out[bound] = node[bound];
        else this.approximate('unknown_keyword', path, `"${bound}" on a ${bfclType}: dropped`);
      }
    }
    if ((node.minItems !== undefined || node.maxItems !== undefined) && type !== 'array') {
      // Arrays lift these from their items (arrayBody); anywhere else they constrain nothing.
      if (!context.items) {
        this.approximate('unknown_keyword', path, `"minItems"/"maxItems" on a ${bfclType}: dropped`);
      }
    }

    if (Array.isArray(node.enum)) {
      const values = node.enum;
      if (type === 'array') {
        // Handled by arrayBody (moved to items).
      } else if (type === undefined || values.every((value) => fitsType(value, type!))) {
        out.enum = [...values];
      } else {
        // BFCL's checker reads the declared type and never the enum, and the ground truth
        // writes `true` where the enum says "True": allow both spellings.
        const named = values
          .map((value) => coerce(value, type!))
          .filter((value) => value !== undefined && !values.some((known) => sameValue(known, value)));
        this.approximate(
          'enum_type_conflict',
          path,
          `declared ${bfclType} but the enum is ${JSON.stringify(values.slice(0, 6))}${values.length > 6 ? '...' : ''}: allowed are the enum's values${named.length > 0 ? ` and the ${bfclType} values they name ${JSON.stringify(named.slice(0, 6))}` : ''}`,
        );
        type = undefined;
        out.enum = [...values, ...named];
      }
    }

    let widenWith: { value: unknown } | undefined;
    let nullable = false;
    if (Object.hasOwn(node, 'default')) {
      const value = node.default;
      const decided = this.default(value, { ...out, ...(type ? { type } : {}) }, path, context);
      if (decided === 'nullable') nullable = true;
      else if (decided === 'widen') {
        if (Array.isArray(out.enum) && (type === undefined || fitsType(value, type))) out.enum.push(value);
        else widenWith = { value };
      }
      if (decided === 'fits' || decided === 'widen') {
        if (context.required) description = `${description ?? ''} Default: ${JSON.stringify(value)}.`;
        else out.default = value;
      }
    }

    if (node.optional !== undefined && !context.required) {
      this.note(
        'optional_keyword_dropped',
        path,
        '"optional" is not JSON Schema; the field is already not required',
      );
    }
    const misplaced = [
      ['properties', 'object'],
      ['required', 'object'],
      ['items', 'array'],
    ].filter(([key, owner]) => node[key!] !== undefined && type !== owner && type !== undefined);
    for (const [key] of misplaced) {
      this.approximate('unknown_keyword', path, `"${key}" on a ${bfclType}: dropped`);
    }

    if (nullable) {
      if (Array.isArray(out.enum)) out.enum.push(null);
    }
    const { default: defaultValue, ...constraints } = out;
    const core: JSONSchema = { ...(type ? { type: nullable ? [type, 'null'] : type } : {}), ...constraints };
    const schema: JSONSchema = widenWith ? { anyOf: [core, { const: widenWith.value }] } : core;
    return {
      ...(description !== undefined ? { description } : {}),
      ...schema,
      ...(Object.hasOwn(out, 'default') ? { default: defaultValue } : {}),
    };
  }

  /**
   * What a `default` does to the schema: `nullable` for Python's `None` (the parameter is
   * `Optional`), `widen` when the documented default is outside the declared type or enum (the
   * doc says the function takes it), else `fits`.
   */
  private default(
    value: unknown,
    schema: JSONSchema,
    path: string,
    context: NodeContext,
  ): 'fits' | 'nullable' | 'widen' | 'drop' {
    if (context.items) {
      this.approximate(
        'default_on_items',
        path,
        `default ${JSON.stringify(value)} written on the items of an array: dropped`,
      );
      return 'drop';
    }
    if (value === null && schema.type !== undefined) {
      this.note(
        'none_default_nullable',
        path,
        'default None: null is accepted too (a Python Optional parameter)',
      );
      return 'nullable';
    }
    if (!validates(value, schema)) {
      this.approximate(
        'default_outside_schema',
        path,
        `default ${JSON.stringify(value)} is outside ${describeSchema(schema)}: accepted as one more allowed value`,
      );
      return 'widen';
    }
    if (context.required) {
      this.note(
        'required_default_in_description',
        path,
        'a JSON Schema default would make zod treat the required field as optional; kept in the description',
      );
    }
    return 'fits';
  }

  private jsonType(bfclType: string | undefined, path: string): JsonType | undefined {
    if (bfclType === 'any' || bfclType === 'Any') {
      if (this.language === 'python') {
        this.note(
          'any_as_string',
          path,
          "BFCL reads Python `any` as str (GORILLA_TO_OPENAPI, the checker's type table)",
        );
        return 'string';
      }
      this.approximate('any_unconstrained', path, `${this.languageName()} \`any\` has no type constraint`);
      return undefined;
    }
    const type = bfclType === undefined ? undefined : NATIVE_TYPES[bfclType];
    if (type === undefined) {
      this.approximate(
        'unknown_type',
        path,
        `type ${JSON.stringify(bfclType ?? null)} is not a BFCL type: left unconstrained`,
      );
      return undefined;
    }
    if (bfclType === 'char') {
      this.approximate('char_as_single_character_string', path, 'Java `char` mapped to a string of length 1');
    }
    if (bfclType === 'long' || bfclType === 'Bigint') {
      this.approximate(
        'long_as_integer',
        path,
        `${this.languageName()} \`${bfclType}\` mapped to a JSON integer: exact only up to 2^53`,
      );
    }
    if (bfclType === 'tuple') {
      this.note(
        'tuple_as_array',
        path,
        "a tuple is a JSON array; BFCL's checker turns tuples into lists too",
      );
    }
    return type;
  }

  private languageName(): string {
    return this.language === 'java' ? 'Java' : this.language === 'javascript' ? 'JavaScript' : 'Python';
  }

  private objectBody(node: BfclSchema, path: string): JSONSchema {
    const declared = node.properties && typeof node.properties === 'object' ? node.properties : undefined;
    const properties: Record<string, JSONSchema> = {};
    const requiredList = (Array.isArray(node.required) ? [...new Set(node.required.map(String))] : []).filter(
      (key) => this.allowedName(key, path),
    );
    for (const [key, child] of Object.entries(declared ?? {})) {
      const childPath = path ? `${path}.${key}` : key;
      if (!this.allowedName(key, path)) continue;
      const required = requiredList.includes(key);
      if (required && isOptionalFlag(child?.optional)) {
        this.approximate(
          'optional_but_required',
          childPath,
          `marked optional (${JSON.stringify(child.optional)}) but listed in required: stays required, as BFCL's checker reads "required"`,
        );
      }
      properties[key] = this.node(child, childPath, { required });
    }
    for (const key of requiredList) {
      if (!Object.hasOwn(properties, key)) {
        const childPath = path ? `${path}.${key}` : key;
        this.approximate(
          'required_undeclared',
          childPath,
          `required but not declared: declared with no type constraint`,
        );
        properties[key] = {};
      }
    }
    const out: JSONSchema = { properties };
    if (requiredList.length > 0) out.required = requiredList;
    if (!declared && path !== '') {
      this.note('free_form_object', path, 'a dict without "properties" accepts any keys');
      out.additionalProperties = true;
    }
    return out;
  }

  /**
   * Whether `key` can be a field: `__proto__`, `constructor` and `prototype` cannot (the tool
   * boundary refuses them in every call, and `__proto__` assigned to a plain object set its
   * prototype instead: the parameter vanished without a word). Such a field is left out with a
   * `forbidden_field_name` finding, once per name and object.
   */
  allowedName(key: string, path: string): boolean {
    if (!FORBIDDEN_FIELD_NAMES.has(key)) return true;
    const childPath = path ? `${path}.${key}` : key;
    if (!this.approximations.some((f) => f.code === 'forbidden_field_name' && f.path === childPath)) {
      this.approximate(
        'forbidden_field_name',
        childPath,
        `a parameter named "${key}" cannot be a tool field (the boundary refuses that name in every call): left out`,
      );
    }
    return false;
  }

  private arrayBody(node: BfclSchema, path: string): JSONSchema {
    const out: JSONSchema = {};
    const itemPath = `${path}[]`;
    let items = node.items && typeof node.items === 'object' ? (node.items as BfclSchema) : undefined;
    if (Array.isArray(node.enum)) {
      if (items && !Array.isArray(items.enum)) {
        this.approximate(
          'array_enum_on_items',
          path,
          'an enum on an array lists allowed items: moved to "items"',
        );
        items = { ...items, enum: node.enum };
      } else {
        this.approximate(
          'unknown_keyword',
          path,
          'an enum on an array whose items have their own enum: dropped',
        );
      }
    }
    if (items) {
      for (const key of ['minItems', 'maxItems'] as const) {
        if (items[key] !== undefined && node[key] === undefined && typeof items[key] === 'number') {
          this.approximate(
            'item_count_moved_to_array',
            itemPath,
            `"${key}" written on the items: applied to the array`,
          );
          out[key] = items[key];
        }
      }
      out.items = this.node(items, itemPath, { items: true });
    }
    for (const key of ['minItems', 'maxItems'] as const) {
      if (typeof node[key] === 'number') out[key] = node[key];
    }
    return out;
  }
}

function isOptionalFlag(value: unknown): boolean {
  return value === true || (typeof value === 'string' && /^(true|yes)$/i.test(value));
}

function fitsType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

/** A structural check of a default against the mapped schema (type, enum, length, items). */
function validates(value: unknown, schema: JSONSchema): boolean {
  const type = schema.type as JsonType | undefined;
  if (type && !fitsType(value, type)) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => sameValue(allowed, value))) {
    return false;
  }
  if (typeof value === 'string') {
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false;
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false;
  }
  if (typeof value === 'number' && typeof schema.maximum === 'number' && value > schema.maximum) return false;
  if (Array.isArray(value) && schema.items && typeof schema.items === 'object') {
    return value.every((item) => validates(item, schema.items as JSONSchema));
  }
  return true;
}

/** `value` (an enum entry of another type) as a value of `type`, when it names one. */
function coerce(value: unknown, type: JsonType): unknown {
  const text = String(value).trim();
  switch (type) {
    case 'boolean':
      return /^true$/i.test(text) ? true : /^false$/i.test(text) ? false : undefined;
    case 'integer':
      return /^-?\d+$/.test(text) ? Number(text) : undefined;
    case 'number':
      return text !== '' && Number.isFinite(Number(text)) ? Number(text) : undefined;
    case 'string':
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    default:
      return undefined;
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function describeSchema(schema: JSONSchema): string {
  if (Array.isArray(schema.enum)) return `the enum ${JSON.stringify(schema.enum.slice(0, 6))}`;
  return `type ${String(schema.type ?? 'any')}`;
}
