/**
 * The GenAI metrics toolwarden records with the latest experimental conventions
 * (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`, see `semconv-opt-in.ts`). Names,
 * instruments, units, attributes and bucket advice as semantic-conventions-genai defines them
 * (`model/gen-ai/metrics.yaml`; the usage counters from PR #374, `gen_ai.client.inference.duration`
 * from PR #521; all Development status):
 *
 * | metric | instrument | unit | attributes | recorded |
 * |---|---|---|---|---|
 * | `gen_ai.invoke_agent.duration` | histogram | `s` | `gen_ai.agent.name`, `error.type` | when a run segment ends |
 * | `gen_ai.invoke_agent.inference_calls` | histogram (int) | `{inference_call}` | `gen_ai.agent.name` | when a run segment ends: its model calls |
 * | `gen_ai.invoke_agent.tool_calls` | histogram (int) | `{tool_call}` | `gen_ai.agent.name` | when a run segment ends: its tool calls |
 * | `gen_ai.execute_tool.duration` | histogram | `s` | `gen_ai.tool.name`, `gen_ai.tool.type`, `gen_ai.agent.name`, `error.type` | each call that reached `execute` |
 * | `gen_ai.client.inference.duration` | histogram | `s` | `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`, `error.type` | each model call (`modelPlanner`) |
 * | `gen_ai.client.inference.usage.input_tokens` | counter | `{token}` | as inference + `gen_ai.token.modality` | each model call that reported it |
 * | `gen_ai.client.inference.usage.output_tokens` | counter | `{token}` | as above | as above |
 * | `gen_ai.client.inference.usage.cache_read.input_tokens` | counter | `{token}` | as above | as above |
 * | `gen_ai.client.inference.usage.cache_write.input_tokens` | counter | `{token}` | as above | as above |
 * | `gen_ai.client.inference.usage.reasoning.output_tokens` | counter | `{token}` | as above | as above |
 */
import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import { ValueType } from '../plugins/otel-api.ts';

export const METRIC_GEN_AI_INVOKE_AGENT_DURATION = 'gen_ai.invoke_agent.duration';
export const METRIC_GEN_AI_INVOKE_AGENT_INFERENCE_CALLS = 'gen_ai.invoke_agent.inference_calls';
export const METRIC_GEN_AI_INVOKE_AGENT_TOOL_CALLS = 'gen_ai.invoke_agent.tool_calls';
export const METRIC_GEN_AI_EXECUTE_TOOL_DURATION = 'gen_ai.execute_tool.duration';
export const METRIC_GEN_AI_CLIENT_INFERENCE_DURATION = 'gen_ai.client.inference.duration';
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS = 'gen_ai.client.inference.usage.input_tokens';
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS =
  'gen_ai.client.inference.usage.output_tokens';
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_READ_INPUT_TOKENS =
  'gen_ai.client.inference.usage.cache_read.input_tokens';
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_WRITE_INPUT_TOKENS =
  'gen_ai.client.inference.usage.cache_write.input_tokens';
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_REASONING_OUTPUT_TOKENS =
  'gen_ai.client.inference.usage.reasoning.output_tokens';

/** `gen_ai.invoke_agent.duration` buckets (s). */
export const INVOKE_AGENT_DURATION_BUCKETS_S: readonly number[] = [
  0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6,
];
/** `gen_ai.execute_tool.duration` and `gen_ai.client.inference.duration` buckets (s). */
export const CLIENT_DURATION_BUCKETS_S: readonly number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** Buckets of the per-invocation call counts. */
export const CALL_COUNT_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128];

/** The GenAI instruments of one meter. */
export interface GenAiInstruments {
  invokeAgentDuration: Histogram;
  invokeAgentInferenceCalls: Histogram;
  invokeAgentToolCalls: Histogram;
  executeToolDuration: Histogram;
  inferenceDuration: Histogram;
  inputTokens: Counter;
  outputTokens: Counter;
  cacheReadInputTokens: Counter;
  cacheWriteInputTokens: Counter;
  reasoningOutputTokens: Counter;
}

/** Creates the GenAI instruments on `meter` (cheap; nothing is exported until something is recorded). */
export function createGenAiInstruments(meter: Meter): GenAiInstruments {
  const seconds = (name: string, description: string, buckets: readonly number[]) =>
    meter.createHistogram(name, {
      unit: 's',
      description,
      advice: { explicitBucketBoundaries: [...buckets] },
    });
  const calls = (name: string, unit: string, description: string) =>
    meter.createHistogram(name, {
      unit,
      description,
      valueType: ValueType.INT,
      advice: { explicitBucketBoundaries: [...CALL_COUNT_BUCKETS] },
    });
  const tokens = (name: string, description: string) =>
    meter.createCounter(name, { unit: '{token}', description, valueType: ValueType.INT });
  return {
    invokeAgentDuration: seconds(
      METRIC_GEN_AI_INVOKE_AGENT_DURATION,
      'Duration of GenAI agent invocations (toolwarden: run segments).',
      INVOKE_AGENT_DURATION_BUCKETS_S,
    ),
    invokeAgentInferenceCalls: calls(
      METRIC_GEN_AI_INVOKE_AGENT_INFERENCE_CALLS,
      '{inference_call}',
      'Model calls made by one agent invocation.',
    ),
    invokeAgentToolCalls: calls(
      METRIC_GEN_AI_INVOKE_AGENT_TOOL_CALLS,
      '{tool_call}',
      'Tool calls made by one agent invocation.',
    ),
    executeToolDuration: seconds(
      METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
      'Duration of tool executions.',
      CLIENT_DURATION_BUCKETS_S,
    ),
    inferenceDuration: seconds(
      METRIC_GEN_AI_CLIENT_INFERENCE_DURATION,
      'Duration of model inference calls.',
      CLIENT_DURATION_BUCKETS_S,
    ),
    inputTokens: tokens(METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS, 'Input tokens used.'),
    outputTokens: tokens(METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS, 'Output tokens used.'),
    cacheReadInputTokens: tokens(
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_READ_INPUT_TOKENS,
      'Input tokens served from a provider-managed cache.',
    ),
    cacheWriteInputTokens: tokens(
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_WRITE_INPUT_TOKENS,
      'Input tokens written to a provider-managed cache.',
    ),
    reasoningOutputTokens: tokens(
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_REASONING_OUTPUT_TOKENS,
      'Output tokens used for reasoning.',
    ),
  };
}
