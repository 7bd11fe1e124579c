import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MCP_TOOLS, type McpToolset, mcpToolset } from '../mcp/index.ts';
import { callTool } from '../tools/call-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import type { ToolResult } from '../tools/tool-result.ts';

/**
 * A hostile MCP server of our own over stdio (issue 25 item 6, test/support/mcp-hostile-server.mjs):
 * a `$defs` chain that is 3^25 nodes inlined, catastrophic patterns, a `$ref` cycle, a malformed
 * entry, a schema over the size budget, results around the 16 MiB limit, endless paging. Its
 * good tools are offered, every bad one is skipped with a warning naming why, and the event loop
 * never stalls over 100 ms.
 */

const HOSTILE = join(import.meta.dirname, 'support', 'mcp-hostile-server.mjs');
const STALL_MS = 100;

/**
 * Watches the event loop while `work` runs: the longest stretch between two turns, in CPU time
 * of this process (on a shared 2-core machine with a load of 20, wall time mostly counts the
 * other processes' turns; CPU time counts what blocked this loop).
 */
async function measureStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = process.cpuUsage();
  let longest = 0;
  const tick = setInterval(() => {
    const used = process.cpuUsage(last);
    longest = Math.max(longest, (used.user + used.system) / 1000);
    last = process.cpuUsage();
  }, 5);
  try {
    const value = await work();
    const used = process.cpuUsage(last);
    return { value, stallMs: Math.max(longest, (used.user + used.system) / 1000) };
  } finally {
    clearInterval(tick);
  }
}

const open: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((toolset) => toolset.close()));
});

async function connect(
  env: Record<string, string> = {},
  options: Partial<Parameters<typeof mcpToolset>[0]> = {},
): Promise<{ toolset: McpToolset; warned: string[]; stallMs: number }> {
  const warned: string[] = [];
  const { value: toolset, stallMs } = await measureStall(() =>
    mcpToolset({
      name: 'hostile',
      transport: { command: process.execPath, args: [HOSTILE], env },
      onWarning: (message) => warned.push(message),
      ...options,
    }),
  );
  open.push(toolset);
  return { toolset, warned, stallMs };
}

let calls = 0;
async function timedCall(
  toolset: McpToolset,
  name: string,
  input: unknown,
): Promise<ToolResult & { stallMs: number }> {
  const toolCallId = `run-1:t1:c${++calls}`;
  const { value, stallMs } = await measureStall(() =>
    callTool(new ToolCatalog(toolset.tools), { name, toolCallId, input }, {
      meta: { runId: 'run-1', turnId: 'run-1:t1', toolCallId, agentId: 'test', attempt: 1 },
      defaultTimeoutMs: 10_000,
    } as never),
  );
  return Object.assign(value, { stallMs });
}

