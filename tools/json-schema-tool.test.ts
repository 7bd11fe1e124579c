import { describe, expect, it } from 'vitest';
import { prepareToolCall } from './call-tool.ts';
import { ToolDefinitionError } from './define-tool.ts';
import { toolFromJsonSchema } from './json-schema-tool.ts';
import { ToolCatalog } from './tool-catalog.ts';

const weather = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    },
    required: ['city'],
  },
};

function prepare(tool: ReturnType<typeof toolFromJsonSchema>, input: unknown) {
  return prepareToolCall(new ToolCatalog([tool]), { name: tool.id, toolCallId: 'call-1', input });
}

describe('toolFromJsonSchema: ids', () => {
  it('prefixes a bare name with the toolset (default "catalog")', () => {
    expect(toolFromJsonSchema(weather).id).toBe('catalog.get_weather');
    expect(toolFromJsonSchema(weather, { toolset: 'wx' }).id).toBe('wx.get_weather');
  });

  it('keeps a name that already has the toolset.tool form', () => {
    expect(toolFromJsonSchema({ ...weather, name: 'math.factorial' }).id).toBe('math.factorial');
  });

  it('rejects a name that cannot become an id', () => {
    expect(() => toolFromJsonSchema({ ...weather, name: 'get weather' })).toThrow(ToolDefinitionError);
  });

  it('carries the description and options such as timeoutMs and tags', () => {
    const tool = toolFromJsonSchema(weather, { timeoutMs: 5_000, tags: ['read'] });
    expect(tool).toMatchObject({
      description: 'Current weather for a city',
      timeoutMs: 5_000,
      tags: ['read'],
    });
  });

  it('takes a declaration without parameters as a tool without arguments', () => {
    const tool = toolFromJsonSchema({ name: 'clock.now' });
    expect(prepare(tool, {})).toMatchObject({ ok: true, input: {} });
    expect(prepare(tool, { tz: 'UTC' }).ok).toBe(false);
  });
});

describe('toolFromJsonSchema: validation', () => {
  it('validates types, enums and bounds from the JSON Schema', () => {
    const tool = toolFromJsonSchema(weather);
    expect(prepare(tool, { city: 'Oslo', unit: 'fahrenheit', days: 3 })).toMatchObject({
      ok: true,
      input: { city: 'Oslo', unit: 'fahrenheit', days: 3 },
    });
    const bad = prepare(tool, { city: 'Oslo', unit: 'kelvin', days: 9 });
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.result.retryHint?.issues?.map((issue) => [issue.path, issue.constraint])).toEqual([
      ['unit', 'invalid_value'],
      ['days', 'too_big'],
    ]);
  });

  it('reports an absent required field as missing_fields', () => {
    const bad = prepare(toolFromJsonSchema(weather), { unit: 'celsius' });
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.result.retryHint).toMatchObject({ reason: 'missing_fields', missingFields: ['city'] });
    expect(bad.result.retryHint?.clarifyingQuestion).toBe(
      'I need more information to run catalog.get_weather. Please provide: city (City name).',
    );
  });

  it('reports an absent required field with no type ({}) as missing too', () => {
    const tool = toolFromJsonSchema({
      name: 'ml.train',
      parameters: {
        type: 'object',
        properties: { data: {}, epochs: { type: 'integer' } },
        required: ['data'],
      },
    });
    const bad = prepare(tool, { epochs: 3 });
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.result.retryHint?.missingFields).toEqual(['data']);
    expect(prepare(tool, { data: [[1, 2]] }).ok).toBe(true);
  });

  it('treats a required field with a default as optional, filling the default (zod’s reading)', () => {
    const tool = toolFromJsonSchema({
      name: 'paint.estimate',
      parameters: {
        type: 'object',
        properties: { area: { type: 'integer' }, coverage: { type: 'integer', default: 350 } },
        required: ['area', 'coverage'],
      },
    });
    expect(tool.inputSchema.required).toEqual(['area']);
    expect(prepare(tool, { area: 20 })).toMatchObject({ ok: true, input: { area: 20, coverage: 350 } });
  });

  it('reports an unknown field with the allowed fields', () => {
    const bad = prepare(toolFromJsonSchema(weather), { city: 'Oslo', country: 'NO' });
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.result.retryHint?.issues).toEqual([
      expect.objectContaining({
        path: 'country',
        constraint: 'unknown_field',
        allowed: ['city', 'unit', 'days'],
      }),
    ]);
  });

  it('closes nested objects that declare properties', () => {
    const tool = toolFromJsonSchema({
      name: 'crm.update',
      parameters: {
        type: 'object',
        properties: {
          info: { type: 'object', properties: { name: { type: 'string' } } },
          rows: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
        },
      },
    });
    const bad = prepare(tool, { info: { name: 'Ada', age: 36 }, rows: [{ id: 1, extra: true }] });
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.result.retryHint?.issues?.map((issue) => issue.path)).toEqual(['info.age', 'rows.0.extra']);
  });

  it('keeps an object without properties open: it is a free-form map', () => {
    const tool = toolFromJsonSchema({
      name: 'poker.winner',
      parameters: {
        type: 'object',
        properties: { cards: { type: 'object', description: 'Player name → cards' } },
        required: ['cards'],
      },
    });
    expect(prepare(tool, { cards: { Alex: ['A of spades'], Sam: ['2 of clubs'] } })).toMatchObject({
      ok: true,
      input: { cards: { Alex: ['A of spades'], Sam: ['2 of clubs'] } },
    });
  });

  it('respects an explicit additionalProperties', () => {
    const tool = toolFromJsonSchema({
      name: 'kv.set',
      parameters: {
        type: 'object',
        properties: { key: { type: 'string' } },
        additionalProperties: { type: 'number' },
      },
    });
    expect(prepare(tool, { key: 'a', weight: 2 }).ok).toBe(true);
    expect(prepare(tool, { key: 'a', weight: 'heavy' }).ok).toBe(false);
  });

  it('leaves data keywords alone: a default that looks like a schema is not rewritten', () => {
    const filter = { type: 'object', properties: { plan: { type: 'string' } } };
    const tool = toolFromJsonSchema({
      name: 'crm.find',
      parameters: {
        type: 'object',
        properties: { filter: { type: 'object', default: filter } },
      },
    });
    const properties = tool.inputSchema.properties as Record<string, { default?: unknown }>;
    expect(properties.filter?.default).toEqual(filter);
  });

  it('keeps a property named like a keyword ("type", "properties") as a field', () => {
    const tool = toolFromJsonSchema({
      name: 'paint.area',
      parameters: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          properties: { type: 'integer' },
        },
        required: ['type'],
      },
    });
    expect(prepare(tool, { type: 'window', properties: 2 })).toMatchObject({ ok: true });
    expect(prepare(tool, { type: 'window', colour: 'red' }).ok).toBe(false);
  });

  it("with unknownFields: 'passthrough' leaves objects open", () => {
    const tool = toolFromJsonSchema(weather, { unknownFields: 'passthrough' });
    expect(prepare(tool, { city: 'Oslo', country: 'NO' })).toMatchObject({
      ok: true,
      input: { city: 'Oslo', country: 'NO' },
    });
  });

  it('wraps a schema zod cannot read in ToolDefinitionError', () => {
    expect(() =>
      toolFromJsonSchema({
        name: 'x.y',
        parameters: { type: 'object', properties: { a: { $ref: '#/nowhere' } } },
      }),
    ).toThrow(ToolDefinitionError);
  });
});

