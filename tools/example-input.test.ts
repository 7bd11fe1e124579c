import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { exampleInputFor } from './build-retry-hint.ts';
import { defineTool } from './define-tool.ts';
import { synthesizeExample } from './example-input.ts';
import { toolFromJsonSchema } from './json-schema-tool.ts';

/** The synthesized exampleInput of a tool with this input; it must exist and pass the schema. */
function synthesizedFor(input: z.ZodObject) {
  const example = exampleInputFor(defineTool({ id: 'demo.tool', description: '', input }));
  expect(example).toBeDefined();
  expect(input.safeParse(example).error?.issues ?? []).toEqual([]);
  return example;
}

describe('exampleInputFor: synthesized from the schema, always passing it', () => {
  it('string formats: email, uuid, date, date-time, url, ipv4', () => {
    expect(
      synthesizedFor(
        z.object({
          email: z.email(),
          id: z.uuid(),
          day: z.iso.date(),
          at: z.iso.datetime(),
          site: z.url(),
          ip: z.ipv4(),
        }),
      ),
    ).toEqual({
      email: 'user@example.com',
      id: '00000000-0000-4000-8000-000000000000',
      day: '2024-01-01',
      at: '2024-01-01T00:00:00Z',
      site: 'https://example.com',
      ip: '192.0.2.1',
    });
  });

  it('string lengths: padded to minLength, cut to maxLength', () => {
    const example = synthesizedFor(z.object({ code: z.string().min(12), short: z.string().min(2).max(4) }));
    expect(example).toEqual({ code: 'examplexxxxx', short: 'exam' });
  });

  it('numeric bounds: inclusive, exclusive, negative, fractional, multipleOf', () => {
    const example = synthesizedFor(
      z.object({
        plain: z.number(),
        atLeast: z.number().min(10).max(20),
        above: z.int().gt(100),
        below: z.number().lt(-3),
        between: z.number().gt(0).lt(0.5),
        negative: z.int().min(-10).max(-5),
        step: z.number().multipleOf(7).min(10).max(20),
      }),
    );
    expect(example).toEqual({
      plain: 1,
      atLeast: 10,
      above: 101,
      below: -4,
      between: 0.25,
      negative: -10,
      step: 14,
    });
  });

  it('enums and literals take their first value', () => {
    expect(synthesizedFor(z.object({ plan: z.enum(['free', 'pro']), kind: z.literal('user') }))).toEqual({
      plan: 'free',
      kind: 'user',
    });
  });

  it('nested objects, arrays honouring minItems, tuples, records and booleans', () => {
    const example = synthesizedFor(
      z.object({
        address: z.object({
          city: z.string().min(2),
          zip: z.string().length(4),
          note: z.string().optional(),
        }),
        items: z.array(z.object({ sku: z.string(), qty: z.int().positive() })).min(3),
        point: z.tuple([z.number(), z.number()]),
        labels: z.record(z.string(), z.string()),
        active: z.boolean(),
        nickname: z.string().nullable(),
      }),
    );
    expect(example).toEqual({
      address: { city: 'example', zip: 'exam' },
      items: [
        { sku: 'example', qty: 1 },
        { sku: 'example', qty: 1 },
        { sku: 'example', qty: 1 },
      ],
      point: [1, 1],
      labels: {},
      active: true,
      nickname: 'example',
    });
  });

  it('leaves optional fields out', () => {
    const example = synthesizedFor(
      z.object({ city: z.string(), unit: z.enum(['c', 'f']).optional(), days: z.int().default(3) }),
    );
    expect(example).toEqual({ city: 'example' });
  });

  it('works for JSON Schema tools with formats and bounds', () => {
    const tool = toolFromJsonSchema({
      name: 'crm.invite',
      parameters: {
        type: 'object',
        properties: {
          email: { type: 'string', format: 'email' },
          seats: { type: 'integer', minimum: 5 },
          tags: { type: 'array', items: { type: 'string', minLength: 3 }, minItems: 2 },
        },
        required: ['email', 'seats', 'tags'],
      },
    });
    const example = exampleInputFor(tool);
    expect(example).toEqual({ email: 'user@example.com', seats: 5, tags: ['example', 'example'] });
    expect(tool.modelInput.safeParse(example).success).toBe(true);
  });

  it('gives no example rather than a wrong one when the schema cannot be synthesized (a pattern)', () => {
    const tool = defineTool({
      id: 'crm.lookup',
      description: '',
      input: z.object({ ticket: z.string().regex(/^TCK-\d{6}$/) }),
    });
    expect(exampleInputFor(tool)).toBeUndefined();
  });
});

describe("exampleInputFor: the tool's own examples", () => {
  it('uses the first example', () => {
    const tool = defineTool({
      id: 'crm.upsert_profile',
      description: '',
      input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
      examples: [
        { email: 'ada@example.com', plan: 'pro' },
        { email: 'bob@example.com', plan: 'free' },
      ],
    });
    expect(exampleInputFor(tool)).toEqual({ email: 'ada@example.com', plan: 'pro' });
  });

  it('never shows injected fields to the model, even when the example has them', () => {
    const tool = defineTool({
      id: 'crm.log_note',
      description: '',
      input: z.object({ note: z.string(), session_id: z.string() }).strict(),
      inject: ['session_id'],
      examples: [{ note: 'called back', session_id: 'sess-1' }],
    });
    expect(exampleInputFor(tool)).toEqual({ note: 'called back' });
  });
});

describe('synthesizeExample on raw JSON Schema', () => {
  it('follows local $refs and picks the non-null branch of anyOf', () => {
    const schema = {
      type: 'object',
      properties: {
        owner: { $ref: '#/$defs/person' },
        alias: { anyOf: [{ type: 'null' }, { type: 'string' }] },
      },
      required: ['owner', 'alias'],
      $defs: { person: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    };
    expect(synthesizeExample(schema)).toEqual({ owner: { name: 'example' }, alias: 'example' });
  });

  it('stops on a recursive schema', () => {
    const schema = {
      type: 'object',
      properties: { child: { $ref: '#' } },
      required: ['child'],
    };
    expect(() => synthesizeExample(schema)).not.toThrow();
  });
});