describe('mcpToolset on a hostile server (stdio)', () => {
  beforeAll(async () => {
    // Modules (the SDK, zod's converters) load once, outside the measured listings.
    const { toolset } = await connect();
    await toolset.close();
  });

  it('offers the good tools, skips each bad one with a warning naming why, and never stalls the event loop', async () => {
    const { toolset, warned, stallMs } = await connect();
    expect(toolset.tools.map((tool) => tool.id)).toEqual([
      'hostile.echo',
      'hostile.code',
      'hostile.bomb',
      'hostile.chain',
      'hostile.redos',
      'hostile.odd_entry',
      'hostile.pid',
      'hostile.big',
    ]);
    const said = warned.join('\n');
    expect(said).toMatch(
      /tool hostile\.cycle skipped: .*\$refs form a cycle that consumes no input \(#\/\$defs\/A → #\/\$defs\/B → #\/\$defs\/A\)/,
    );
    expect(said).toMatch(/tool hostile\.wide skipped: .*\d+ characters of JSON \(budget 262144\)/);
    expect(said).toMatch(/hostile\.bomb: its schema is shown as written, \$refs kept/);
    expect(stallMs).toBeLessThan(STALL_MS);

    // The bomb's model-facing schema keeps its $refs: ~2 KB, not 3^25 nodes.
    const bomb = toolset.tools.find((tool) => tool.id === 'hostile.bomb')!;
    expect(JSON.stringify(bomb.inputSchema).length).toBeLessThan(5_000);
    expect(bomb.inputSchema.$defs).toBeDefined();
    // A malformed entry (a number as description, null annotations) is read as far as it goes.
    expect(toolset.tools.find((tool) => tool.id === 'hostile.odd_entry')?.description).toBe('');

    expect(await timedCall(toolset, 'hostile.echo', { text: 'hi' })).toMatchObject({
      result: '{"text":"hi"}',
    });
  });

  it('runs server patterns in linear time: catastrophic ones answer at once, benign ones still hold', async () => {
    const { toolset } = await connect();
    const evil = `${'a'.repeat(34)}!`;
    for (const input of [
      { word: evil },
      { tags: { [evil]: 'x' } },
      { labels: { [`${'a'.repeat(40)}b`]: 1 } },
    ]) {
      const started = performance.now();
      const result = await timedCall(toolset, 'hostile.redos', input);
      expect(result).toMatchObject({ executed: false, retryHint: { reason: 'invalid_arguments' } });
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(result.stallMs).toBeLessThan(STALL_MS);
    }
    expect(
      (await timedCall(toolset, 'hostile.redos', { word: 'aaaa', tags: { aa: 'x' } })).error,
    ).toBeUndefined();
    expect(await timedCall(toolset, 'hostile.code', { code: 'abc-1234' })).toMatchObject({
      retryHint: { reason: 'invalid_arguments' },
    });
    expect((await timedCall(toolset, 'hostile.code', { code: 'ABC-1234' })).error).toBeUndefined();
  });

  it('a bad call to the schema bomb gets its hint at once (the example is bounded too)', async () => {
    const { toolset } = await connect();
    const result = await timedCall(toolset, 'hostile.bomb', {});
    expect(result).toMatchObject({
      executed: false,
      retryHint: { reason: 'missing_fields', missingFields: ['root'] },
    });
    expect(result.stallMs).toBeLessThan(STALL_MS);
  });

  it('a wrong-typed argument to a 25-level anyOf chain is refused within the step budget, saying the schema is too complex (issue 39 item 5)', async () => {
    const { toolset } = await connect();
    const result = await timedCall(toolset, 'hostile.chain', { root: 42 });
    expect(result).toMatchObject({
      executed: false,
      retryHint: {
        reason: 'invalid_arguments',
        issues: [{ path: '', constraint: 'schema_too_complex' }],
      },
    });
    expect(result.retryHint?.issues?.[0]?.message).toMatch(/too complex .* to explain further/);
    expect((await timedCall(toolset, 'hostile.chain', { root: 'fine' })).result).toBe('{"root":"fine"}');
  });

  it('a server that pages tools/list forever: cut at the tool cap with a warning, heap bounded, no stall', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const { toolset, warned, stallMs } = await connect({ HOSTILE_PAGING: 'endless' });
    expect(toolset.tools).toHaveLength(MAX_MCP_TOOLS);
    expect(toolset.tools.slice(0, 2).map((tool) => tool.id)).toEqual(['hostile.echo', 'hostile.code']);
    expect(warned.join('\n')).toMatch(
      `lists more than ${MAX_MCP_TOOLS} tools; kept the first ${MAX_MCP_TOOLS}`,
    );
    expect(stallMs).toBeLessThan(STALL_MS);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(100 * 1024 * 1024);
    const few = await connect({ HOSTILE_PAGING: 'endless' }, { maxTools: 10_000, maxListPages: 5 });
    expect(few.toolset.tools).toHaveLength(2 + 5 * 50);
    expect(few.warned.join('\n')).toMatch('kept paging tools/list; read the first 5 pages');
  });

  it('results over the SDK’s 10 MiB pass over stdio (the documented limit is 16 MiB); a bigger one fails its call, not the process', async () => {
    const { toolset } = await connect({}, { timeoutMs: 20_000 });
    const pid = (await timedCall(toolset, 'hostile.pid', {})).result;
    const started = performance.now();
    const eleven = await timedCall(toolset, 'hostile.big', { mib: 11 });
    expect(eleven.error?.message).toBeUndefined();
    expect((eleven.result as string).length).toBe(11 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(3_000); // the SDK's own reader took 4.5 s
    const [twenty, beside] = await Promise.all([
      timedCall(toolset, 'hostile.big', { mib: 20 }),
      timedCall(toolset, 'hostile.echo', { text: 'still here' }),
    ]);
    expect(twenty.error?.message).toMatch(
      /answered too much: .* over the \d+-byte limit; it was dropped unread/,
    );
    // docs/mcp.md §Errors: the model gets a hint (issue 39 item 5: it was recoverable: false, no hint).
    expect(twenty.retryHint).toMatchObject({ reason: 'malformed_response', tool: 'hostile.big' });
    expect(twenty.error?.recoverable).toBe(true);
    expect(beside.result).toBe('{"text":"still here"}');
    expect((await timedCall(toolset, 'hostile.pid', {})).result).toBe(pid);
  }, 60_000);
});
