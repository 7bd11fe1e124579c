/**
 * The MCP gateway example's config (docs/mcp.md §Gateway): a tool of our own, the published
 * filesystem server's tools behind the boundary, and policies every client session gets.
 *
 *     npx toolwarden mcp serve --config examples/mcp/gateway.config.ts --port 3333
 *     npx toolwarden catalog --config examples/mcp/gateway.config.ts --out tool_schemas.json
 *
 * The filesystem server may read and write the folder in TOOLWARDEN_MCP_DIR (default: this
 * example's `sandbox/`, created on first use).
 *
 * @module
 */

import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { circuitBreaker, defineTool, toolDenylist } from 'toolwarden';
import type { GatewayConfigFile } from 'toolwarden/mcp';
import { z } from 'zod';

const sandbox = process.env.TOOLWARDEN_MCP_DIR ?? join(import.meta.dirname, 'sandbox');
mkdirSync(sandbox, { recursive: true });
const filesystemServer = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

const wordCount = defineTool({
  id: 'text.word_count',
  description: 'Counts the words of a text',
  input: z.object({ text: z.string().min(1).max(100_000) }),
  output: z.object({ words: z.number().int() }),
  examples: [{ text: 'two words' }],
  tags: ['read-only', 'idempotent'],
  execute: ({ text }) => ({ words: text.trim().split(/\s+/).length }),
});

export default {
  tools: [wordCount],
  mcpServers: {
    // `fs.read_text_file`, `fs.write_file`, ...: destructive ones ask the client to confirm.
    fs: { command: process.execPath, args: [filesystemServer, sandbox], confirmDestructive: true },
  },
  policies: [
    circuitBreaker({ failures: 3, cooldownMs: 30_000 }),
    // No client may move files through this gateway.
    toolDenylist({ ids: ['fs.move_file'] }),
  ],
  telemetry: false,
} satisfies GatewayConfigFile;
