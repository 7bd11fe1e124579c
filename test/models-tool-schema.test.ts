/**
 * Issue 24 item 9: what a model is sent of a tool. A small model copied `$schema` and zod's
 * safe-integer bounds into its arguments (`"snp_id": "https://json-schema.org/draft/2020-12/schema"`,
 * `initial_value: 9007199254740991`). The exact schema each provider path sends is checked here:
 * an AI SDK 6 (V3) provider, an AI SDK 5 (V2) provider, and the OpenAI-compatible provider over
 * HTTP as it reaches llama.cpp's server (the request body on the wire).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV2, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { zodSchema } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llamaCppFetch } from '../models/llama-cpp-fetch.ts';
import { modelPlanner } from '../models/model-planner.ts';
import { modelToolSchema } from '../models/model-tool-schema.ts';
import { defineTool } from '../tools/define-tool.ts';
import { toolFromJsonSchema } from '../tools/json-schema-tool.ts';
import { testRuntime } from './run-fixtures.ts';

const input = z.object({
  snp_id: z.string().describe('The SNP id, e.g. rs123'),
  initial_value: z.int().describe('Starting amount'),
  years: z.int().min(1).max(100).optional(),
  rate: z.number().min(0),
  pair: z.tuple([z.string(), z.int()]).optional(),
  where: z.object({ city: z.string() }).meta({ id: 'Place' }).optional(),
});
const growth = defineTool({
  id: 'finance.growth',
  description: 'Projects growth',
  input,
  execute: async () => ({ ok: true }),
});

/** What the model must get: exactly this. */
const expected = {
  type: 'object',
  properties: {
    snp_id: { type: 'string', description: 'The SNP id, e.g. rs123' },
    initial_value: { type: 'integer', description: 'Starting amount' },
    years: { type: 'integer', minimum: 1, maximum: 100 },
    rate: { type: 'number', minimum: 0 },
    pair: {
      type: 'array',
      items: [{ type: 'string' }, { type: 'integer' }],
      additionalItems: false,
      minItems: 2,
      maxItems: 2,
    },
    where: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
  required: ['snp_id', 'initial_value', 'rate'],
  additionalProperties: false,
};

/** The AI SDK's `zodSchema` output without `$schema` and zod's safe-integer bounds (an independent reading). */
function aiSdkShape(schema: z.ZodType): unknown {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(
          ([key, value]) =>
            key !== '$schema' &&
            !(
              (key === 'minimum' || key === 'maximum') &&
              Math.abs(value as number) === Number.MAX_SAFE_INTEGER
            ),
        )
        .map(([key, value]) => [key, strip(value)]),
    );
  };
  return strip(zodSchema(schema).jsonSchema);
}

