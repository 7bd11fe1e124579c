/**
 * What the tool boundary adds to an MCP call (issue 13, docs/mcp.md): the published
 * `@modelcontextprotocol/server-everything` over stdio, its `echo` tool called N times directly
 * with the SDK's `client.callTool` and N times through `mcpToolset` + the boundary (`callTool`:
 * argument parsing, zod validation, the result checks), interleaved in rounds. Target: the
 * boundary adds at most 5% of the round trip.
 *
 * Besides the wall time per call it prints this process's CPU time per call (`process.cpuUsage`,
 * user + system): the server's share of a round trip is the same for both, so on a loaded machine,
 * where the wall time follows the scheduler more than the code, the CPU time is what tells what
 * the client side adds. The load average is printed with the figures.
 *
 *     node --import tsx bench/mcp.bench.ts [--calls 300] [--rounds 7]
 *
 * @module
 */

import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mcpToolset } from '../mcp/index.ts';
import { callTool } from '../tools/call-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '300' }, rounds: { type: 'string', default: '7' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const server = {
  command: process.execPath,
  args: [join(process.cwd(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
};

const direct = new Client({ name: 'bench', version: '1' });
await direct.connect(new StdioClientTransport({ ...server, stderr: 'pipe' }));
const toolset = await mcpToolset({ name: 'everything', transport: server, onWarning: () => {} });
const catalog = new ToolCatalog(toolset.tools);

let n = 0;
const variants: Record<string, () => Promise<unknown>> = {
  'SDK client.callTool': () => direct.callTool({ name: 'echo', arguments: { message: 'hi' } }),
  'mcpToolset + boundary': async () => {
    const toolCallId = `bench:t1:c${++n}`;
    const result = await callTool(
      catalog,
      { name: 'everything.echo', toolCallId, input: { message: 'hi' } },
      {
        meta: { runId: 'bench', turnId: 'bench:t1', toolCallId, agentId: 'bench', attempt: 1 },
      } as never,
    );
    if (result.error) throw result.error;
  },
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
/** This process's CPU µs per call, per round. */
const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let i = 0; i < 50; i++) for (const run of Object.values(variants)) await run();
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
  for (const name of order) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < calls; i++) await variants[name]!();
    samples[name]!.push(((performance.now() - started) * 1000) / calls);
    const used = process.cpuUsage(cpuBefore);
    cpu[name]!.push((used.user + used.system) / calls);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const added = (m: number, base: number) =>
  `+${(m - base).toFixed(0)} µs (${(((m - base) / base) * 100).toFixed(1)}%)`;
const base = median(samples['SDK client.callTool']!);
const cpuBase = median(cpu['SDK client.callTool']!);
console.log(
  `MCP echo over stdio (server-everything), ${calls} calls × ${rounds} rounds, median µs per call (load average ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores)`,
);
for (const [name, xs] of Object.entries(samples)) {
  const m = median(xs);
  const c = median(cpu[name]!);
  const first = name === 'SDK client.callTool';
  console.log(
    `${name.padEnd(24)} wall ${m.toFixed(0).padStart(6)} µs ${first ? ''.padEnd(18) : added(m, base).padEnd(18)}  cpu ${c.toFixed(0).padStart(5)} µs ${first ? '' : added(c, cpuBase)}`,
  );
}
await direct.close();
await toolset.close();
