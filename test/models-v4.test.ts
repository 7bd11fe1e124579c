/**
 * modelPlanner with AI SDK 7 models (issue 39 item 1): provider spec V4, played by ai@7's own
 * `MockLanguageModelV4`, beside the V3 (AI SDK 6) and V2 suites in models-planner.test.ts. Tools,
 * the repair of a refused call, usage, streaming, structured output, abort and provider errors
 * (`APICallError` of `@ai-sdk/provider` 4 and of 3) through the same planner.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { APICallError } from '@ai-sdk/provider';
import { APICallError as APICallErrorV3 } from '@ai-sdk/provider-v3';
import { MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asLanguageModelV3 } from '../models/language-model.ts';
import { ModelPlannerError, modelPlanner } from '../models/model-planner.ts';
import type { LanguageModelV4Like } from '../models/model-v4.ts';
import { restrictOnInvalidArguments } from '../policies/index.ts';
import type { PlanInput } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { reachState, testRuntime } from './run-fixtures.ts';

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  execute: async ({ email, plan }) => ({ id: `cus_${email}`, plan }),
});

/** V4 usage: the same records as V3, with a cache read and reasoning tokens to see them carried. */
const usage = {
  inputTokens: { total: 12, noCache: 8, cacheRead: 4, cacheWrite: undefined },
  outputTokens: { total: 6, text: 4, reasoning: 2 },
};
const answer = (
  content: LanguageModelV4GenerateResult['content'],
  extra: Partial<LanguageModelV4GenerateResult> = {},
): LanguageModelV4GenerateResult => ({
  content,
  finishReason: {
    unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop',
    raw: undefined,
  },
  usage,
  warnings: [],
  ...extra,
});
const toolCall = (input: string, toolCallId = 'call_0') => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName: 'crm__upsert_profile',
  input,
});

function scripted(answers: LanguageModelV4GenerateResult[]) {
  const seen: LanguageModelV4CallOptions[] = [];
  const model = new MockLanguageModelV4({
    provider: 'mock.v4',
    modelId: 'mock-7',
    doGenerate: async (options) => {
      seen.push(options);
      const next = answers.shift();
      if (!next) throw new Error('script exhausted');
      return next;
    },
  });
  return { model, seen };
}

const planInput = (signal?: AbortSignal): PlanInput => ({
  runId: 'r',
  turnId: 'r:t1',
  agentId: 'a',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  caps: {} as never,
  labels: {},
  ...(signal ? { signal } : {}),
});