function recordingModel() {
  const seen: LanguageModelV3CallOptions[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options);
      return {
        content: [{ type: 'text', text: 'Done.' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
  return { model, seen };
}

const ask = { messages: [{ role: 'user' as const, content: 'Project 1000 at 5% for 10 years' }] };

describe('the JSON Schema a model is sent for a tool', () => {
  it('has no $schema, no safe-integer bounds, no $defs: the shape of the AI SDK’s zodSchema', () => {
    const sent = modelToolSchema(growth.inputSchema);
    expect(sent).toEqual(expected);
    // Field for field what the AI SDK's zodSchema writes, less `$schema` and the safe-integer
    // bounds; a schema registered with an id (`where`) is inlined, where zodSchema keeps a
    // `$ref` into `definitions`.
    const { where: _where, ...shared } = expected.properties;
    const plain = defineTool({ id: 'finance.plain', description: 'd', input: input.omit({ where: true }) });
    expect(modelToolSchema(plain.inputSchema)).toEqual({ ...expected, properties: shared });
    expect(modelToolSchema(plain.inputSchema)).toEqual(aiSdkShape(input.omit({ where: true })));
    // The tool's own schema (hints, the catalog export) is unchanged.
    expect(growth.inputSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('keeps a recursive schema as a reference under definitions, zod’s __schemaN name made plain', () => {
    const Tree: z.ZodType = z.lazy(() => z.object({ value: z.int(), children: z.array(Tree) }));
    const tool = defineTool({ id: 'data.tree', description: 'A tree', input: z.object({ tree: Tree }) });
    const sent = modelToolSchema(tool.inputSchema);
    expect(sent).toEqual({
      type: 'object',
      properties: { tree: { $ref: '#/definitions/schema0' } },
      required: ['tree'],
      additionalProperties: false,
      definitions: {
        schema0: {
          type: 'object',
          properties: {
            value: { type: 'integer' },
            children: { type: 'array', items: { $ref: '#/definitions/schema0' } },
          },
          required: ['value', 'children'],
          additionalProperties: false,
        },
      },
    });
  });

  it('an AI SDK 6 (V3) provider gets exactly that schema', async () => {
    const { model, seen } = recordingModel();
    await testRuntime({ planner: modelPlanner({ model }), tools: [growth] })
      .start(ask)
      .result();
    expect(seen[0]?.tools).toEqual([
      { type: 'function', name: 'finance__growth', description: 'Projects growth', inputSchema: expected },
    ]);
  });

  it('an AI SDK 5 (V2) provider gets exactly that schema', async () => {
    const { model: v3, seen } = recordingModel();
    const v2 = {
      specificationVersion: 'v2',
      provider: 'mock',
      modelId: 'mock-v2',
      supportedUrls: {},
      doGenerate: async (options: unknown) => {
        await v3.doGenerate(options as LanguageModelV3CallOptions);
        return {
          content: [{ type: 'text', text: 'Done.' }],
          finishReason: 'stop',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
          warnings: [],
        };
      },
      doStream: async () => {
        throw new Error('not used');
      },
    } as unknown as LanguageModelV2;
    await testRuntime({ planner: modelPlanner({ model: v2 }), tools: [growth] })
      .start(ask)
      .result();
    expect(seen[0]?.tools?.[0]).toMatchObject({ name: 'finance__growth', inputSchema: expected });
  });

  it('a BFCL-style JSON Schema tool is sent clean too', async () => {
    const bfcl = toolFromJsonSchema({
      name: 'calculate_area',
      description: 'Area of a triangle',
      parameters: {
        type: 'object',
        properties: { base: { type: 'integer', description: 'The base' }, unit: { type: 'string' } },
        required: ['base'],
      },
    });
    expect(modelToolSchema(bfcl.inputSchema)).toEqual({
      type: 'object',
      properties: { base: { type: 'integer', description: 'The base' }, unit: { type: 'string' } },
      required: ['base'],
      additionalProperties: false,
    });
  });
});

describe('the OpenAI-compatible provider as it reaches llama.cpp’s server', () => {
  let server: Server;
  const bodies: { tools?: { type: string; function: { name: string; parameters: unknown } }[] }[] = [];
  beforeAll(async () => {
    // A stand-in for the server's /v1/chat/completions: records the body, answers with text.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 0,
            model: 'gemma-3-270m',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends exactly that schema as the function’s parameters on the wire', async () => {
    const model = createOpenAICompatible({
      name: 'llama-cpp',
      fetch: llamaCppFetch,
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    }).chatModel('gemma-3-270m');
    const outcome = await testRuntime({ planner: modelPlanner({ model }), tools: [growth] })
      .start(ask)
      .result();

    expect(outcome.status).toBe('completed');
    expect(bodies[0]?.tools).toEqual([
      {
        type: 'function',
        function: { name: 'finance__growth', description: 'Projects growth', parameters: expected },
      },
    ]);
    const wire = JSON.stringify(bodies[0]);
    expect(wire).not.toContain('$schema');
    expect(wire).not.toContain('9007199254740991');
  });
});
