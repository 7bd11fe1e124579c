/**
 * `toolwarden/mcp`: MCP servers' tools behind the tool boundary, and a runtime's tools served over
 * MCP (docs/mcp.md). Needs the optional peer `@modelcontextprotocol/sdk`.
 *
 * @module
 */

export { type McpClientFeatures, samplingFromPlanner } from './client-features.ts';
export {
  type McpToolAnswer,
  RETRY_DETAILS_KEY,
  SESSION_ENDED_KEY,
  type SessionEnded,
  toAnswer,
} from './gateway-session.ts';
export {
  type GatewayConfigFile,
  type LoadedGatewayConfig,
  loadGatewayConfig,
  servedTools,
  toolCatalog,
} from './mcp-command.ts';
export type { McpTransport } from './mcp-connection.ts';
export { MAX_MCP_DESCRIPTION, MAX_MCP_TOOL_NAME } from './mcp-names.ts';
export {
  MAX_MCP_LIST_PAGES,
  MAX_MCP_TOOLS,
  type McpProgress,
  type McpToolset,
  type McpToolsetOptions,
  mcpToolset,
  TOOL_CALL_META_KEY,
} from './mcp-toolset.ts';
export { elicitationFromRun, MAX_ELICITATION_ROUNDS } from './run-elicitation.ts';
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_SESSIONS,
  GATEWAY_CAPS,
  type GatewayHttpOptions,
  type McpGateway,
  type McpGatewayConfig,
  type ServeMcpOptions,
  serveMcp,
} from './serve-mcp.ts';
