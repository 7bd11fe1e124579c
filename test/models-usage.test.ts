/**
 * Issue 24 item 8: a model that reports a NaN (or negative, or infinite) token count failed the
 * run, though its answer was fine. Such a count is unknown: it adds nothing to the run's usage.
 */
import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { modelPlanner } from '../models/model-planner.ts';
import { tokenCount } from '../models/token-usage.ts';
import { testRuntime } from './run-fixtures.ts';

function answering(inputTotal: number, outputTotal: number) {
  const usage = {
    inputTokens: { total: inputTotal, noCache: undefined, cacheRead: Number.NaN, cacheWrite: undefined },
    outputTokens: { total: outputTotal, text: undefined, reasoning: -3 },
  };
  const result: LanguageModelV3GenerateResult = {
    content: [{ type: 'text', text: 'Hello, Ada.' }],
    finishReason: { unified: 'stop', raw: undefined },
    usage,
    warnings: [],
  };
  return new MockLanguageModelV3({
    doGenerate: async () => result,
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          controller.enqueue({ type: 'text-start', id: 't' });
          controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hello, Ada.' });
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.enqueue({ type: 'finish', finishReason: result.finishReason, usage });
          controller.close();
        },
      }),
    }),
  });
}

describe('token usage a model reports', () => {
  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a negative count', -1],
  ])(
    '%s as the input tokens is unknown: the run completes, counting the known output tokens',
    async (_name, bad) => {
      for (const stream of [false, true]) {
        const outcome = await testRuntime({
          planner: modelPlanner({ model: answering(bad, 7), stream }),
        })
          .start({ messages: [{ role: 'user', content: 'Greet Ada' }] })
          .result();
        expect(outcome.error?.message).toBeUndefined();
        expect(outcome.status).toBe('completed');
        expect(outcome.usage).toEqual({ inputTokens: 0, outputTokens: 7, totalTokens: 7 });
      }
    },
  );

  it('a fractional count is rounded, anything but a finite non-negative number is unknown', () => {
    expect(tokenCount(12.6)).toBe(13);
    expect(tokenCount(0)).toBe(0);
    for (const bad of [Number.NaN, -1, Number.NEGATIVE_INFINITY, '12', null, undefined]) {
      expect(tokenCount(bad)).toBeUndefined();
    }
  });
});
