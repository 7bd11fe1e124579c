/** The parts of a run's context (the machine's, sanitized) the page reads. */

/** A call of the batch a run executes or holds for confirmation. */
export interface PendingCall {
  toolCallId: string;
  name?: string;
  input?: unknown;
  preparedInput?: unknown;
}

export interface PageContext {
  batch?: { pending?: PendingCall[] };
  traceContext?: { traceparent?: unknown };
  messages?: { toolCalls?: { toolCallId: string; input?: unknown; args?: unknown }[] }[];
}

/** `context` as the page reads it: `{}` when it is not an object. */
export function contextOf(context: unknown): PageContext {
  return context !== null && typeof context === 'object' ? (context as PageContext) : {};
}