describe('modelPlanner with an AI SDK 7 (LanguageModelV4) model', () => {
  it('type-checks for V4, V3 and V2 models, and refuses what is not a model', () => {
    const v4: LanguageModelV4 = new MockLanguageModelV4();
    const like: LanguageModelV4Like = v4;
    expect(modelPlanner({ model: v4 }).planStart).toBeTypeOf('function');
    expect(modelPlanner({ model: new MockLanguageModelV3() }).planStart).toBeTypeOf('function');
    // @ts-expect-error a V3 model is not a V4 model: specificationVersion tells them apart.
    const notV4: LanguageModelV4Like = new MockLanguageModelV3();
    void [like, notV4];
    expect(() =>
      // @ts-expect-error an AI SDK 4 (V1) model is none of the specs the planner speaks.
      modelPlanner({ model: { specificationVersion: 'v1', provider: 'old', modelId: 'm' } }),
    ).toThrow(/provider spec v4, v3 or v2 .*got specificationVersion "v1"/);
  });

  it('runs the model’s tool call, repairs it from the hint, ends on its text; usage as V4 reports it', async () => {
    const { model, seen } = scripted([
      answer([toolCall('{"email":"ada@example.com","plan":"PRO"}')]),
      answer([toolCall('{"email":"ada@example.com","plan":"pro"}', 'call_1')]),
      answer([{ type: 'text', text: 'Ada is on pro.' }]),
    ]);
    const outcome = await testRuntime({
      planner: modelPlanner({ model, system: 'You manage CRM profiles.' }),
      tools: [upsert],
      policies: [restrictOnInvalidArguments({ maxRetries: 2 })],
    })
      .start({ messages: [{ role: 'user', content: 'Add ada@example.com as pro' }] })
      .result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('Ada is on pro.');
    expect(outcome.toolResults.map((result) => result.retryHint?.reason ?? 'ok')).toEqual([
      'invalid_arguments',
      'ok',
    ]);
    expect(outcome.toolResults[1]).toMatchObject({
      executed: true,
      result: { id: 'cus_ada@example.com', plan: 'pro' },
    });
    // What the V4 model was sent: function tools under provider-safe names, then only that tool
    // by name after the refusal, with the hint as the tool result paired by the model's call id.
    expect(seen[0]?.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'crm__upsert_profile' }),
    ]);
    expect(seen[0]?.toolChoice).toEqual({ type: 'auto' });
    expect(seen[1]?.toolChoice).toEqual({ type: 'tool', toolName: 'crm__upsert_profile' });
    const hint = seen[1]?.prompt.find((message) => message.role === 'tool')?.content[0];
    expect(hint).toMatchObject({
      type: 'tool-result',
      toolCallId: 'call_0',
      toolName: 'crm__upsert_profile',
    });
    expect(JSON.stringify(hint)).toContain('invalid_arguments');
    // Three calls of 12 in / 6 out, summed on the run.
    expect(outcome.usage).toEqual({ inputTokens: 36, outputTokens: 18, totalTokens: 54 });
  });

  it('stream: V4 parts (pings, citations, text-encoded tool input, custom content) become the same deltas and plan', async () => {
    const turns: LanguageModelV4StreamPart[][] = [
      [
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: 'resp_1', modelId: 'mock-7-0613' },
        { type: 'ping' },
        { type: 'tool-input-start', id: 'call_0', toolName: 'crm__upsert_profile', inputEncoding: 'json' },
        { type: 'tool-input-delta', id: 'call_0', delta: '{"email":"ada@example.com",' },
        { type: 'ping' },
        { type: 'tool-input-delta', id: 'call_0', delta: '"plan":"pro"}' },
        { type: 'tool-input-end', id: 'call_0' },
        { type: 'custom', kind: 'mock.trace' },
        toolCall('{"email":"ada@example.com","plan":"pro"}'),
        { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
      ],
      [
        { type: 'text-start', id: 't0' },
        { type: 'text-delta', id: 't0', delta: 'Ada is ' },
        { type: 'ping' },
        { type: 'text-delta', id: 't0', delta: 'on pro.' },
        {
          type: 'text-end',
          id: 't0',
          citations: [{ type: 'citation', sourceId: 's1', text: 'pro' } as never],
        },
        { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } },
      ],
    ];
    const model = new MockLanguageModelV4({
      doStream: async () => {
        const parts = turns.shift() ?? [];
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      },
    });
    const run = testRuntime({ planner: modelPlanner({ model, stream: true }), tools: [upsert] }).start({
      messages: [{ role: 'user', content: 'Add ada as pro' }],
    });
    const deltas: string[] = [];
    run.events$.subscribe((event) => {
      if (event.type === 'text_delta') deltas.push(`text:${event.delta}`);
      if (event.type === 'tool_call_delta') deltas.push(`${event.tool}:${event.delta}`);
    });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('Ada is on pro.');
    expect(outcome.toolResults[0]).toMatchObject({ executed: true, providerToolCallId: 'call_0' });
    expect(deltas).toEqual([
      'crm.upsert_profile:{"email":"ada@example.com",',
      'crm.upsert_profile:"plan":"pro"}',
      'text:Ada is ',
      'text:on pro.',
    ]);
    expect(outcome.usage).toEqual({ inputTokens: 24, outputTokens: 12, totalTokens: 36 });
  });

  it('output: checks the text the provider selected for structured output (structuredOutputText), and repairs a bad one', async () => {
    const { model, seen } = scripted([
      // Drafts, then the final JSON: V4 names the final one in structuredOutputText.
      answer(
        [
          { type: 'text', text: 'Let me think: {"plan": "free"} no.' },
          { type: 'text', text: '{"plan":"PRO"}' },
        ],
        { structuredOutputText: '{"plan":"PRO"}' },
      ),
      answer(
        [
          { type: 'text', text: 'draft' },
          { type: 'text', text: '{"plan":"pro"}' },
        ],
        {
          structuredOutputText: '{"plan":"pro"}',
        },
      ),
    ]);
    const outcome = await testRuntime({
      planner: modelPlanner({ model, output: z.object({ plan: z.enum(['free', 'pro']) }) }),
    })
      .start({ messages: [{ role: 'user', content: 'Which plan?' }] })
      .result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse).toEqual({ text: '{"plan":"pro"}', data: { plan: 'pro' } });
    // The repair call: JSON response format, no tools, the bad answer and its issue in the prompt.
    expect(seen[1]?.responseFormat).toMatchObject({ type: 'json' });
    expect(seen[1]?.tools).toBeUndefined();
    expect(JSON.stringify(seen[1]?.prompt)).toContain('{\\"plan\\":\\"PRO\\"}');
    expect(JSON.stringify(seen[1]?.prompt)).not.toContain('Let me think');
  });

  it('abort: a canceled run aborts the V4 model’s request', async () => {
    let signal: AbortSignal | undefined;
    const model = new MockLanguageModelV4({
      doGenerate: (options) => {
        signal = options.abortSignal;
        return new Promise((_resolve, reject) =>
          options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason), {
            once: true,
          }),
        );
      },
    });
    const run = testRuntime({ planner: modelPlanner({ model }) }).start({
      messages: [{ role: 'user', content: 'hi' }],
    });
    await reachState(run, 'planning');
    await new Promise((resolve) => setTimeout(resolve, 20));
    run.cancel('user left');
    const outcome = await run.result();

    expect(outcome.status).toBe('canceled');
    expect(signal?.aborted).toBe(true);
  });

  it('abort: a canceled run stops reading a V4 stream that ignores the abort, through the V3 conversion', async () => {
    const source = { pulls: 0, canceled: false };
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>(
          {
            start(controller) {
              controller.enqueue({ type: 'text-start', id: 't' });
            },
            async pull(controller) {
              await new Promise((resolve) => setImmediate(resolve));
              controller.enqueue(
                source.pulls++ % 2 === 0 ? { type: 'ping' } : { type: 'text-delta', id: 't', delta: 'word ' },
              );
            },
            cancel() {
              source.canceled = true;
            },
          },
          { highWaterMark: 0 },
        ),
      }),
    });
    const run = testRuntime({ planner: modelPlanner({ model, stream: true }) }).start({
      messages: [{ role: 'user', content: 'hi' }],
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(source.pulls).toBeGreaterThan(0);
    run.cancel('user left');
    expect((await run.result()).status).toBe('canceled');
    const atCancel = source.pulls;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(source.canceled).toBe(true);
    expect(source.pulls - atCancel).toBeLessThanOrEqual(2);
  });

  for (const [major, ErrorClass] of [
    ['@ai-sdk/provider 4 (AI SDK 7)', APICallError],
    ['@ai-sdk/provider 3 (AI SDK 6)', APICallErrorV3],
  ] as const) {
    it(`maps an APICallError of ${major}: a 429 retried honouring Retry-After, a 400 not retried`, async () => {
      const failure = (statusCode: number) =>
        new ErrorClass({
          message: statusCode === 429 ? 'Too Many Requests' : 'Bad Request',
          url: 'http://127.0.0.1/v1/chat/completions',
          requestBodyValues: {},
          statusCode,
          responseHeaders: { 'retry-after': '0', 'x-request-id': `req_${statusCode}` },
          isRetryable: statusCode === 429,
        });
      let calls = 0;
      const limited = new MockLanguageModelV4({
        provider: 'local',
        modelId: 'gemma',
        doGenerate: async () => {
          calls++;
          if (calls < 3) throw failure(429);
          return answer([{ type: 'text', text: 'ok' }]);
        },
      });
      const plan = await modelPlanner({ model: limited, maxRetries: 2 }).planStart(planInput());
      expect(calls).toBe(3);
      expect(plan.finalResponse?.text).toBe('ok');

      calls = 0;
      const refused = new MockLanguageModelV4({
        provider: 'local',
        modelId: 'gemma',
        doGenerate: async () => {
          calls++;
          throw failure(400);
        },
      });
      const error = await modelPlanner({ model: refused, maxRetries: 2 })
        .planStart(planInput())
        .catch((err: unknown) => err);
      expect(calls).toBe(1);
      expect(error).toBeInstanceOf(ModelPlannerError);
      expect((error as Error).message).toMatch(
        /local model gemma failed after 1 attempt, HTTP 400, request id req_400/,
      );
      expect((error as ModelPlannerError).cause).toBeInstanceOf(ErrorClass);
    });
  }
});

