import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import type { Tool } from '../tools/define-tool.ts';
import { toolSegment } from './mcp-names.ts';

/**
 * A server's `tools/list`, read (issue 25 item 6, docs/mcp.md §Hostile schemas): every page up to
 * the limits, each entry read on its own so one malformed entry never refuses the page.
 *
 * @module
 */

/** A `tools/list` page as read before each tool is checked on its own: one malformed entry must not refuse the page. */
const ToolListPageSchema = z.looseObject({
  tools: z.array(z.unknown()).optional(),
  nextCursor: z.string().optional(),
});

/** Lets other work run between tools while a listing is converted (each conversion is bounded, their sum is not). */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One listed tool as far as it could be read (see {@link readDefinition}). */
export interface McpToolDefinition {
  name: string;
  /** MCP `execution.taskSupport`: `required` tools are called as Tasks; `optional` and `forbidden` ones directly. */
  taskSupport?: 'required' | 'optional' | 'forbidden';
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/**
 * The entries of every `tools/list` page, up to `maxPages` pages and `maxTools` entries; a
 * server past either is cut off with a warning naming it.
 */
export async function listToolEntries(
  client: Client,
  server: string,
  limits: { maxTools: number; maxPages: number },
  warning: (message: string) => void,
): Promise<unknown[]> {
  const { maxTools, maxPages } = limits;
  const definitions: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= maxPages) {
      warning(`server "${server}" kept paging tools/list; read the first ${maxPages} pages`);
      break;
    }
    const result = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      ToolListPageSchema,
    );
    const listed = result.tools ?? [];
    const room = maxTools - definitions.length;
    definitions.push(...listed.slice(0, room));
    cursor = result.nextCursor;
    if (listed.length > room || (cursor !== undefined && definitions.length >= maxTools)) {
      warning(`server "${server}" lists more than ${maxTools} tools; kept the first ${maxTools}`);
      break;
    }
    if (cursor === undefined) break;
  }
  return definitions;
}

/** A listed tool as far as it can be read: a string name and an object `inputSchema`; a non-string description or non-object annotations are dropped. */
export function readDefinition(entry: unknown): McpToolDefinition | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const raw = entry as Record<string, unknown>;
  const isObject = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === 'object' && !Array.isArray(value);
  if (typeof raw.name !== 'string' || (raw.inputSchema !== undefined && !isObject(raw.inputSchema)))
    return undefined;
  const taskSupport = isObject(raw.execution) ? raw.execution.taskSupport : undefined;
  return {
    name: raw.name,
    ...(taskSupport === 'required' || taskSupport === 'optional' || taskSupport === 'forbidden'
      ? { taskSupport }
      : {}),
    ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    // MCP's display name: the tool's own `title`, else the older `annotations.title`.
    ...(typeof raw.title === 'string'
      ? { title: raw.title }
      : isObject(raw.annotations) && typeof raw.annotations.title === 'string'
        ? { title: raw.annotations.title }
        : {}),
    ...(isObject(raw.inputSchema) ? { inputSchema: raw.inputSchema } : {}),
    ...(isObject(raw.outputSchema) ? { outputSchema: raw.outputSchema } : {}),
    ...(isObject(raw.annotations)
      ? { annotations: raw.annotations as McpToolDefinition['annotations'] }
      : {}),
  };
}

/**
 * The tools made of a listing's entries, by server tool name: each entry read, named (a tool
 * listed before keeps its id, a new one gets a free segment) and made by `make`, with the event
 * loop given a turn between tools. Unreadable and repeated entries are skipped with a warning.
 */
export async function toolsOfEntries(
  entries: readonly unknown[],
  server: string,
  kept: ReadonlyMap<string, Tool>,
  make: (definition: McpToolDefinition, segment: string) => Tool | undefined,
  warning: (message: string) => void,
): Promise<Map<string, Tool>> {
  const next = new Map<string, Tool>();
  const taken = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    if (index > 0) await yieldToLoop();
    const definition = readDefinition(entry);
    if (definition === undefined || next.has(definition.name)) {
      warning(
        `server "${server}" listed a tool without a name or an object inputSchema, or one name twice; skipped`,
      );
      continue;
    }
    const previous = kept.get(definition.name);
    const segment = previous ? previous.id.slice(server.length + 1) : toolSegment(definition.name, taken);
    taken.add(segment);
    const tool = make(definition, segment);
    if (tool) next.set(definition.name, tool);
  }
  return next;
}
