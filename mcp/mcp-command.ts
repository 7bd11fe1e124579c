import { writeFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Tool } from '../tools/define-tool.ts';
import type { McpTransport } from './mcp-connection.ts';
import { type McpToolset, mcpToolset } from './mcp-toolset.ts';
import { type McpGateway, type McpGatewayConfig, type ServeMcpOptions, serveMcp } from './serve-mcp.ts';

/**
 * A gateway config module's default export (docs/mcp.md §Gateway): the tools to serve, MCP
 * servers whose tools are served too, and the runtime options (policies, caps, telemetry, ...).
 */
export interface GatewayConfigFile extends McpGatewayConfig {
  /** MCP servers by toolset name; their tools are loaded with `mcpToolset`. */
  mcpServers?: Record<string, McpTransport & { timeoutMs?: number; confirmDestructive?: boolean }>;
  /** Default transport when the command line gives none. */
  transport?: ServeMcpOptions['transport'];
}

/** A loaded config: the gateway's options with every MCP server's tools added, and the toolsets to close. */
export interface LoadedGatewayConfig {
  config: McpGatewayConfig;
  transport?: ServeMcpOptions['transport'];
  toolsets: McpToolset[];
}

/**
 * Imports a config module (`.js`, `.mjs`; `.ts` from a source checkout or under tsx) and connects
 * its MCP servers.
 *
 * @throws Error naming the file when it cannot be imported or has no default export object;
 *   ToolUnavailableError when one of its MCP servers cannot be reached.
 */
export async function loadGatewayConfig(file: string): Promise<LoadedGatewayConfig> {
  const path = isAbsolute(file) ? file : resolve(process.cwd(), file);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    throw new Error(`Cannot load the gateway config ${path}: ${(error as Error).message}`, { cause: error });
  }
  const exported = loaded.default;
  if (exported === null || typeof exported !== 'object' || Array.isArray(exported)) {
    throw new Error(
      `The gateway config ${path} must export default an object ({ tools, mcpServers, policies, ... })`,
    );
  }
  const { mcpServers = {}, transport, ...config } = exported as GatewayConfigFile;
  const toolsets: McpToolset[] = [];
  try {
    for (const [name, { timeoutMs, confirmDestructive, ...server }] of Object.entries(mcpServers)) {
      toolsets.push(
        await mcpToolset({
          name,
          transport: server as McpTransport,
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          ...(confirmDestructive === undefined ? {} : { confirmDestructive }),
          onWarning: (message) => console.error(`[toolwarden mcp] ${message}`),
        }),
      );
    }
  } catch (error) {
    await Promise.all(toolsets.map((toolset) => toolset.close()));
    throw error;
  }
  const tools: Tool[] = [...(config.tools ?? []), ...toolsets.flatMap((toolset) => toolset.tools)];
  return { config: { ...config, tools }, ...(transport === undefined ? {} : { transport }), toolsets };
}

/** `toolwarden mcp serve`: serves a config's tools until SIGINT/SIGTERM. */
export async function mcpServeCommand(options: {
  config: string;
  stdio?: boolean;
  port?: number;
  host?: string;
  token?: string;
}): Promise<McpGateway & { toolsets: McpToolset[] }> {
  const loaded = await loadGatewayConfig(options.config);
  // The config's allowed hosts and origins hold whatever port and host the command line picks.
  const configured = typeof loaded.transport === 'object' ? loaded.transport : undefined;
  const transport: ServeMcpOptions['transport'] = options.stdio
    ? 'stdio'
    : options.port !== undefined
      ? {
          ...configured,
          port: options.port,
          ...(options.host === undefined ? {} : { host: options.host }),
          ...(options.token === undefined ? {} : { token: options.token }),
        }
      : (loaded.transport ?? { port: 3333 });
  const gateway = await serveMcp(loaded.config, { transport });
  return {
    ...gateway,
    toolsets: loaded.toolsets,
    close: async () => {
      await gateway.close();
      await Promise.all(loaded.toolsets.map((toolset) => toolset.close()));
    },
  };
}

/** One entry of `tool_schemas.json` (the seeds' catalog export). */
export interface CatalogEntry {
  id: string;
  toolset: string;
  description: string;
  tags: string[];
  input: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/** The catalog of tools: id, toolset, description, tags, input and output JSON Schema. */
export function toolCatalog(tools: readonly Tool[]): { tools: CatalogEntry[] } {
  return {
    tools: tools.map((tool) => ({
      id: tool.id,
      toolset: tool.id.slice(0, tool.id.lastIndexOf('.')),
      description: tool.description,
      tags: tool.tags ?? [],
      input: tool.inputSchema,
      ...(tool.outputSchema === undefined ? {} : { output: tool.outputSchema }),
    })),
  };
}

/** `toolwarden catalog`: writes or prints the catalog of a config's tools. */
export async function catalogCommand(options: {
  config: string;
  out?: string;
}): Promise<{ text: string; count: number }> {
  const loaded = await loadGatewayConfig(options.config);
  try {
    const catalog = toolCatalog(loaded.config.tools ?? []);
    const text = `${JSON.stringify(catalog, null, 2)}\n`;
    if (options.out !== undefined) await writeFile(options.out, text);
    return { text, count: catalog.tools.length };
  } finally {
    await Promise.all(loaded.toolsets.map((toolset) => toolset.close()));
  }
}
