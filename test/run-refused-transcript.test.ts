/**
 * Issue 24 item 8: a refused call's raw arguments (5 MB) stayed in the transcript and were sent
 * to the model again every turn (25.6 MB of prompt after five turns). The transcript now keeps a
 * clipped form of a refused call's input (`clippedRefusedInput`); small refused inputs stay as sent.
 */
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { modelPlanner } from '../models/model-planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { testRuntime } from './run-fixtures.ts';

const write = defineTool({
  id: 'notes.write',
  description: 'Writes a note',
  input: z.object({ text: z.string().max(100) }),
  execute: async () => ({ ok: true }),
});
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that calls notes.write with each input in turn, then answers. */
function calling(inputs: string[]) {
  const prompts: LanguageModelV3CallOptions['prompt'][] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options): Promise<LanguageModelV3GenerateResult> => {
      prompts.push(options.prompt);
      const input = inputs[prompts.length - 1];
      return input === undefined
        ? {
            content: [{ type: 'text', text: 'Done.' }],
            finishReason: { unified: 'stop', raw: undefined },
            usage,
            warnings: [],
          }
        : {
            content: [
              { type: 'tool-call', toolCallId: `call_${prompts.length}`, toolName: 'notes__write', input },
            ],
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage,
            warnings: [],
          };
    },
  });
  return { model, prompts };
}

describe('a refused call in the transcript', () => {
  it('5 MB of arguments refused as too large: the transcript and the next prompts keep a few KB of it', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(5 * 1024 * 1024) });
    const { model, prompts } = calling([big, '{"text":"short note"}']);
    const outcome = await testRuntime({ planner: modelPlanner({ model }), tools: [write] })
      .start({ messages: [{ role: 'user', content: 'Write a note' }] })
      .result();

    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.error?.message).toContain('the limit is 1048576 bytes');
    const call = outcome.transcript.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))[0];
    expect(call?.input).toEqual({ $truncated: expect.stringMatching(/^\{"text":"x+…$/), $chars: big.length });
    expect(JSON.stringify(outcome.transcript).length).toBeLessThan(40_000);
    // Turns 2 and 3 were sent a few KB, not 5 MB each.
    for (const prompt of prompts.slice(1)) expect(JSON.stringify(prompt).length).toBeLessThan(40_000);
  });

  it('a small refused input stays as the model sent it', async () => {
    const wrong = JSON.stringify({ text: 'y'.repeat(150) });
    const { model } = calling([wrong, '{"text":"short note"}']);
    const outcome = await testRuntime({ planner: modelPlanner({ model }), tools: [write] })
      .start({ messages: [{ role: 'user', content: 'Write a note' }] })
      .result();

    const call = outcome.transcript.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))[0];
    expect(outcome.toolResults[0]?.retryHint?.reason).toBe('invalid_arguments');
    expect(call?.input).toBe(wrong);
  });
});
