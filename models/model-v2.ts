import type {
  LanguageModelV2,
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';

/**
 * A V2 model (AI SDK 5 providers, still published for many services) as a V3 model, with its
 * answers converted as ai@6 itself converts V2 models: the finish reason becomes `{ unified, raw }`
 * (`unknown` is `other`) and the usage numbers become V3's `{ total, … }` records, in `doGenerate`
 * and in a stream's `finish` part. The calls themselves need no change: V3's call options, prompt
 * and tools are V2's for everything a planner sends (function tools, text, tool calls, JSON and
 * error-text tool results).
 */
export function fromLanguageModelV2(v2: LanguageModelV2): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: v2.provider,
    modelId: v2.modelId,
    supportedUrls: v2.supportedUrls,
    doGenerate: async (options) => {
      const result = await v2.doGenerate(options as never);
      return {
        ...result,
        content: result.content as never,
        finishReason: finishReasonV3(result.finishReason),
        usage: usageV3(result.usage),
        warnings: result.warnings as never,
      };
    },
    doStream: async (options) => {
      const result = await v2.doStream(options as never);
      return {
        ...result,
        stream: result.stream.pipeThrough(
          new TransformStream<unknown, LanguageModelV3StreamPart>({
            transform(part, controller) {
              const chunk = part as {
                type: string;
                finishReason?: LanguageModelV2FinishReason;
                usage?: LanguageModelV2Usage;
              };
              controller.enqueue(
                (chunk.type === 'finish'
                  ? {
                      ...chunk,
                      finishReason: finishReasonV3(chunk.finishReason!),
                      usage: usageV3(chunk.usage!),
                    }
                  : chunk) as LanguageModelV3StreamPart,
              );
            },
          }),
        ),
      };
    },
  };
}

function finishReasonV3(reason: LanguageModelV2FinishReason): LanguageModelV3FinishReason {
  return { unified: reason === 'unknown' ? 'other' : reason, raw: reason };
}

function usageV3(usage: LanguageModelV2Usage): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: usage.inputTokens,
      noCache: undefined,
      cacheRead: usage.cachedInputTokens,
      cacheWrite: undefined,
    },
    outputTokens: { total: usage.outputTokens, text: undefined, reasoning: usage.reasoningTokens },
  };
}
