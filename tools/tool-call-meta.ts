import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/**
 * Explicit per-call metadata, passed to every tool and span, never read from globals
 * (Goa-AI's toolsets guide, docs/sources.md §Names: "ToolCallMeta"; docs/tool-boundary.md §Vocabulary).
 *
 * `toolCallId` is the run's own id for the call (`<runId>:t<turn>:c<n>`): unique per invocation
 * across runs, and the idempotency key: a call in flight when a process crashed runs again after
 * resume with the same id (docs/tool-boundary.md §Vocabulary, docs/durability.md). It is never a planner's id alone: providers reuse theirs
 * (`call_0` in every turn of every run), so the planner's id travels as `providerToolCallId`.
 */
export const ToolCallMetaSchema = lazySchema(() =>
  z.object({
    runId: z.string().min(1),
    sessionId: z.string().optional(),
    turnId: z.string().min(1),
    toolCallId: z.string().min(1),
    /** The id the planner gave the call (a provider's tool-call id), when it gave one. */
    providerToolCallId: z.string().optional(),
    parentToolCallId: z.string().optional(),
    agentId: z.string().min(1),
    /** 1 for the first call of a tool in a repair chain, 2 after one repair, ... */
    attempt: z.number().int().min(1),
  }),
);

/** Per-call metadata passed to every tool (`ctx.meta`): run, session, turn, call ids, parent call, agent, attempt. `toolCallId` is the idempotency key (docs/tool-boundary.md). */
export type ToolCallMeta = z.infer<typeof ToolCallMetaSchema>;
