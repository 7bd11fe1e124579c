// A gateway served over this process's stdio (issue 13): `node --import tsx mcp-gateway-stdio.ts`.
import { z } from 'zod';
import { serveMcp } from '../../mcp/index.ts';
import { defineTool } from '../../tools/define-tool.ts';

const add = defineTool({
  id: 'math.add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  output: z.object({ sum: z.number() }),
  tags: ['read-only', 'idempotent'],
  examples: [{ a: 1, b: 2 }],
  execute: ({ a, b }) => ({ sum: a + b }),
});
await serveMcp({ tools: [add], telemetry: false }, { transport: 'stdio' });
