import type { LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { Caps } from '../run/caps.ts';
import { type FinalizeNotice, finalizeMessage } from '../run/finalize-notice.ts';
import type { Message } from '../run/message.ts';
import { type HintStyle, renderToolError } from './render-hint.ts';

/**
 * The run's transcript as an AI SDK provider prompt (`LanguageModelV3Prompt`): system text first,
 * user text, assistant text with its tool calls, and each tool result paired to its call by the
 * id the model gave it (`providerToolCallId`, else the run's `toolCallId`). A failed call's
 * result is the rendered hint (`render-hint.ts`), sent as `error-text`.
 *
 * On a finalizing turn (`finalize`), the prompt ends with a user message saying that the model
 * must answer now, why, and which calls were not made, with tools by their provider names
 * (run/finalize-notice.ts; issue 24 item 2: the last thing the model read used to be the hint
 * "Call payments__refund again", and it could claim the refund happened).
 */
export function toModelPrompt(
  messages: readonly Message[],
  options: {
    system?: string;
    hints: HintStyle;
    providerName: (id: string) => string;
    finalize?: FinalizeNotice;
    caps?: Partial<Caps>;
  },
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Message[] = [];
  if (options.system) prompt.push({ role: 'system', content: options.system });
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: message.content });
        break;
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
        break;
      case 'assistant': {
        const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
        if (message.content) content.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) {
          content.push({
            type: 'tool-call',
            toolCallId: call.providerToolCallId ?? call.toolCallId,
            toolName: options.providerName(call.toolName),
            input: asJson(call.input),
          });
        }
        if (content.length > 0) prompt.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const content = message.content;
        prompt.push({
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: message.providerToolCallId ?? message.toolCallId,
              toolName: options.providerName(message.toolName),
              output: isFailure(content)
                ? {
                    type: 'error-text',
                    value: renderToolError(content, options.hints, options.providerName),
                  }
                : { type: 'json', value: (content ?? null) as never },
            },
          ],
        });
        break;
      }
    }
  }
  if (options.finalize) {
    const text = finalizeMessage(options.finalize, { caps: options.caps, toolName: options.providerName });
    prompt.push({ role: 'user', content: [{ type: 'text', text }] });
  }
  return prompt;
}

function isFailure(content: unknown): content is Parameters<typeof renderToolError>[0] {
  return (
    content !== null &&
    typeof content === 'object' &&
    'error' in content &&
    typeof (content as { error?: { message?: unknown } }).error?.message === 'string'
  );
}

/** A call's input as the provider re-sends it: the object, or the model's own text parsed when it can be. */
function asJson(input: unknown): unknown {
  if (typeof input !== 'string') return input ?? {};
  try {
    return JSON.parse(input);
  } catch {
    return { $raw: input };
  }
}
