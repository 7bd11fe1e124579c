/**
 * modelPlanner against a real open model over real HTTP (issue 11): Gemma 3 270M behind
 * llama.cpp's OpenAI-compatible server (`bash scripts/llm.sh install && bash scripts/llm.sh
 * start`), reached through `@ai-sdk/openai-compatible` and a recording proxy, so the test reads
 * on the wire what the model was sent. Each test runs with both majors of that provider: 3.x
 * (AI SDK 7, a LanguageModelV4) and 2.x (AI SDK 6, a LanguageModelV3; the devDependency alias
 * `@ai-sdk/openai-compatible-v2`). Skipped with a message without the server on a developer's
 * machine; required under CI=true.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenAICompatible as createOpenAICompatibleV2 } from '@ai-sdk/openai-compatible-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llamaCppFetch } from '../models/llama-cpp-fetch.ts';
import { modelPlanner } from '../models/model-planner.ts';
import { restrictOnInvalidArguments } from '../policies/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { testRuntime } from './run-fixtures.ts';
import { LLM_URL, probeLlmServer } from './support/llm-server.ts';

const SUITE = 'modelPlanner → llama.cpp server (Gemma 3 270M)';
const { available, required } = await probeLlmServer(SUITE);

/** Forwards to the model server and keeps every request body it forwarded. */
let proxy: Server | undefined;
const requests: { messages: { role: string; content?: unknown; tool_call_id?: string }[] }[] = [];
beforeAll(async () => {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST') requests.push(JSON.parse(body.toString('utf8')));
      try {
        const upstream = await fetch(`${LLM_URL}${req.url}`, {
          method: req.method,
          headers: { 'content-type': 'application/json' },
          body: req.method === 'POST' ? body : undefined,
        });
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'application/json',
        });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      } catch (err) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`model server unreachable: ${(err as Error).message}`);
      }
    });
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve())));

/** The provider package of each AI SDK major, and the spec of the models it makes. */
const providers = [
  { major: '@ai-sdk/openai-compatible 3 (AI SDK 7)', spec: 'v4', create: createOpenAICompatible },
  { major: '@ai-sdk/openai-compatible 2 (AI SDK 6)', spec: 'v3', create: createOpenAICompatibleV2 },
] as const;
type Provider = (typeof providers)[number];

const chatModel = (provider: Provider, baseURL: string) => {
  const model = provider
    .create({ name: 'llama-cpp', fetch: llamaCppFetch, baseURL })
    .chatModel('gemma-3-270m');
  expect(model.specificationVersion).toBe(provider.spec);
  return model;
};
const model = (provider: Provider) =>
  chatModel(provider, `http://127.0.0.1:${(proxy!.address() as AddressInfo).port}/v1`);

// A code format the model cannot guess, checked by a refinement the JSON Schema does not carry:
// llama.cpp constrains the model's output by the schema's grammar (and a `pattern` there crashed
// llama-cpp-python 0.3.36's grammar compiler), so only what the schema cannot say is refused.
const lookup = defineTool({
  id: 'orders.lookup',
  description: 'Look up an order by its order code',
  input: z.object({
    code: z
      .string()
      .refine((code) => /^TW-\d{6}$/.test(code), 'An order code looks like TW-123456')
      .describe('Order code'),
  }),
  execute: async ({ code }) => ({ code, status: 'shipped' }),
});

describe.skipIf(!available && !required).each(providers)(`${SUITE} through $major`, (provider) => {
  it('plans a run over real HTTP: the model calls the tool, its refused call comes back with the hint, the run ends', async () => {
    let sawHint = false;
    for (let attempt = 0; attempt < 3 && !sawHint; attempt++) {
      requests.length = 0;
      const run = testRuntime({
        planner: modelPlanner({
          model: model(provider),
          temperature: 0,
          maxOutputTokens: 200,
          system: 'Use the tools to answer.',
        }),
        tools: [lookup],
        policies: [restrictOnInvalidArguments({ maxRetries: 2 })],
        caps: { maxToolCalls: 3, timeBudgetMs: 90_000 },
      }).start({ messages: [{ role: 'user', content: 'What is the status of order 12345?' }] });
      const outcome = await run.result();

      // Whatever the model does, the run ends.
      expect(['completed', 'failed']).toContain(outcome.status);
      expect(requests.length).toBeGreaterThan(0);
      expect(requests[0]?.messages.some((m) => m.role === 'user')).toBe(true);
      const refused = outcome.toolResults.find((result) => result.retryHint?.reason === 'invalid_arguments');
      if (!refused) continue;
      // The hint, rendered for the model, is in the next request on the wire, paired by the model's id.
      const next = requests.find((request) =>
        request.messages.some((m) => m.role === 'tool' && m.tool_call_id === refused.providerToolCallId),
      );
      const toolMessage = next?.messages.find(
        (m) => m.role === 'tool' && m.tool_call_id === refused.providerToolCallId,
      );
      expect(String(toolMessage?.content)).toContain('invalid_arguments');
      expect(String(toolMessage?.content)).toContain('code');
      sawHint = true;
    }
    expect(sawHint).toBe(true);
  }, 240_000);

  it('streams over real HTTP: the text deltas on events$ make up the final answer', async () => {
    // Straight to the server: the recording proxy above buffers whole responses.
    const streaming = chatModel(provider, `${LLM_URL}/v1`);
    const run = testRuntime({
      planner: modelPlanner({ model: streaming, stream: true, temperature: 0, maxOutputTokens: 40 }),
      tools: [],
      caps: { timeBudgetMs: 90_000 },
    }).start({ messages: [{ role: 'user', content: 'Say hello to Ada in one short sentence.' }] });
    const deltas: string[] = [];
    run.events$.subscribe((event) => {
      if (event.type === 'text_delta') deltas.push(event.delta);
    });
    const outcome = await run.result();

    expect(outcome.error?.message).toBeUndefined();
    expect(outcome.status).toBe('completed');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('').trim()).toBe(outcome.finalResponse?.text);
  }, 120_000);
});
