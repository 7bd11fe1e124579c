import { describe, expect, it } from 'vitest';
import { prepareToolCall, ToolCatalog } from '../tools/index.ts';
import type { BfclFunctionDoc, BfclSchema } from './bfcl-types.ts';
import { BfclMappingError, mapFunctionDoc, toolFromFunctionDoc } from './map-function-doc.ts';

const doc = (properties: Record<string, BfclSchema>, required: string[] = []): BfclFunctionDoc => ({
  name: 'calc.area',
  description: 'Area of a shape.',
  parameters: { type: 'dict', properties, required },
});

/** Validates `input` against the mapped tool through the real boundary. */
const check = (
  fn: BfclFunctionDoc,
  input: unknown,
  options: Parameters<typeof toolFromFunctionDoc>[1] = {},
) => {
  const { tool } = toolFromFunctionDoc(fn, options);
  const prepared = prepareToolCall(new ToolCatalog([tool]), { name: tool.id, toolCallId: 'c1', input });
  return prepared.ok
    ? { ok: true as const, input: prepared.input }
    : { ok: false as const, hint: prepared.result.retryHint! };
};

describe('mapFunctionDoc: Python types', () => {
  it('maps dict, integer, float, string, boolean and array exactly, keeping the BFCL name apart from the id', () => {
    const mapped = mapFunctionDoc(
      doc(
        {
          base: { type: 'integer', description: 'The base.' },
          ratio: { type: 'float' },
          unit: { type: 'string', enum: ['cm', 'm'] },
          exact: { type: 'boolean' },
          sides: { type: 'array', items: { type: 'float' } },
          box: { type: 'dict', properties: { w: { type: 'integer' } }, required: ['w'] },
        },
        ['base'],
      ),
      { languageHint: false },
    );

    expect(mapped).toMatchObject({
      name: 'calc.area',
      toolId: 'bfcl.calc.area',
      fidelity: 'exact',
      approximations: [],
    });
    expect(mapped.function).toEqual({
      name: 'bfcl.calc.area',
      description: 'Area of a shape.',
      parameters: {
        type: 'object',
        properties: {
          base: { type: 'integer', description: 'The base.' },
          ratio: { type: 'number' },
          unit: { type: 'string', enum: ['cm', 'm'] },
          exact: { type: 'boolean' },
          sides: { type: 'array', items: { type: 'number' } },
          box: { type: 'object', properties: { w: { type: 'integer' } }, required: ['w'] },
        },
        required: ['base'],
      },
    });
  });

  it("appends BFCL's language hint to the description by default", () => {
    expect(mapFunctionDoc(doc({})).function.description).toBe(
      'Area of a shape. Note that the provided function is in Python 3 syntax.',
    );
  });

  it('reads Python `any` as a string, as BFCL does, and notes it', () => {
    const mapped = mapFunctionDoc(doc({ model: { type: 'any' } }));

    expect(mapped.function.parameters.properties).toEqual({ model: { type: 'string' } });
    expect(mapped.fidelity).toBe('exact');
    expect(mapped.notes.map((note) => note.code)).toEqual(['any_as_string']);
  });

  it('maps a tuple to an array of its items, with a note', () => {
    const mapped = mapFunctionDoc(doc({ position: { type: 'tuple', items: { type: 'float' } } }));

    expect(mapped.function.parameters.properties).toEqual({
      position: { type: 'array', items: { type: 'number' } },
    });
    expect(mapped.notes).toEqual([
      {
        code: 'tuple_as_array',
        path: 'position',
        detail: expect.stringContaining('turns tuples into lists'),
      },
    ]);
  });

  it('accepts null for a parameter whose default is None (a Python Optional)', () => {
    const fn = doc({
      city: { type: 'string', default: null },
      unit: { type: 'string', enum: ['C', 'F'], default: null },
    });

    expect(mapFunctionDoc(fn).function.parameters.properties).toEqual({
      city: { type: ['string', 'null'] },
      unit: { type: ['string', 'null'], enum: ['C', 'F', null] },
    });
    expect(check(fn, { city: null, unit: null }).ok).toBe(true);
    expect(check(fn, { city: 3 }).ok).toBe(false);
  });

  it('lets a dict without properties take any keys, while declared dicts stay closed', () => {
    const fn = doc({
      extra: { type: 'dict' },
      box: { type: 'dict', properties: { w: { type: 'integer' } } },
    });

    expect(check(fn, { extra: { anything: [1, 2] } }).ok).toBe(true);
    const rejected = check(fn, { box: { w: 1, h: 2 } });
    expect(
      rejected.ok === false && rejected.hint.issues?.map((issue) => [issue.path, issue.constraint]),
    ).toEqual([['box.h', 'unknown_field']]);
  });

  it('keeps a fitting default on an optional field, which zod then fills in', () => {
    const fn = doc({ rounding: { type: 'integer', default: 2 } });

    expect(mapFunctionDoc(fn).function.parameters.properties).toEqual({
      rounding: { type: 'integer', default: 2 },
    });
    expect(check(fn, {})).toEqual({ ok: true, input: { rounding: 2 } });
  });

  it('keeps the default of a required field in its description only, so leaving it out stays missing_fields', () => {
    const fn = doc({ area_per_person: { type: 'integer', description: 'Square feet.', default: 100 } }, [
      'area_per_person',
    ]);
    const mapped = mapFunctionDoc(fn);

    expect(mapped.function.parameters.properties).toEqual({
      area_per_person: { type: 'integer', description: 'Square feet. Default: 100.' },
    });
    expect(mapped.notes.map((note) => note.code)).toEqual(['required_default_in_description']);
    const missing = check(fn, {});
    expect(missing.ok === false && missing.hint.reason).toBe('missing_fields');
  });

  it('drops the "optional" keyword, noting it', () => {
    const mapped = mapFunctionDoc(doc({ month: { type: 'string', optional: true } }));

    expect(mapped.function.parameters.properties).toEqual({ month: { type: 'string' } });
    expect(mapped.notes.map((note) => note.code)).toEqual(['optional_keyword_dropped']);
  });

  it('keeps format and maximum, which the boundary then enforces', () => {
    const fn = doc({ date: { type: 'string', format: 'date' }, fee: { type: 'integer', maximum: 400 } });

    expect(check(fn, { date: '2019-12-13', fee: 400 }).ok).toBe(true);
    const rejected = check(fn, { date: 'Dec 13', fee: 401 });
    expect(rejected.ok === false && rejected.hint.issues?.map((issue) => issue.constraint)).toEqual([
      'invalid_format',
      'too_big',
    ]);
  });
});

