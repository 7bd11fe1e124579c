import { z } from 'zod';
import { lazySchema } from '../tools/lazy-schema.ts';
import { RetryHintSchema } from '../tools/retry-hint.ts';
import { ToolErrorJSONSchema } from '../tools/tool-error.ts';

/**
 * One transcript message, in the shape LLM providers expect (OpenAI chat, AI SDK
 * `ModelMessage`): user and system text, assistant text and/or tool calls, and tool results keyed
 * by `toolCallId`. `toolCallId` is the run's own id for a call (`<turnId>:c<n>`, unique across
 * runs, the idempotency key); `providerToolCallId` is the id the planner gave it (a model's
 * `call_0`), which a model adapter sends back so the model sees its calls paired. A failed call's `content` is `{ error, retryHint }` (docs/sources.md §Test plan: the tool
 * message carries the serialized ToolError).
 */
export const MessageSchema = lazySchema(() =>
  z.discriminatedUnion('role', [
    z.object({ role: z.literal('system'), content: z.string() }),
    z.object({ role: z.literal('user'), content: z.string() }),
    z.object({
      role: z.literal('assistant'),
      content: z.string().optional(),
      toolCalls: z
        .array(
          z.object({
            toolCallId: z.string(),
            providerToolCallId: z.string().optional(),
            toolName: z.string(),
            input: z.unknown(),
          }),
        )
        .optional(),
    }),
    z.object({
      role: z.literal('tool'),
      toolCallId: z.string(),
      providerToolCallId: z.string().optional(),
      toolName: z.string(),
      content: z.unknown(),
    }),
  ]),
);
/** One transcript message (system, user, assistant with optional tool calls, tool result); see {@link MessageSchema}. */
export type Message = z.infer<typeof MessageSchema>;

/** The `content` of a tool message for a failed call. */
export const ToolErrorContentSchema = lazySchema(() =>
  z.object({
    error: ToolErrorJSONSchema,
    retryHint: RetryHintSchema.optional(),
  }),
);
