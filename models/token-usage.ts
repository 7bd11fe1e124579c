import type { LanguageModelV3GenerateResult, LanguageModelV3Usage } from '@ai-sdk/provider';

/**
 * A model answer with its token counts made trustworthy: a count that is not a finite,
 * non-negative number (NaN, Infinity, -1, a string a proxy passed through) is unknown
 * (`undefined`), as if the provider had not reported it; a fraction is rounded. Issue 24 item 8:
 * a NaN usage failed the run (`PlanResult.usage` must be whole numbers), though the answer was fine.
 * Unknown counts add nothing to the run's usage and are left off spans.
 */
export function withKnownUsage(result: LanguageModelV3GenerateResult): LanguageModelV3GenerateResult {
  const usage = result.usage as Partial<LanguageModelV3Usage> | undefined;
  const input = usage?.inputTokens;
  const output = usage?.outputTokens;
  return {
    ...result,
    usage: {
      inputTokens: {
        total: tokenCount(input?.total),
        noCache: tokenCount(input?.noCache),
        cacheRead: tokenCount(input?.cacheRead),
        cacheWrite: tokenCount(input?.cacheWrite),
      },
      outputTokens: {
        total: tokenCount(output?.total),
        text: tokenCount(output?.text),
        reasoning: tokenCount(output?.reasoning),
      },
      ...(usage?.raw === undefined ? {} : { raw: usage.raw }),
    },
  };
}

/** A token count, or `undefined` when the value is not a finite, non-negative number. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}