describe('mapFunctionDoc: approximations, each with its reason', () => {
  it('allows both spellings when the declared type contradicts the enum ("True" on a boolean)', () => {
    const fn = doc({
      is_unisex: { type: 'boolean', enum: ['True', 'False', 'dontcare'], default: 'dontcare' },
    });
    const mapped = mapFunctionDoc(fn);

    expect(mapped.fidelity).toBe('approximate');
    expect(mapped.approximations).toEqual([
      {
        code: 'enum_type_conflict',
        path: 'is_unisex',
        detail:
          'declared boolean but the enum is ["True","False","dontcare"]: allowed are the enum\'s values and the boolean values they name [true,false]',
      },
    ]);
    expect([
      check(fn, { is_unisex: true }).ok,
      check(fn, { is_unisex: 'dontcare' }).ok,
      check(fn, { is_unisex: 'yes' }).ok,
    ]).toEqual([true, true, false]);
  });

  it('moves an enum written on an array to its items', () => {
    const fn = doc({ metrics: { type: 'array', items: { type: 'string' }, enum: ['view', 'buzz'] } });

    expect(mapFunctionDoc(fn).function.parameters.properties).toEqual({
      metrics: { type: 'array', items: { type: 'string', enum: ['view', 'buzz'] } },
    });
    expect(check(fn, { metrics: ['buzz'] }).ok).toBe(true);
    expect(check(fn, { metrics: ['trust'] }).ok).toBe(false);
  });

  it('accepts a documented default that lies outside the enum or the type', () => {
    const fn = doc({
      category: { type: 'string', enum: ['Politics', 'Sports'], default: 'General' },
      rating: { type: 'float', default: 'dontcare' },
    });
    const mapped = mapFunctionDoc(fn);

    expect(mapped.approximations.map((a) => [a.code, a.path])).toEqual([
      ['default_outside_schema', 'category'],
      ['default_outside_schema', 'rating'],
    ]);
    expect(mapped.function.parameters.properties).toEqual({
      category: { type: 'string', enum: ['Politics', 'Sports', 'General'], default: 'General' },
      rating: { anyOf: [{ type: 'number' }, { const: 'dontcare' }], default: 'dontcare' },
    });
    expect([
      check(fn, { rating: 4.5 }).ok,
      check(fn, { rating: 'dontcare' }).ok,
      check(fn, { rating: 'high' }).ok,
    ]).toEqual([true, true, false]);
  });

  it('declares required fields the doc forgot to declare, with no type constraint', () => {
    const fn = doc({ population: { type: 'dict', required: ['adults', 'children'] } }, ['population']);
    const mapped = mapFunctionDoc(fn);

    expect(mapped.approximations.map((a) => [a.code, a.path])).toEqual([
      ['required_undeclared', 'population.adults'],
      ['required_undeclared', 'population.children'],
    ]);
    const missing = check(fn, { population: { adults: 2 } });
    expect(missing.ok === false && missing.hint.missingFields).toEqual(['population.children']);
  });

  it('keeps a field required when it is also marked optional, as BFCL reads "required"', () => {
    const mapped = mapFunctionDoc(doc({ num_chords: { type: 'integer', optional: true } }, ['num_chords']));

    expect(mapped.function.parameters.required).toEqual(['num_chords']);
    expect(mapped.approximations.map((a) => a.code)).toEqual(['optional_but_required']);
  });

  it('lifts minItems/maxItems written on the items up to the array', () => {
    const mapped = mapFunctionDoc(
      doc({ user_responses: { type: 'array', items: { type: 'integer', minItems: 5, maxItems: 100 } } }),
    );

    expect(mapped.function.parameters.properties).toEqual({
      user_responses: { type: 'array', minItems: 5, maxItems: 100, items: { type: 'integer' } },
    });
    expect(mapped.approximations.map((a) => a.code)).toEqual([
      'item_count_moved_to_array',
      'item_count_moved_to_array',
    ]);
  });

  it('leaves an unknown or empty type unconstrained', () => {
    const mapped = mapFunctionDoc(doc({ issuer: { type: '' } }));

    expect(mapped.function.parameters.properties).toEqual({ issuer: {} });
    expect(mapped.approximations).toEqual([
      { code: 'unknown_type', path: 'issuer', detail: 'type "" is not a BFCL type: left unconstrained' },
    ]);
  });
});

