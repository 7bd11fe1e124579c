import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  Root,
} from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_CAPS } from '../run/caps.ts';
import type { Planner } from '../run/planner.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';

/**
 * What the client offers a server besides calling its tools (MCP 2025-11-25 client features,
 * docs/mcp.md §Client features). Each is declared in `initialize` only when given, so a server
 * offers the tools that need it (server-everything registers `get-roots-list`,
 * `trigger-elicitation-request` and `trigger-sampling-request` only for clients that declare
 * `roots`, `elicitation` and `sampling`).
 *
 * The handlers get the ToolCallMeta of the calls in flight on the connection when the server
 * asked: the call that caused the request when there is one (over stdio a server's request names
 * no call, so with several in flight all are given).
 */
export interface McpClientFeatures {
  /** The app's roots (`file://` URIs the server may work in), or a function giving them at each `roots/list`. */
  roots?: readonly Root[] | (() => readonly Root[] | Promise<readonly Root[]>);
  /**
   * Answers a server's `elicitation/create` (a form the user would fill). Return
   * `{ action: 'accept', content }`, `{ action: 'decline' }` or `{ action: 'cancel' }`.
   */
  onElicitation?: (request: ElicitRequestParams, calls: readonly ToolCallMeta[]) => Promise<ElicitResult>;
  /**
   * Answers a server's `sampling/createMessage` (the server asks the client's model for a
   * completion), e.g. with {@link samplingFromPlanner}. A request the handler throws for is
   * declined with the error's message.
   */
  onSampling?: (
    request: CreateMessageRequestParams,
    calls: readonly ToolCallMeta[],
  ) => Promise<CreateMessageResult>;
}

/** The capabilities `initialize` declares for these features. */
export function clientCapabilities(features: McpClientFeatures): ClientCapabilities {
  return {
    ...(features.roots === undefined ? {} : { roots: { listChanged: false } }),
    ...(features.onElicitation === undefined ? {} : { elicitation: { form: {} } }),
    ...(features.onSampling === undefined ? {} : { sampling: {} }),
  };
}

/**
 * Sets the request handlers of the declared features on `client` (before it connects: a server
 * may ask for roots as soon as it is initialized). `inFlight` gives the calls running now.
 */
export async function serveClientFeatures(
  client: Client,
  features: McpClientFeatures,
  inFlight: () => readonly ToolCallMeta[],
): Promise<void> {
  const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = await import(
    '@modelcontextprotocol/sdk/types.js'
  );
  const { roots, onElicitation, onSampling } = features;
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [...(typeof roots === 'function' ? await roots() : roots)],
    }));
  }
  if (onElicitation !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => onElicitation(request.params, inFlight()));
  }
  if (onSampling !== undefined) {
    client.setRequestHandler(CreateMessageRequestSchema, (request) => onSampling(request.params, inFlight()));
  }
}

/**
 * A sampling handler answered by a planner (the run's model planner, e.g. `modelPlanner({ model
 * })`): the server's messages (text parts) and system prompt become one planner turn with no
 * tools, and its final text the answer. A turn that proposes tool calls or awaits is refused
 * (the SDK answers the server with the error).
 */
export function samplingFromPlanner(
  planner: Planner,
  options: { agentId?: string; model?: string } = {},
): NonNullable<McpClientFeatures['onSampling']> {
  let turns = 0;
  return async (request, calls) => {
    const runId = calls[0]?.runId ?? 'mcp-sampling';
    const textOf = (content: unknown): string =>
      (Array.isArray(content) ? content : [content])
        .map((part) =>
          part !== null && typeof part === 'object' && (part as { type?: unknown }).type === 'text'
            ? String((part as { text?: unknown }).text ?? '')
            : '',
        )
        .filter((text) => text !== '')
        .join('\n');
    const plan = await planner.planStart({
      runId,
      turnId: `${runId}:sampling${++turns}`,
      agentId: options.agentId ?? calls[0]?.agentId ?? 'mcp-sampling',
      messages: [
        ...(request.systemPrompt ? [{ role: 'system' as const, content: request.systemPrompt }] : []),
        ...request.messages.map((message) => ({ role: message.role, content: textOf(message.content) })),
      ],
      tools: [],
      // One turn, no tools: the caps a planner reads (retries per tool, what is left) are moot.
      caps: {
        ...DEFAULT_CAPS,
        toolCalls: 0,
        remainingToolCalls: 0,
        consecutiveFailedToolCalls: 0,
        deadlineAt: Date.now() + DEFAULT_CAPS.timeBudgetMs,
      },
      labels: { 'mcp.sampling': 'true' },
    });
    if (plan.finalResponse === undefined) {
      throw new Error('the planner did not answer the sampling request with text');
    }
    return {
      role: 'assistant',
      content: { type: 'text', text: plan.finalResponse.text },
      model: options.model ?? 'toolwarden-planner',
      stopReason: 'endTurn',
    };
  };
}
