/**
 * An agent using a real MCP server's tools (docs/mcp.md §Client): the published filesystem server
 * behind the tool boundary. The scripted planner stands in for a model and makes the mistakes a
 * model makes: its first call misses a field, the boundary answers with a RetryHint (the server
 * never sees the call), and the next turn repairs it from the hint.
 *
 *     node --import tsx examples/mcp/agent.ts
 *
 * @module
 */

import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from 'toolwarden';
import { mcpToolset } from 'toolwarden/mcp';
import { scriptedPlanner } from 'toolwarden/testing';

const dir = await mkdtemp(join(tmpdir(), 'toolwarden-mcp-example-'));
await writeFile(join(dir, 'todo.md'), '- write the MCP example\n- ship it\n');
const server = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

const fs = await mcpToolset({ name: 'fs', transport: { command: process.execPath, args: [server, dir] } });
const runtime = createRuntime({
  agent: { id: 'mcp-example' },
  tools: fs.tools,
  telemetry: false,
  planner: scriptedPlanner([
    { toolCalls: [{ name: 'fs.read_text_file', input: { tail: 1 } }] }, // no `path`: the boundary stops it
    (input) => {
      const hint = 'toolResults' in input ? input.toolResults[0]?.retryHint : undefined;
      console.log(`hint: ${hint?.reason}, missing ${hint?.missingFields.join(', ')}`);
      return { toolCalls: [{ name: 'fs.read_text_file', input: { path: join(dir, 'todo.md') } }] };
    },
    (input) => {
      const read = 'toolResults' in input ? input.toolResults[0]?.result : undefined;
      return { finalResponse: { text: `The list says: ${JSON.stringify(read)}` } };
    },
  ]),
});
const outcome = await runtime
  .start({ messages: [{ role: 'user', content: 'What is on my todo list?' }] })
  .result();
console.log(outcome.finalResponse?.text);
await runtime.close();
await fs.close();