describe('toolFromJsonSchema on hostile schemas (issue 25 item 6)', () => {
  const check = (tool: ReturnType<typeof toolFromJsonSchema>, input: unknown) =>
    prepareToolCall(new ToolCatalog([tool]), { name: tool.id, toolCallId: 'r:t1:c1', input });

  it('runs the classic catastrophic patterns in linear time, and still enforces them', () => {
    const patterns = ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '^(\\w+\\s?)*$', '(x+x+)+y'];
    const started = performance.now();
    for (const pattern of patterns) {
      const tool = toolFromJsonSchema({
        name: 'evil.match',
        parameters: { type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'] },
      });
      const evil = pattern.includes('x') ? 'x'.repeat(5_000) : `${'a'.repeat(5_000)}!`;
      expect(check(tool, { s: evil }).ok).toBe(false);
    }
    expect(performance.now() - started).toBeLessThan(2_000); // native: ^(a+)+$ on 34 a's alone took 135 s
    const ok = toolFromJsonSchema({
      name: 'evil.ok',
      parameters: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
    });
    expect(check(ok, { s: 'aaaa' }).ok).toBe(true);
  });

  it('does not enforce, and says so, a pattern no linear-time engine can run', () => {
    const warned: string[] = [];
    const tool = toolFromJsonSchema(
      {
        name: 'evil.backref',
        parameters: { type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } },
      },
      { onWarning: (message) => warned.push(message) },
    );
    expect(warned.join()).toMatch(
      /patterns a linear-time engine cannot run are not checked here.*\^\(a\)\\\\1\$/,
    );
    expect(check(tool, { s: 'zz' }).ok).toBe(true);
  });

  it('refuses a schema over the size budget, and a $ref cycle that consumes no input, naming why', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 6_000 }, (_, i) => [`f${i}`, { type: 'string', description: 'x'.repeat(40) }]),
    );
    expect(() =>
      toolFromJsonSchema({ name: 'big.wide', parameters: { type: 'object', properties: wide } }),
    ).toThrow(/characters of JSON \(budget 262144\)/);
    expect(() =>
      toolFromJsonSchema({
        name: 'loop.all',
        parameters: {
          type: 'object',
          properties: { x: { $ref: '#/$defs/A' } },
          $defs: { A: { allOf: [{ $ref: '#/$defs/A' }] } },
        },
      }),
    ).toThrow(/cycle that consumes no input \(#\/\$defs\/A → #\/\$defs\/A\)/);
    // Recursion through a property consumes input: allowed.
    const tree = toolFromJsonSchema({
      name: 'ok.tree',
      parameters: { type: 'object', properties: { child: { $ref: '#' }, v: { type: 'string' } } },
    });
    expect(check(tree, { v: 'a', child: { v: 'b' } }).ok).toBe(true);
  });
});
