/**
 * The read-only lookup tool the MCP gateway tests serve (an SDK client in mcp-gateway.test.ts, the
 * official inspector CLI in mcp-inspector-cli.test.ts): `limit` above 10 is refused at the tool
 * boundary, which is how those tests make a bad call.
 */
import { z } from 'zod';
import { defineTool } from '../../tools/define-tool.ts';

export const lookupTool = defineTool({
  id: 'kb.lookup',
  title: 'Look up an article',
  description: 'Looks up articles on a topic',
  input: z.object({ topic: z.string(), limit: z.number().int().min(1).max(10) }),
  examples: [{ topic: 'refunds', limit: 3 }],
  tags: ['read-only'],
  execute: ({ topic, limit }) => ({
    topic,
    articles: Array.from({ length: limit }, (_, i) => `${topic}-${i + 1}`),
  }),
});
