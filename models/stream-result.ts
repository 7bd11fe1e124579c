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
 * Characters a streamed answer may carry in all (text, tool-input deltas, tool-call inputs): 8 Mi.
 * A stream past it is canceled and the turn fails (issue 24 item 8: a stream that never ended was
 * buffered to 536 MB, then `RangeError: Invalid string length`).
 */
export const MAX_STREAM_CHARS = 8 * 1024 * 1024;

/** A streamed answer longer than {@link MAX_STREAM_CHARS}: the stream was canceled. */
export class StreamTooLongError extends Error {
  override readonly name = 'StreamTooLongError';
  constructor(readonly maxChars: number) {
    super(`The model's streamed answer passed ${maxChars} characters; the stream was canceled`);
  }
}

/**
 * Reads a `doStream` answer to its end and returns it as `doGenerate` would have (content parts
 * in the order they finished, usage, finish reason, response metadata), reporting text and
 * tool-input deltas to `onDelta` as they arrive. Tool calls, tool results, approval requests,
 * files and sources are kept as content; reasoning and `raw` parts are dropped (a planner turn
 * uses neither).
 *
 * The reader is canceled when `signal` aborts (the run was canceled, the runtime closed, the time
 * budget ran out), when the answer passes `maxChars`, and on any failure: a stream that ignores
 * the request's abort is still never read again (issue 24 item 8: 72k reads in 3 s after
 * `runtime.close()`).
 *
 * @throws the stream's own `error` part's error, or the read's; `signal.reason` once aborted;
 *   {@link StreamTooLongError} past `maxChars`.
 */
export async function collectStream(
  result: LanguageModelV3StreamResult,
  onDelta: (delta: StreamDelta) => void,
  options: { signal?: AbortSignal; maxChars?: number } = {},
): Promise<LanguageModelV3GenerateResult> {
  const { signal } = options;
  const maxChars = options.maxChars ?? MAX_STREAM_CHARS;
  const content: LanguageModelV3Content[] = [];
  const texts = new Map<string, { text: string; index: number }>();
  const toolNames = new Map<string, string>();
  let finish: Extract<LanguageModelV3StreamPart, { type: 'finish' }> | undefined;
  let metadata: { id?: string; modelId?: string; timestamp?: Date } = {};
  let chars = 0;
  const spend = (text: string | undefined) => {
    chars += text?.length ?? 0;
    if (chars > maxChars) throw new StreamTooLongError(maxChars);
  };
  const reader = result.stream.getReader();
  let ended = false;
  // Cancel settles a pending read as done; the loop then throws the abort's reason.
  const onAbort = () => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) throw signal.reason ?? new Error('Aborted');
      const { done, value: part } = await reader.read();
      if (signal?.aborted) throw signal.reason ?? new Error('Aborted');
      if (done) {
        ended = true;
        break;
      }
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
          spend(part.delta);
          entry.text += part.delta;
          content[entry.index] = { type: 'text', text: entry.text };
          if (part.delta) onDelta({ type: 'text', delta: part.delta });
          break;
        }
        case 'tool-input-start':
          toolNames.set(part.id, part.toolName);
          break;
        case 'tool-input-delta':
          spend(part.delta);
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
          spend(part.input);
          content.push(part);
          break;
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
    signal?.removeEventListener('abort', onAbort);
    // Whatever ended the read early (an abort, the cap, an error part, a throwing onDelta), the
    // source is told to stop: it is never pulled again.
    if (!ended) await reader.cancel(signal?.reason).catch(() => {});
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
