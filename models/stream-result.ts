import type {
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';

/** A delta of a streamed answer, as the stream named it (provider tool names, not tool ids). */
export type StreamDelta =
  | { type: 'text'; delta: string }
  | { type: 'tool-input'; toolCallId: string; toolName: string; delta: string };

/**
 * Reads a `doStream` answer to its end and returns it as `doGenerate` would have (content parts
 * in the order they finished, usage, finish reason, response metadata), reporting text and
 * tool-input deltas to `onDelta` as they arrive. Tool calls, tool results, approval requests,
 * files and sources are kept as content; reasoning and `raw` parts are dropped (a planner turn
 * uses neither).
 *
 * @throws the stream's own `error` part's error, or the read's.
 */
export async function collectStream(
  result: LanguageModelV3StreamResult,
  onDelta: (delta: StreamDelta) => void,
): Promise<LanguageModelV3GenerateResult> {
  const content: LanguageModelV3Content[] = [];
  const texts = new Map<string, { text: string; index: number }>();
  const toolNames = new Map<string, string>();
  let finish: Extract<LanguageModelV3StreamPart, { type: 'finish' }> | undefined;
  let metadata: { id?: string; modelId?: string; timestamp?: Date } = {};
  const reader = result.stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case 'text-start':
          texts.set(part.id, { text: '', index: content.push({ type: 'text', text: '' }) - 1 });
          break;
        case 'text-delta': {
          let entry = texts.get(part.id);
          if (!entry) {
            entry = { text: '', index: content.push({ type: 'text', text: '' }) - 1 };
            texts.set(part.id, entry);
          }
          entry.text += part.delta;
          content[entry.index] = { type: 'text', text: entry.text };
          if (part.delta) onDelta({ type: 'text', delta: part.delta });
          break;
        }
        case 'tool-input-start':
          toolNames.set(part.id, part.toolName);
          break;
        case 'tool-input-delta':
          if (part.delta) {
            onDelta({
              type: 'tool-input',
              toolCallId: part.id,
              toolName: toolNames.get(part.id) ?? '',
              delta: part.delta,
            });
          }
          break;
        case 'tool-call':
        case 'tool-result':
        case 'tool-approval-request':
        case 'file':
        case 'source':
          content.push(part);
          break;
        case 'response-metadata':
          metadata = { id: part.id, modelId: part.modelId, timestamp: part.timestamp };
          break;
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw part.error;
        default:
          break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  return {
    content: content.filter((part) => part.type !== 'text' || part.text !== ''),
    finishReason: finish?.finishReason ?? { unified: 'other', raw: undefined },
    usage: finish?.usage ?? {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    },
    warnings: [],
    response: metadata,
  };
}
