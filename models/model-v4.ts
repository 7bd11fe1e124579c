import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';

/**
 * An AI SDK 7 language model: `LanguageModelV4` of `@ai-sdk/provider` 4 (every AI SDK 7 provider,
 * `MockLanguageModelV4` of `ai/test`), described by the members the planner relies on. It is written
 * out here rather than imported because an app on AI SDK 6 has `@ai-sdk/provider` 3, which has no
 * V4 types, and toolwarden/models' declarations must load there too; any `LanguageModelV4` is
 * assignable to it, and a V3 or V2 model is not (`specificationVersion`).
 */
export interface LanguageModelV4Like {
  readonly specificationVersion: 'v4';
  /** Provider id, e.g. `openai.chat`. */
  readonly provider: string;
  /** The provider's model id. */
  readonly modelId: string;
  readonly supportedUrls: PromiseLike<Record<string, RegExp[]>> | Record<string, RegExp[]>;
  /** `LanguageModelV4['doGenerate']` (its options and result are V4's). */
  doGenerate(options: never): PromiseLike<{
    content: ReadonlyArray<{ type: string }>;
    finishReason: { unified: string; raw: string | undefined };
    usage: LanguageModelV3Usage;
  }>;
  /** `LanguageModelV4['doStream']`. */
  doStream(options: never): PromiseLike<{ stream: ReadableStream<{ type: string }> }>;
}

/**
 * A V4 model as a V3 model, the spec the planner is written against (V3 and V4 are one
 * protocol for all a planner turn sends and reads):
 *
 * | V4 | V3 |
 * |----|----|
 * | call options | the planner's V3 options as they are: it sends text, tool calls, JSON and error-text tool results, function tools, `toolChoice`, `responseFormat`, all identical in V4 |
 * | `finishReason.unified` `interrupted` (a stream cut without a finish) | `other`, `raw` kept (`interrupted` when the provider gave none) |
 * | `structuredOutputText` (the JSON answer when it differs from the text parts, e.g. drafts before it) | the answer's one text part, so the output schema checks what the provider selected |
 * | file data `{ type: 'data', data }` | `data`; a file given only by URL is dropped |
 * | `custom` and `reasoning-file` content, `ping` stream parts | dropped (no planner reads them) |
 * | text citations, `inputEncoding` of tool-input deltas | dropped; a tool call's final `input` is JSON in both |
 * | usage, tool calls, response metadata | as they are (the same shape) |
 *
 * Provider errors are the provider's own (`APICallError` of `@ai-sdk/provider` 4, recognised by
 * the AI SDK's marker as those of 3 are).
 */
export function fromLanguageModelV4(given: LanguageModelV4Like): LanguageModelV3 {
  const model = given as unknown as LanguageModelV4;
  return {
    specificationVersion: 'v3',
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: async (options) => {
      const result = await model.doGenerate(callOptionsV4(options));
      const { structuredOutputText, ...rest } = result;
      return {
        ...rest,
        content: contentV3(result.content, structuredOutputText),
        finishReason: finishReasonV3(result.finishReason),
        warnings: result.warnings as LanguageModelV3GenerateResult['warnings'],
      };
    },
    doStream: async (options) => {
      const result = await model.doStream(callOptionsV4(options));
      return {
        ...result,
        stream: result.stream.pipeThrough(
          new TransformStream<LanguageModelV4StreamPart, LanguageModelV3StreamPart>({
            transform(part, controller) {
              const converted = streamPartV3(part);
              if (converted) controller.enqueue(converted);
            },
          }),
        ),
      };
    },
  };
}

/** The planner's V3 call is a valid V4 call: it uses no part whose V4 shape differs (files). */
function callOptionsV4(options: LanguageModelV3CallOptions): LanguageModelV4CallOptions {
  return options as unknown as LanguageModelV4CallOptions;
}

function finishReasonV3(reason: LanguageModelV4FinishReason): LanguageModelV3FinishReason {
  if (reason.unified !== 'interrupted') return reason as LanguageModelV3FinishReason;
  return { unified: 'other', raw: reason.raw ?? 'interrupted' };
}

function contentV3(
  content: LanguageModelV4Content[],
  structuredOutputText: string | undefined,
): LanguageModelV3Content[] {
  const parts: LanguageModelV3Content[] = [];
  let selected = structuredOutputText === undefined;
  for (const part of content) {
    if (part.type === 'text' && !selected) {
      // The provider's selection replaces the text parts, where the first of them stood.
      parts.push({ type: 'text', text: structuredOutputText! });
      selected = true;
      continue;
    }
    if (part.type === 'text' && structuredOutputText !== undefined) continue;
    const converted = contentPartV3(part);
    if (converted) parts.push(converted);
  }
  if (!selected) parts.push({ type: 'text', text: structuredOutputText! });
  return parts;
}

function contentPartV3(part: LanguageModelV4Content): LanguageModelV3Content | undefined {
  switch (part.type) {
    case 'custom':
    case 'reasoning-file':
      return undefined;
    case 'text': {
      const { citations: _citations, ...text } = part;
      return text;
    }
    case 'file':
      return part.data.type === 'data'
        ? {
            type: 'file',
            mediaType: part.mediaType,
            data: part.data.data,
            ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
          }
        : undefined;
    default:
      return part as LanguageModelV3Content;
  }
}

function streamPartV3(part: LanguageModelV4StreamPart): LanguageModelV3StreamPart | undefined {
  switch (part.type) {
    case 'ping':
    case 'custom':
    case 'reasoning-file':
      return undefined;
    case 'file': {
      const file = contentPartV3(part);
      return file as LanguageModelV3StreamPart | undefined;
    }
    case 'text-end': {
      const { citations: _citations, ...end } = part;
      return end;
    }
    case 'tool-input-start': {
      const { inputEncoding: _encoding, ...start } = part;
      return start;
    }
    case 'finish':
      return { ...part, finishReason: finishReasonV3(part.finishReason) };
    case 'stream-start':
      return { type: 'stream-start', warnings: part.warnings as never };
    default:
      return part as LanguageModelV3StreamPart;
  }
}
