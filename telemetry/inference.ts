/**
 * One model call as the GenAI conventions record it, for model clients inside planner turns
 * (`modelPlanner`'s `chat` spans): the usage attributes of the `chat` span and, with the latest
 * conventions (`semconv-opt-in.ts`), the inference metrics of `genai-metrics.ts` and the call's
 * count on its run segment (`gen_ai.invoke_agent.inference_calls`).
 */
import type { Attributes, MeterProvider } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOKEN_MODALITY,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
} from './attributes.ts';
import { instrumentSource } from './metrics.ts';
import { genAiLatestExperimental } from './semconv-opt-in.ts';
import { countInferenceCall } from './span-notes.ts';

/** Token counts of one model call; `undefined` where the provider reported none. */
export interface InferenceUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  reasoningOutputTokens?: number;
}

/** One finished (or failed) model call. */
export interface InferenceRecord {
  operation: string;
  provider: string;
  requestModel: string;
  responseModel?: string;
  durationS: number;
  usage?: InferenceUsage;
  /** Set when the call failed. */
  errorType?: string;
}

/**
 * The `gen_ai.usage.*` attributes of a `chat` span: input and output tokens always; the cache and
 * reasoning breakdown (`cache_read`, `cache_write`, `reasoning`) with the latest conventions only.
 */
export function inferenceUsageAttributes(
  usage: InferenceUsage,
  latest: boolean = genAiLatestExperimental(),
): Attributes {
  const attributes: Attributes = {};
  if (usage.inputTokens !== undefined) attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = usage.inputTokens;
  if (usage.outputTokens !== undefined) attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = usage.outputTokens;
  if (!latest) return attributes;
  if (usage.cacheReadInputTokens !== undefined)
    attributes[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cacheReadInputTokens;
  if (usage.cacheWriteInputTokens !== undefined)
    attributes[ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS] = usage.cacheWriteInputTokens;
  if (usage.reasoningOutputTokens !== undefined)
    attributes[ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = usage.reasoningOutputTokens;
  return attributes;
}

const globalInstruments = instrumentSource();
/** Instruments per explicit provider, created once each. */
const byProvider = new WeakMap<MeterProvider, ReturnType<typeof instrumentSource>>();

function instrumentsOf(provider: MeterProvider | undefined): ReturnType<typeof instrumentSource> {
  if (!provider) return globalInstruments;
  let source = byProvider.get(provider);
  if (!source) {
    source = instrumentSource(provider);
    byProvider.set(provider, source);
  }
  return source;
}

/**
 * Records one model call: counts it on the run segment whose turn made it, and with the latest
 * conventions records `gen_ai.client.inference.duration` and the usage counters on `meterProvider`
 * (default: the global one). Never throws.
 */
export function recordInference(
  call: InferenceRecord,
  options: { meterProvider?: MeterProvider; latest?: boolean } = {},
): void {
  countInferenceCall();
  if (!(options.latest ?? genAiLatestExperimental())) return;
  const instruments = instrumentsOf(options.meterProvider)();
  if (!instruments.recording) return;
  const { genAi } = instruments;
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: call.operation,
    [ATTR_GEN_AI_PROVIDER_NAME]: call.provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: call.requestModel,
  };
  if (call.responseModel !== undefined) attributes[ATTR_GEN_AI_RESPONSE_MODEL] = call.responseModel;
  genAi.inferenceDuration.record(
    call.durationS,
    call.errorType === undefined ? attributes : { ...attributes, [ATTR_ERROR_TYPE]: call.errorType },
  );
  const usage = call.usage;
  if (!usage) return;
  // The providers toolwarden talks to give no per-modality breakdown: the convention's `unknown`.
  const counted = { ...attributes, [ATTR_GEN_AI_TOKEN_MODALITY]: 'unknown' };
  const add = (counter: typeof genAi.inputTokens, value: number | undefined) => {
    if (value !== undefined) counter.add(value, counted);
  };
  add(genAi.inputTokens, usage.inputTokens);
  add(genAi.outputTokens, usage.outputTokens);
  add(genAi.cacheReadInputTokens, usage.cacheReadInputTokens);
  add(genAi.cacheWriteInputTokens, usage.cacheWriteInputTokens);
  add(genAi.reasoningOutputTokens, usage.reasoningOutputTokens);
}