describe('a V4 model read as V3 (models/model-v4.ts)', () => {
  it('keeps tool calls, usage and metadata; drops custom content and URL files; interrupted is other', async () => {
    const model = asLanguageModelV3(
      new MockLanguageModelV4({
        doGenerate: async () =>
          answer(
            [
              { type: 'custom', kind: 'mock.note' },
              { type: 'text', text: 'partial', citations: [] },
              { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0K' } },
              {
                type: 'file',
                mediaType: 'image/png',
                data: { type: 'url', url: new URL('https://x.test/a.png') },
              },
              toolCall('{"email":"ada@example.com"'),
            ],
            {
              finishReason: { unified: 'interrupted', raw: undefined },
              response: { id: 'resp_9', modelId: 'mock-7' },
            },
          ),
      }),
    );
    const result = await model.doGenerate({ prompt: [] });

    expect(model.specificationVersion).toBe('v3');
    expect(result.content).toEqual([
      { type: 'text', text: 'partial' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0K' },
      toolCall('{"email":"ada@example.com"'),
    ]);
    expect(result.finishReason).toEqual({ unified: 'other', raw: 'interrupted' });
    expect(result.usage).toEqual(usage);
    expect(result.response).toEqual({ id: 'resp_9', modelId: 'mock-7' });
  });
});
