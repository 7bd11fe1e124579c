import { writeFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { Tool } from '../tools/define-tool.ts';
import { ToolCatalog, type ToolSchemas } from '../tools/tool-catalog.ts';
import type { McpTransport } from './mcp-connection.ts';
import { type McpToolset, mcpToolset } from './mcp-toolset.ts';
import {
  GATEWAY_AGENT_ID,
  GATEWAY_CAPS,
  type McpGateway,
  type McpGatewayConfig,
  type ServeMcpOptions,
  serveMcp,
} from './serve-mcp.ts';

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

/** The options of `toolwarden mcp serve`, as the command line parses them. */
export interface McpServeOptions {
  config: string;
  stdio?: boolean;
  port?: number;
  host?: string;
  token?: string;
  allowedHost?: string[];
  allowedOrigin?: string[];
  /** Minutes. */
  idleTimeout?: number;
  maxSessions?: number;
}

/**
 * `toolwarden mcp serve`: serves a config's tools until SIGINT/SIGTERM.
 *
 * @throws what `loadGatewayConfig` and `serveMcp` throw; the config's MCP servers are closed first.
 */
export async function mcpServeCommand(
  options: McpServeOptions,
): Promise<McpGateway & { toolsets: McpToolset[] }> {
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
      : typeof loaded.transport === 'object'
        ? { ...loaded.transport }
        : (loaded.transport ?? { port: 3333 });
  if (transport !== 'stdio') {
    if (options.allowedHost !== undefined) transport.allowedHosts = options.allowedHost;
    if (options.allowedOrigin !== undefined) transport.allowedOrigins = options.allowedOrigin;
    if (options.idleTimeout !== undefined) transport.idleTimeoutMs = options.idleTimeout * 60_000;
    if (options.maxSessions !== undefined) transport.maxSessions = options.maxSessions;
  }
  let gateway: McpGateway;
  try {
    gateway = await serveMcp(loaded.config, { transport });
  } catch (error) {
    // It cannot serve (the port in use, off loopback without a token): its MCP servers' processes
    // must not outlive it.
    await Promise.all(loaded.toolsets.map((toolset) => toolset.close()));
    throw error;
  }
  return {
    ...gateway,
    toolsets: loaded.toolsets,
    close: async () => {
      await gateway.close();
      await Promise.all(loaded.toolsets.map((toolset) => toolset.close()));
    },
  };
}

/**
 * The `tool_schemas.json` of tools (docs/mcp.md §Catalog): `ToolCatalog.schemas`'s one shape,
 * Goa-AI's field names. `service` defaults to the gateway's agent id.
 */
export function toolCatalog(tools: readonly Tool[], service = GATEWAY_AGENT_ID): ToolSchemas {
  return new ToolCatalog(tools).schemas(service);
}

/**
 * The tools a gateway with this config serves a new session: its tools less those its policies
 * disable when a session's run starts (an allowlist, a denylist) and external ones (the gateway
 * cannot run them). Found by starting one run of the gateway's runtime and canceling it.
 */
export async function servedTools(config: McpGatewayConfig): Promise<Tool[]> {
  // Only what decides the served set: no store, no durability, no inspector, no telemetry.
  const { tools, policies, plugins, policyRunner, caps, agent } = config;
  const runtime = createRuntime({
    caps: { ...GATEWAY_CAPS, ...caps },
    ...(tools === undefined ? {} : { tools }),
    ...(policies === undefined ? {} : { policies }),
    ...(plugins === undefined ? {} : { plugins }),
    ...(policyRunner === undefined ? {} : { policyRunner }),
    telemetry: false,
    agent: agent ?? { id: GATEWAY_AGENT_ID },
    planner: {
      planStart: async () => ({ finalResponse: { text: 'catalog' } }),
      planResume: async () => ({ finalResponse: { text: 'catalog' } }),
    },
  });
  try {
    const run = runtime.start({ messages: [{ role: 'user', content: 'toolwarden catalog --served' }] });
    const disabled = run.context.disabledTools;
    run.cancel('catalog read');
    await run.result().catch(() => undefined);
    return runtime
      .listTools()
      .filter((tool) => tool.execute !== undefined && disabled[tool.id] === undefined);
  } finally {
    await runtime.close();
  }
}

/** `toolwarden catalog`: writes or prints the `tool_schemas.json` of a config's tools (`served`: only those its gateway serves). */
export async function catalogCommand(options: {
  config: string;
  out?: string;
  served?: boolean;
}): Promise<{ text: string; count: number }> {
  const loaded = await loadGatewayConfig(options.config);
  try {
    const tools = options.served ? await servedTools(loaded.config) : (loaded.config.tools ?? []);
    const catalog = toolCatalog(tools, loaded.config.agent?.id ?? GATEWAY_AGENT_ID);
    const text = `${JSON.stringify(catalog, null, 2)}\n`;
    if (options.out !== undefined) await writeFile(options.out, text);
    return { text, count: catalog.tools.length };
  } finally {
    await Promise.all(loaded.toolsets.map((toolset) => toolset.close()));
  }
}
