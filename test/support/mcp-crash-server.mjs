// An MCP server over stdio whose `crash` tool ends its own process mid-call, and whose `pid` tool
// says which process answered (issue 13: a server that crashes mid-call).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'crash', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: 'pid', inputSchema: { type: 'object', properties: {} } },
    { name: 'crash', inputSchema: { type: 'object', properties: {} } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === 'crash') {
    process.stderr.write('crash server: exiting on purpose\n');
    setTimeout(() => process.exit(3), 20);
    return new Promise(() => {});
  }
  return { content: [{ type: 'text', text: String(process.pid) }] };
});
await server.connect(new StdioServerTransport());
