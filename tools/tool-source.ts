import type { Tool } from './define-tool.ts';

/**
 * Where a runtime's tool came from when that place can change its list: an MCP server whose
 * `notifications/tools/list_changed` makes `mcpToolset` list again (docs/mcp.md §Client). A tool
 * carries its source under {@link TOOL_SOURCE} (not enumerable: a spread copy is a plain tool), and
 * `createRuntime` follows each source of its tools, so the next planner turn is offered the new
 * list and a call to a removed tool is `tool_unavailable` (issue 39 item 4).
 */
export interface ToolSource {
  /** For warnings: the toolset's name. */
  readonly name: string;
  /** The source's tools now. */
  readonly tools: readonly Tool[];
  /** Calls `listener` after each change of `tools`; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

/** The key of a tool's {@link ToolSource} (`Symbol.for`, so copies of toolwarden agree). */
export const TOOL_SOURCE: unique symbol = Symbol.for('toolwarden.toolSource') as never;

/** Marks `tool` as coming from `source`; returns it. */
export function fromToolSource<T extends Tool>(tool: T, source: ToolSource): T {
  Object.defineProperty(tool, TOOL_SOURCE, { value: source, enumerable: false, configurable: true });
  return tool;
}

/** The tool's source, when it has one. */
export function toolSourceOf(tool: Tool): ToolSource | undefined {
  return (tool as Tool & { [TOOL_SOURCE]?: ToolSource })[TOOL_SOURCE];
}
