import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  callTool,
  defineTool,
  RetryHintSchema,
  type Tool,
  ToolCatalog,
  ToolError,
  ToolResultJSONSchema,
  toolFromJsonSchema,
  toolResultToJSON,
} from './index.ts';

/**
 * Property: whatever a planner sends (any JSON value, any JS value, any string) the boundary
 * returns a ToolResult for the given toolCallId and never throws; `executed: false` means
 * `execute` did not run, `executed: true` means it ran exactly once.
 */

const calls = new Map<string, number>();
const counted =
  (id: string, result: unknown = { ok: true }) =>
  () => {
    calls.set(id, (calls.get(id) ?? 0) + 1);
    return result;
  };

const tools: Tool[] = [
  defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
    output: z.object({ id: z.string() }),
    examples: [{ email: 'ada@example.com', plan: 'pro' }],
    execute: counted('crm.upsert_profile', { id: 'cus_1' }),
  }),
  defineTool({
    id: 'shop.place_order',
    description: 'Place an order',
    input: z.object({
      address: z.object({ city: z.string(), street: z.string().optional() }).strict(),
      items: z.array(z.object({ sku: z.string(), qty: z.int().min(1) })).min(1),
    }),
    execute: counted('shop.place_order'),
  }),
  defineTool({
    id: 'crm.log_note',
    description: 'Log a note (session_id is injected)',
    input: z.object({ note: z.string(), session_id: z.string() }),
    inject: ['session_id'],
    execute: counted('crm.log_note'),
  }),
  defineTool({
    id: 'util.echo',
    description: 'Echo anything',
    input: z.object({ text: z.string().optional() }),
    unknownFields: 'passthrough',
    execute: counted('util.echo'),
  }),
  toolFromJsonSchema(
    {
      name: 'get_weather',
      description: 'Current weather',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer', minimum: 1, maximum: 7 },
          extra: { type: 'object' },
        },
        required: ['city'],
      },
    },
    { execute: counted('catalog.get_weather') },
  ),
  toolFromJsonSchema(
    {
      name: 'math.mean',
      parameters: { type: 'object', properties: { values: { type: 'array', items: { type: 'number' } } } },
    },
    { execute: counted('math.mean', 0), unknownFields: 'passthrough' },
  ),
];
const catalog = new ToolCatalog(tools);
const meta = { runId: 'run-p', turnId: 'turn-p', toolCallId: 'ignored', agentId: 'prop', attempt: 1 };

const toolName = fc.constantFrom(...catalog.ids, 'crm.upsert_profil', 'get_weather', '', '__proto__');

const hostileKey = fc.oneof(
  fc.string(),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString'),
);

/** JS values beyond JSON: BigInt, boxed values, Map/Set, null prototypes, sparse and typed arrays, Dates. */
const anyValue = fc.anything({
  key: hostileKey,
  withBigInt: true,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  withDate: true,
});

/** Text that is almost JSON: cut-off documents and soups of JSON tokens. */
const jsonishText = fc.oneof(
  fc.json().chain((text) => fc.nat(text.length).map((cut) => text.slice(0, cut))),
  fc
    .array(
      fc.constantFrom(
        '{',
        '}',
        '[',
        ']',
        '"',
        ':',
        ',',
        'null',
        'true',
        '1e309',
        '-',
        '\\',
        '"__proto__"',
        '"city"',
      ),
      { maxLength: 40 },
    )
    .map((tokens) => tokens.join('')),
  fc.json().map((text) => `${text}${text}`),
);

/** Inputs shaped like the tools' arguments, so some calls pass validation and execute. */
const nearlyValid = fc.oneof(
  fc.record(
    {
      email: fc.oneof(fc.constant('ada@example.com'), fc.string()),
      plan: fc.constantFrom('free', 'pro', 'gold'),
      nickname: fc.string(),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    { city: fc.string(), unit: fc.constantFrom('celsius', 'kelvin'), days: fc.integer({ min: -2, max: 9 }) },
    { requiredKeys: ['city'] },
  ),
  fc.record(
    {
      address: fc.record({ city: fc.string(), zip: fc.string() }, { requiredKeys: ['city'] }),
      items: fc.array(fc.record({ sku: fc.string(), qty: fc.integer({ min: 0, max: 3 }) }), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
  fc.record({ note: fc.string(), session_id: fc.string() }, { requiredKeys: ['note'] }),
);

const input = fc.oneof(
  fc.jsonValue(),
  anyValue,
  fc.string(),
  // fast-check 4 replaced fc.fullUnicodeString() with fc.string({ unit: 'binary' }).
  fc.string({ unit: 'binary' }),
  jsonishText,
  fc.jsonValue().map((value) => JSON.stringify(value)),
  nearlyValid,
  nearlyValid.map((value) => JSON.stringify(value)),
);

async function checkOneCall(name: string, toolCallId: string, argumentsValue: unknown) {
  const before = calls.get(name) ?? 0;
  const result = await callTool(catalog, { name, toolCallId, input: argumentsValue }, { meta });
  const ran = (calls.get(name) ?? 0) - before;

  expect(result.toolCallId).toBe(toolCallId);
  expect(typeof result.executed).toBe('boolean');
  expect(ran).toBe(result.executed ? 1 : 0);
  if (result.error) expect(result.error).toBeInstanceOf(ToolError);
  if (!result.executed) expect(result.error).toBeDefined();
  if (result.retryHint) expect(RetryHintSchema.safeParse(result.retryHint).error).toBeUndefined();
  expect(ToolResultJSONSchema.safeParse(JSON.parse(JSON.stringify(toolResultToJSON(result)))).success).toBe(
    true,
  );
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  return result;
}

describe('callTool never throws (property)', () => {
  it('for any tool name, toolCallId and input', async () => {
    await fc.assert(
      fc.asyncProperty(toolName, fc.string(), input, async (name, id, value) => {
        await checkOneCall(name, id, value);
      }),
      { numRuns: 400 },
    );
  });

  it('for arbitrary JSON values and their text, per tool', async () => {
    for (const id of catalog.ids) {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), fc.boolean(), async (value, asText) => {
          await checkOneCall(id, `call-${id}`, asText ? JSON.stringify(value) : value);
        }),
        { numRuns: 100 },
      );
    }
  });

  it('executes the tools for some generated inputs (the property is not vacuous)', async () => {
    let executed = 0;
    await fc.assert(
      fc.asyncProperty(toolName, nearlyValid, async (name, value) => {
        const result = await checkOneCall(name, 'call-x', value);
        if (result.executed) executed++;
      }),
      { numRuns: 300, seed: 42 },
    );
    expect(executed).toBeGreaterThan(0);
  });

  it('keeps Object.prototype clean after prototype-shaped keys in text', async () => {
    await fc.assert(
      fc.asyncProperty(
        toolName,
        fc.constantFrom('__proto__', 'constructor', 'prototype'),
        fc.jsonValue(),
        async (name, key, value) => {
          await checkOneCall(name, 'call-proto', `{"${key}": {"polluted": ${JSON.stringify(value) ?? 1}}}`);
          await checkOneCall(name, 'call-proto', JSON.parse(`{"a": {"${key}": {"polluted": 1}}}`));
        },
      ),
      { numRuns: 100 },
    );
  });
});
