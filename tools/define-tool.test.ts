import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, MAX_TIMEOUT_MS, TOOL_ID_PATTERN, ToolDefinitionError } from './define-tool.ts';

const input = z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) });

describe('defineTool: ids', () => {
  it.each(['crm.upsert_profile', 'a.b', 'billing-v2.refund', 'math.stats.mean', 'A_1.B-2'])(
    'accepts %s',
    (id) => {
      expect(defineTool({ id, description: '', input }).id).toBe(id);
    },
  );

  it.each([
    ['upsert', 'no toolset'],
    ['crm.', 'an empty tool name'],
    ['.upsert', 'an empty toolset'],
    ['a b.c', 'a space'],
    ['crm..upsert', 'an empty segment'],
    ['crm/upsert', 'a slash'],
    ['', 'nothing'],
  ])('rejects %j (%s) with ToolDefinitionError', (id) => {
    expect(() => defineTool({ id, description: '', input })).toThrow(ToolDefinitionError);
    expect(() => defineTool({ id, description: '', input })).toThrow(/must be "<toolset>\.<tool>"/);
    expect(TOOL_ID_PATTERN.test(id)).toBe(false);
  });
});

describe('defineTool: examples', () => {
  it('accepts examples that pass the schema', () => {
    const tool = defineTool({
      id: 'crm.upsert_profile',
      description: '',
      input,
      examples: [
        { email: 'ada@example.com', plan: 'pro' },
        { email: 'bob@example.com', plan: 'free' },
      ],
    });
    expect(tool.examples).toHaveLength(2);
  });

  it('rejects an example that fails the schema, naming its index', () => {
    expect(() =>
      defineTool({
        id: 'crm.upsert_profile',
        description: '',
        input,
        examples: [
          { email: 'ada@example.com', plan: 'pro' },
          { email: 'ada@example.com', plan: 'gold' as 'pro' },
        ],
      }),
    ).toThrow(/^Tool crm\.upsert_profile: examples\[1\] does not pass the input schema/);
  });
});

describe('defineTool: timeoutMs', () => {
  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY, MAX_TIMEOUT_MS + 1])('rejects %s', (timeoutMs) => {
    expect(() => defineTool({ id: 'crm.x', description: '', input, timeoutMs })).toThrow(
      /timeoutMs must be a number of milliseconds/,
    );
  });

  it('accepts the largest delay a timer can hold', () => {
    expect(defineTool({ id: 'crm.x', description: '', input, timeoutMs: MAX_TIMEOUT_MS }).timeoutMs).toBe(
      MAX_TIMEOUT_MS,
    );
  });
});

describe('defineTool: model-facing schema', () => {
  it('derives inputSchema from z.toJSONSchema, with descriptions and enums', () => {
    const tool = defineTool({ id: 'crm.upsert_profile', description: '', input });
    expect(tool.kind).toBe('tool');
    expect(tool.inputSchema).toMatchObject({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', description: 'Customer email' },
        plan: { type: 'string', enum: ['free', 'pro'] },
      },
      required: ['email', 'plan'],
    });
  });

  it('derives outputSchema when an output schema is given', () => {
    const tool = defineTool({
      id: 'crm.upsert_profile',
      description: '',
      input,
      output: z.object({ id: z.string() }),
    });
    expect(tool.outputSchema).toMatchObject({ type: 'object', properties: { id: { type: 'string' } } });
    expect(defineTool({ id: 'crm.other', description: '', input }).outputSchema).toBeUndefined();
  });
});

describe('defineTool: injected fields', () => {
  const noteInput = z.object({ note: z.string(), session_id: z.string() });

  it('removes injected fields from modelInput and inputSchema', () => {
    const tool = defineTool({
      id: 'crm.log_note',
      description: '',
      input: noteInput,
      inject: ['session_id'],
    });
    expect(tool.inputSchema.properties).toEqual({ note: { type: 'string' } });
    expect(tool.inputSchema.required).toEqual(['note']);
    expect(tool.modelInput.safeParse({ note: 'hi' }).success).toBe(true);
    expect(tool.input.safeParse({ note: 'hi' }).success).toBe(false);
  });

  it('rejects an injected field the schema does not declare', () => {
    expect(() =>
      defineTool({ id: 'crm.log_note', description: '', input: noteInput, inject: ['tenant_id'] }),
    ).toThrow('Tool crm.log_note: injected fields not in the input schema: tenant_id');
  });

  it('rejects injection into a non-object input schema', () => {
    expect(() =>
      defineTool({ id: 'crm.log_note', description: '', input: z.string(), inject: ['session_id'] }),
    ).toThrow('Tool crm.log_note: injected fields need an object input schema');
  });

  it('does not mistake an inherited name (toString) for a declared field', () => {
    expect(() =>
      defineTool({ id: 'crm.log_note', description: '', input: noteInput, inject: ['toString'] }),
    ).toThrow(/injected fields not in the input schema: toString/);
  });

  it('accepts examples with or without the injected fields', () => {
    expect(() =>
      defineTool({
        id: 'crm.log_note',
        description: '',
        input: noteInput.strict(),
        inject: ['session_id'],
        examples: [{ note: 'hi' } as z.input<typeof noteInput>, { note: 'hi', session_id: 's-1' }],
      }),
    ).not.toThrow();
  });
});

describe("defineTool: unknownFields 'passthrough'", () => {
  it('loosens a stripping top-level object so unknown keys survive parsing', () => {
    const tool = defineTool({
      id: 'crm.note',
      description: '',
      input: z.object({ text: z.string() }),
      unknownFields: 'passthrough',
    });
    expect(tool.modelInput.parse({ text: 'hi', mood: 'happy' })).toEqual({ text: 'hi', mood: 'happy' });
  });

  it('leaves a strict object strict: the schema author said so explicitly', () => {
    const tool = defineTool({
      id: 'crm.note',
      description: '',
      input: z.object({ text: z.string() }).strict(),
      unknownFields: 'passthrough',
    });
    expect(tool.modelInput.safeParse({ text: 'hi', mood: 'happy' }).success).toBe(false);
  });
});
