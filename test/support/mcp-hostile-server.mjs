// A hostile MCP server over stdio (issue 25 item 6): schemas that explode when expanded, patterns
// that backtrack for minutes, a `$ref` cycle, malformed tool entries, a schema over the size
// budget, an anyOf chain that explodes on a wrong-typed value, results around the 16 MiB limit, a `pid` tool that says which process answers, and — with HOSTILE_PAGING=endless — a tools/list that
// never stops paging. The good tools (`echo`, `code`, `pid`, `big`) must survive all of it.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** `levels` definitions, each naming the previous one three times: 3^levels nodes when inlined. */
function schemaBomb(levels) {
  const $defs = { l0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    const previous = { $ref: `#/$defs/l${i - 1}` };
    $defs[`l${i}`] = {
      type: 'object',
      properties: { a: previous, b: previous, c: previous },
      required: ['a', 'b', 'c'],
    };
  }
  return { type: 'object', properties: { root: { $ref: `#/$defs/l${levels}` } }, required: ['root'], $defs };
}

/** `levels` definitions, each an `anyOf` of three references to the one below (issue 39 item 5): a wrong-typed value is 3^levels branches to zod. */
function anyOfChain(levels) {
  const $defs = { l0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    const below = { $ref: `#/$defs/l${i - 1}` };
    $defs[`l${i}`] = { anyOf: [below, below, below] };
  }
  return { type: 'object', properties: { root: { $ref: `#/$defs/l${levels}` } }, required: ['root'], $defs };
}

const wide = {};
for (let i = 0; i < 6_000; i++) wide[`field_${i}`] = { type: 'string', description: 'x'.repeat(40) };

const tools = [
  {
    name: 'echo',
    description: 'Echoes its text',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'code',
    description: 'Looks up a code (a benign pattern)',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' } },
      required: ['code'],
    },
  },
  { name: 'bomb', description: '25 levels of $defs, 3 references each', inputSchema: schemaBomb(25) },
  {
    name: 'chain',
    description: 'levels of anyOf (25, or HOSTILE_CHAIN_LEVELS), 3 references each',
    inputSchema: anyOfChain(Number(process.env.HOSTILE_CHAIN_LEVELS ?? 25)),
  },
  {
    name: 'redos',
    description: 'Catastrophic patterns in pattern, patternProperties and propertyNames',
    inputSchema: {
      type: 'object',
      properties: {
        word: { type: 'string', pattern: '^(a+)+$' },
        tags: {
          type: 'object',
          patternProperties: { '^(a|a)*$': { type: 'string' } },
          additionalProperties: false,
        },
        labels: { type: 'object', propertyNames: { pattern: '^(a|aa)+$' } },
      },
    },
  },
  {
    name: 'cycle',
    description: 'A $ref cycle with nothing in between',
    inputSchema: { $ref: '#/$defs/A', $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } } },
  },
  { name: 'odd_entry', description: 42, annotations: null, inputSchema: { type: 'object' } },
  { name: 'wide', description: 'A 400 KB schema', inputSchema: { type: 'object', properties: wide } },
  { name: 'pid', description: 'Says which process answers', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'big',
    description: 'Answers with `mib` MiB of text',
    inputSchema: { type: 'object', properties: { mib: { type: 'number' } }, required: ['mib'] },
  },
];

const endless = process.env.HOSTILE_PAGING === 'endless';
const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, (request) => {
  if (!endless) return { tools };
  const page = Number(request.params?.cursor ?? 0);
  const filler = Array.from({ length: 50 }, (_, i) => ({
    name: `filler_${page}_${i}`,
    inputSchema: { type: 'object', properties: {} },
  }));
  return { tools: page === 0 ? [...tools.slice(0, 2), ...filler] : filler, nextCursor: String(page + 1) };
});
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const args = request.params.arguments ?? {};
  if (request.params.name === 'big') {
    return { content: [{ type: 'text', text: 'x'.repeat(Math.round(Number(args.mib) * 1024 * 1024)) }] };
  }
  if (request.params.name === 'pid') return { content: [{ type: 'text', text: String(process.pid) }] };
  return { content: [{ type: 'text', text: JSON.stringify(args) }] };
});
await server.connect(new StdioServerTransport());
