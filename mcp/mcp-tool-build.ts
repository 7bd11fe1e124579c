import { z } from 'zod';
import type { Tool, ToolContext } from '../tools/define-tool.ts';
import { measureSchema } from '../tools/json-schema-budget.ts';
import { toolFromJsonSchema } from '../tools/json-schema-tool.ts';
import { withLinearPatterns } from '../tools/linear-pattern.ts';
import { cleanDescription, printable } from './mcp-names.ts';
import type { McpToolDefinition } from './mcp-tool-list.ts';

/**
 * A listed MCP tool as a toolwarden tool (docs/mcp.md §Client): its description cleaned, its
 * annotations as tags and declared effects, its `inputSchema` the boundary's schema (as
 * `toolFromJsonSchema` reads it), its `outputSchema` the tool's `output`.
 *
 * @module
 */

/** What building a tool needs of its toolset. */
export interface McpToolSettings {
  /** The toolset's name: ids are `<server>.<segment>`, tags `mcp:<server>`. */
  server: string;
  /** The boundary's `timeoutMs` of each tool, ms. */
  totalMs: number;
  confirmDestructive?: boolean | undefined;
  warning: (message: string) => void;
  /** Runs a call of the tool on the server. */
  execute: (definition: McpToolDefinition, id: string, input: unknown, ctx: ToolContext) => Promise<unknown>;
}

/**
 * The tool for `definition`, or undefined. Renames, cleaned descriptions and an unreadable
 * `outputSchema` are told to `settings.warning`.
 *
 * @throws Error when the input schema cannot be read or is over budget (the caller skips the tool).
 */
export function buildMcpTool(
  definition: McpToolDefinition,
  segment: string,
  id: string,
  settings: McpToolSettings,
): Tool | undefined {
  const { server, warning } = settings;
  if (segment !== definition.name) {
    warning(`tool "${printable(definition.name)}" of "${server}" is offered as "${id}"`);
  }
  const description = cleanDescription(definition.description);
  if (description.changed.length > 0) warning(`description of ${id}: ${description.changed.join(', ')}`);
  const annotations = definition.annotations ?? {};
  const readOnly = annotations.readOnlyHint === true;
  const destructive = !readOnly && annotations.destructiveHint !== false;
  const tags = [
    'mcp',
    `mcp:${server}`,
    ...(readOnly ? ['read-only'] : []),
    ...(destructive ? ['destructive'] : []),
    ...(annotations.idempotentHint === true ? ['idempotent'] : []),
    ...(annotations.openWorldHint !== false ? ['open-world'] : []),
  ];
  let output: z.ZodType | undefined;
  if (definition.outputSchema !== undefined) {
    try {
      const refused = measureSchema(definition.outputSchema).refused;
      if (refused !== undefined) throw new Error(refused);
      output = withLinearPatterns(() =>
        z.fromJSONSchema(definition.outputSchema as Parameters<typeof z.fromJSONSchema>[0]),
      ).value;
    } catch (error) {
      warning(`outputSchema of ${id} cannot be read (${(error as Error).message}); results are not checked`);
    }
  }
  return toolFromJsonSchema(
    { name: id, description: description.text, parameters: definition.inputSchema ?? { type: 'object' } },
    {
      onWarning: warning,
      ...(definition.title === undefined
        ? {}
        : { title: cleanDescription(definition.title).text.slice(0, 200) }),
      tags,
      ...(output === undefined ? {} : { output }),
      // The SDK enforces `timeoutMs` between progress notifications; the boundary the total.
      timeoutMs: settings.totalMs,
      ...(settings.confirmDestructive && destructive ? { requiresConfirmation: true } : {}),
      // What re-running a call means after a crash (docs/durability.md §Effects). A server's
      // hints are hints: a policy or the app may distrust them (wrap the tool without them).
      ...(readOnly ? { readOnly: true } : {}),
      ...(!readOnly && annotations.idempotentHint === true ? { idempotent: true } : {}),
      execute: (input, ctx) => settings.execute(definition, id, input, ctx),
    },
  );
}
