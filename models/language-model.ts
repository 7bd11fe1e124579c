import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import { fromLanguageModelV2 } from './model-v2.ts';
import { fromLanguageModelV4, type LanguageModelV4Like } from './model-v4.ts';

/**
 * A language model of any provider spec the AI SDK majors in use speak: V4 (AI SDK 7 providers,
 * `@ai-sdk/provider` 4), V3 (AI SDK 6 providers, `@ai-sdk/provider` 3) or V2 (AI SDK 5
 * providers, still published for many services). Both `@ai-sdk/provider` 3 and 4 export the V3
 * and V2 types; V4 is {@link LanguageModelV4Like}, which every `LanguageModelV4` is.
 */
export type AnyLanguageModel = LanguageModelV4Like | LanguageModelV3 | LanguageModelV2;

/**
 * The model as a V3 model, the spec the planner is written against: V3 as it is, V4 through
 * {@link fromLanguageModelV4} (`model-v4.ts`), V2 through `fromLanguageModelV2` (`model-v2.ts`,
 * as ai@6 converts V2 models).
 *
 * @throws TypeError when `specificationVersion` is none of `v4`, `v3`, `v2` (e.g. a V1 model of AI
 *   SDK 4, or not a language model at all).
 */
export function asLanguageModelV3(model: AnyLanguageModel): LanguageModelV3 {
  switch (model.specificationVersion) {
    case 'v4':
      return fromLanguageModelV4(model);
    case 'v3':
      return model;
    case 'v2':
      return fromLanguageModelV2(model);
    default:
      throw new TypeError(
        `modelPlanner needs an AI SDK language model of provider spec v4, v3 or v2 (AI SDK 7, 6 or 5); got specificationVersion ${JSON.stringify((model as { specificationVersion?: unknown })?.specificationVersion)}`,
      );
  }
}