describe('mapFunctionDoc: Java and JavaScript', () => {
  const java: BfclFunctionDoc = {
    name: 'PmsProductServiceImpl.updateNewStatus',
    description: 'Updates the new status.',
    parameters: {
      type: 'dict',
      properties: {
        ids: { type: 'ArrayList', description: 'Product ids.', items: { type: 'long' } },
        newStatus: { type: 'integer', description: 'The status.' },
        ch: { type: 'char', description: 'A letter.' },
        session: { type: 'any', description: 'The session.' },
      },
      required: ['ids', 'newStatus'],
    },
  };

  it("passes every argument as a string of Java source with BFCL's hints (source-text form, the default)", () => {
    const mapped = mapFunctionDoc(java, { language: 'java' });

    expect(mapped).toMatchObject({ argumentForm: 'source-text', fidelity: 'exact' });
    expect(mapped.notes.map((note) => note.code)).toEqual(['source_text_arguments']);
    expect(mapped.function.description).toBe(
      'Updates the new status. Note that the provided function is in Java 8 SDK syntax.',
    );
    expect(mapped.function.parameters).toEqual({
      type: 'object',
      properties: {
        ids: {
          type: 'string',
          description:
            'Product ids. This is Java ArrayList type parameter in string representation. The list elements are of type long; they are not in string representation.',
        },
        newStatus: {
          type: 'string',
          description: 'The status. This is Java integer type parameter in string representation.',
        },
        ch: {
          type: 'string',
          description: 'A letter. This is Java char type parameter in string representation.',
        },
        session: {
          type: 'string',
          description:
            'The session. This parameter can be of any type of Java object in string representation.',
        },
      },
      required: ['ids', 'newStatus'],
    });
  });

  it('maps Java types to JSON types in the native form, saying what is approximate', () => {
    const mapped = mapFunctionDoc(java, { language: 'java', argumentForm: 'native', languageHint: false });

    expect(mapped.function.parameters.properties).toEqual({
      ids: { type: 'array', description: 'Product ids.', items: { type: 'integer' } },
      newStatus: { type: 'integer', description: 'The status.' },
      ch: { type: 'string', description: 'A letter.', minLength: 1, maxLength: 1 },
      session: { description: 'The session.' },
    });
    expect(mapped.approximations.map((a) => [a.code, a.path])).toEqual([
      ['long_as_integer', 'ids[]'],
      ['char_as_single_character_string', 'ch'],
      ['any_unconstrained', 'session'],
    ]);
  });

  it("folds a JavaScript dict's entries into its description as BFCL does (Python json.dumps)", () => {
    const mapped = mapFunctionDoc(
      {
        name: 'createAuthToken',
        description: 'Makes a token.',
        parameters: {
          type: 'dict',
          properties: {
            options: {
              type: 'dict',
              description: 'Token options.',
              properties: { issuer: { type: '' }, ttl: { type: 'integer', description: 'Seconds, é' } },
            },
          },
          required: ['options'],
        },
      },
      { language: 'javascript' },
    );

    expect(mapped.function.parameters.properties).toEqual({
      options: {
        type: 'string',
        description:
          'Token options. This is JavaScript dict type parameter in string representation. The dictionary entries have the following schema; they are not in string representation. {"issuer": {"type": ""}, "ttl": {"type": "integer", "description": "Seconds, \\u00e9"}}',
      },
    });
  });
});

