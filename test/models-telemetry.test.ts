/**
 * modelPlanner's `chat` spans (OTel GenAI conventions): one per model call, a child of the run's
 * `plan` span, with the request and response model, finish reasons and token usage.
 */
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { modelPlanner } from '../models/model-planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';

const { exporter, provider } = inMemoryTracing();

describe('modelPlanner telemetry', () => {
  it('records each model call as a chat span under the plan span, with token usage', async () => {
    const model = new MockLanguageModelV3({
      provider: 'local.chat',
      modelId: 'gemma-3-270m',
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Hello.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 42, noCache: 42, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 3, text: 3, reasoning: undefined },
        },
        response: { id: 'resp-1', modelId: 'gemma-3-270m-q4', timestamp: new Date(0) },
        warnings: [],
      }),
    });
    const runtime = createRuntime({
      agent: { id: 'greeter', name: 'Greeter' },
      planner: modelPlanner({ model, temperature: 0, maxOutputTokens: 64, tracerProvider: provider }),
      telemetry: { tracerProvider: provider },
    });
    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'hi' }] }).result();
    await runtime.close();

    expect(outcome.finalResponse?.text).toBe('Hello.');
    const spans = exporter.getFinishedSpans();
    const chat = spans.find((span) => span.name === 'chat gemma-3-270m');
    const plan = spans.find((span) => span.name === 'plan Greeter');
    expect(chat?.parentSpanContext?.spanId).toBe(plan?.spanContext().spanId);
    expect(chat?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'local.chat',
      'gen_ai.request.model': 'gemma-3-270m',
      'gen_ai.request.temperature': 0,
      'gen_ai.request.max_tokens': 64,
      'gen_ai.response.model': 'gemma-3-270m-q4',
      'gen_ai.response.id': 'resp-1',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 42,
      'gen_ai.usage.output_tokens': 3,
    });
  });
});
