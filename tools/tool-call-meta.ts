import { z } from 'zod';

/**
 * Explicit per-call metadata, passed to every tool and span, never read from globals
 * (seed `toolsets.it-en.md`, "ToolCallMeta"; SPEC §2).
 *
 * `toolCallId` is unique per invocation and doubles as the idempotency key: a call in flight when
 * a process crashed runs again after resume with the same id (SPEC §7).
 */
export const ToolCallMetaSchema = z.object({
  runId: z.string().min(1),
  sessionId: z.string().optional(),
  turnId: z.string().min(1),
  toolCallId: z.string().min(1),
  parentToolCallId: z.string().optional(),
  agentId: z.string().min(1),
  /** 1 for the first call of a tool in a repair chain, 2 after one repair, ... */
  attempt: z.number().int().min(1),
});

export type ToolCallMeta = z.infer<typeof ToolCallMetaSchema>;