describe('toolFromFunctionDoc', () => {
  it('builds a tool whose id is the mapped id and whose schema rejects unknown arguments', () => {
    const { tool, mapping } = toolFromFunctionDoc(doc({ base: { type: 'integer' } }, ['base']));

    expect(tool.id).toBe(mapping.toolId);
    const rejected = check(doc({ base: { type: 'integer' } }, ['base']), { base: 1, height: 2 });
    expect(rejected.ok === false && rejected.hint.reason).toBe('invalid_arguments');
  });

  it('refuses a doc without a name', () => {
    expect(() => mapFunctionDoc({ parameters: {} } as unknown as BfclFunctionDoc)).toThrowError(
      BfclMappingError,
    );
  });
});

describe('mapFunctionDoc: field names the boundary refuses (issue 24 item 8)', () => {
  // From JSON, as the data files give it: `__proto__` is an own key, not the prototype.
  const doc = (required: string[]): BfclFunctionDoc =>
    JSON.parse(
      JSON.stringify({
        name: 'set_profile',
        description: 'Sets a profile',
        parameters: { type: 'dict', properties: { name: { type: 'string' } }, required },
      }).replace(
        '"properties":{',
        '"properties":{"__proto__":{"type":"string"},"constructor":{"type":"integer"},',
      ),
    );

  it.each([
    ['not required', [] as string[]],
    ['required', ['__proto__', 'constructor', 'name']],
  ])(
    'a __proto__ or constructor parameter (%s) is left out with a forbidden_field_name finding, not silently',
    (_name, required) => {
      const mapped = mapFunctionDoc(doc(required));
      expect(mapped.fidelity).toBe('approximate');
      expect(mapped.approximations.map((f) => [f.code, f.path])).toEqual([
        ['forbidden_field_name', '__proto__'],
        ['forbidden_field_name', 'constructor'],
      ]);
      expect(Object.keys(mapped.function.parameters.properties as object)).toEqual(['name']);
      expect(mapped.function.parameters.required ?? []).not.toContain('__proto__');
      // The tool builds and takes the other fields.
      const { tool } = toolFromFunctionDoc(doc(required));
      expect(
        prepareToolCall(new ToolCatalog([tool]), { name: tool.id, toolCallId: 'c', input: { name: 'Ada' } })
          .ok,
      ).toBe(true);
    },
  );

  it('in the Java source-text form too', () => {
    const mapped = mapFunctionDoc(doc([]), { language: 'java' });
    expect(mapped.approximations.map((f) => f.code)).toContain('forbidden_field_name');
    expect(Object.keys(mapped.function.parameters.properties as object)).toEqual(['name']);
  });
});
