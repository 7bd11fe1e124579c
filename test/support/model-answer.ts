import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';

/** The usage every scripted model answer reports (10 in, 5 out). */
export const answerUsage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model's answer (AI SDK provider V3) with `content`: `tool-calls` when it calls a tool, else `stop`. */
export const modelAnswer = (
  content: LanguageModelV3GenerateResult['content'],
): LanguageModelV3GenerateResult => ({
  content,
  finishReason: {
    unified: content.some((c) => c.type === 'tool-call') ? 'tool-calls' : 'stop',
    raw: undefined,
  },
  usage: answerUsage,
  warnings: [],
});
