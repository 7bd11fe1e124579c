import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type McpToolset, mcpToolset, samplingFromPlanner, TOOL_CALL_META_KEY } from '../mcp/index.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { callTool } from '../tools/call-tool.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { processesRunning } from './support/mcp-processes.ts';
import { startTestMcpServer } from './support/mcp-test-server.ts';

/**
 * MCP servers' tools behind the tool boundary (issue 13, docs/mcp.md §Client), against real
 * servers: the published `@modelcontextprotocol/server-everything` and `server-filesystem` run as
 * child processes over stdio (npm development dependencies, installed by `npm ci`), and a server
 * of our own over streamable HTTP on 127.0.0.1 for faults the published ones cannot show.
 */

const EVERYTHING = join(process.cwd(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = join(process.cwd(), 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const CRASHER = join(import.meta.dirname, 'support', 'mcp-crash-server.mjs');

const open: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((toolset) => toolset.close()));
});

async function connect(
  options: Parameters<typeof mcpToolset>[0],
): Promise<McpToolset & { warned: string[] }> {
  const warned: string[] = [];
  const toolset = await mcpToolset({ onWarning: (message) => warned.push(message), ...options });
  open.push(toolset);
  return Object.assign(toolset, { warned });
}

/** SIGKILLs the processes whose command line contains `needle`. */
function killProcessesRunning(needle: string): void {
  const pids = processesRunning(needle);
  expect(pids.length).toBeGreaterThan(0);
  for (const pid of pids) process.kill(pid, 'SIGKILL');
}

let calls = 0;
function call(toolset: McpToolset, name: string, input: unknown): Promise<ToolResult> {
  const toolCallId = `run-1:t1:c${++calls}`;
  return callTool(new ToolCatalog(toolset.tools), { name, toolCallId, input }, {
    meta: { runId: 'run-1', turnId: 'run-1:t1', toolCallId, agentId: 'test', attempt: 1 },
    defaultTimeoutMs: 10_000,
  } as never);
}

describe('mcpToolset on @modelcontextprotocol/server-everything (stdio)', () => {
  it('lists every page of tools with tags from annotations, and calls them through the boundary', async () => {
    const everything = await connect({
      name: 'everything',
      transport: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    const ids = everything.tools.map((tool) => tool.id);
    expect(ids).toEqual(
      expect.arrayContaining(['everything.echo', 'everything.get-sum', 'everything.get-tiny-image']),
    );
    const echo = everything.tools.find((tool) => tool.id === 'everything.echo')!;
    expect(echo.tags).toEqual(['mcp', 'mcp:everything', 'read-only', 'idempotent']);
    const toggle = everything.tools.find((tool) => tool.id === 'everything.toggle-simulated-logging')!;
    expect(toggle.tags).toEqual(['mcp', 'mcp:everything']); // says it is neither destructive nor open-world

    expect(await call(everything, 'everything.echo', { message: 'hi' })).toMatchObject({
      executed: true,
      result: 'Echo: hi',
    });
    expect(await call(everything, 'everything.get-sum', { a: 2, b: 3 })).toMatchObject({
      result: expect.stringContaining('5'),
    });
  });

  it('stops a bad call at the boundary with a hint, keeps structured content, and turns images into artifacts', async () => {
    const everything = await connect({
      name: 'everything',
      transport: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    const bad = await call(everything, 'everything.get-sum', { a: 'two' });
    expect(bad).toMatchObject({
      executed: false,
      retryHint: { reason: 'missing_fields', tool: 'everything.get-sum' },
    });
    expect(bad.retryHint?.missingFields).toEqual(['b']);

    const structured = await call(everything, 'everything.get-structured-content', { location: 'Chicago' });
    expect(structured.error).toBeUndefined();
    expect(structured.result).toMatchObject({ temperature: expect.any(Number) });

    const image = await call(everything, 'everything.get-tiny-image', {});
    expect(image.error).toBeUndefined();
    expect(image.artifacts?.map((artifact) => artifact.kind)).toContain('image');
    expect(JSON.stringify(image.result)).not.toMatch(/iVBOR/); // the image bytes never reach the model
  });
});

describe('mcpToolset on @modelcontextprotocol/server-filesystem (stdio)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-mcp-fs-'));
    await writeFile(join(dir, 'notes.txt'), 'first line\nsecond line\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file, answers isError as a ToolError the model sees, and marks writes destructive', async () => {
    const fs = await connect({
      name: 'fs',
      transport: { command: process.execPath, args: [FILESYSTEM, dir] },
      confirmDestructive: true,
    });
    const read = await call(fs, 'fs.read_text_file', { path: join(dir, 'notes.txt') });
    expect(read.error).toBeUndefined();
    expect(JSON.stringify(read.result)).toContain('second line');

    const denied = await call(fs, 'fs.read_text_file', { path: '/etc/hostname' });
    expect(denied).toMatchObject({ executed: true, error: { recoverable: true } });
    expect(denied.error?.message).toMatch(/access denied|outside allowed/i);

    const write = fs.tools.find((tool) => tool.id === 'fs.write_file')!;
    expect(write.tags).toContain('destructive');
    expect(write.requiresConfirmation).toBe(true);
  });

  it('a missing file is a recoverable invalid_arguments ToolError with the server’s text: same process, concurrent calls not cut', async () => {
    const fs = await connect({
      name: 'fs',
      transport: { command: process.execPath, args: [FILESYSTEM, dir] },
    });
    const before = processesRunning(`${FILESYSTEM}\u0000${dir}`);
    expect(before).toHaveLength(1);
    const missing = join(dir, 'missing.txt');
    const [failed, ...others] = await Promise.all([
      call(fs, 'fs.read_text_file', { path: missing }),
      ...Array.from({ length: 8 }, () => call(fs, 'fs.read_text_file', { path: join(dir, 'notes.txt') })),
    ]);
    expect(failed).toMatchObject({
      executed: true,
      error: { recoverable: true },
      retryHint: { reason: 'invalid_arguments', tool: 'fs.read_text_file', restrictToTool: false },
    });
    expect(failed!.error?.message).toContain(`ENOENT: no such file or directory, open '${missing}'`);
    expect(failed!.retryHint?.message).toMatch(/MCP server "fs" reported an error.*change the arguments/s);
    // The calls in flight beside it were answered, on the same process.
    for (const other of others) expect(other.error).toBeUndefined();
    expect((await call(fs, 'fs.list_allowed_directories', {})).error).toBeUndefined();
    expect(processesRunning(`${FILESYSTEM}\u0000${dir}`)).toEqual(before);
  });

  it('a killed server process: the next call starts it again', async () => {
    const fs = await connect({
      name: 'fs',
      transport: { command: process.execPath, args: [FILESYSTEM, dir] },
    });
    expect((await call(fs, 'fs.list_allowed_directories', {})).error).toBeUndefined();
    killProcessesRunning(`${FILESYSTEM}\u0000${dir}`);
    // The first call after the kill may find the dead pipe (tool_unavailable) or a new process.
    let result = await call(fs, 'fs.list_allowed_directories', {});
    if (result.error) {
      expect(result.retryHint?.reason).toBe('tool_unavailable');
      result = await call(fs, 'fs.list_allowed_directories', {});
    }
    expect(result.error).toBeUndefined();
    expect(JSON.stringify(result.result)).toContain(dir);
  });
});

describe('mcpToolset faults (own servers)', () => {
  it('a server that crashes mid-call: tool_unavailable naming the server and its stderr; the next call reconnects', async () => {
    const crasher = await connect({
      name: 'crasher',
      transport: { command: process.execPath, args: [CRASHER] },
    });
    const first = Number((await call(crasher, 'crasher.pid', {})).result);
    const crashed = await call(crasher, 'crasher.crash', {});
    expect(crashed).toMatchObject({ executed: true, retryHint: { reason: 'tool_unavailable' } });
    expect(crashed.error?.message).toMatch(/crasher/);
    const again = Number((await call(crasher, 'crasher.pid', {})).result);
    expect(again).toBeGreaterThan(0);
    expect(again).not.toBe(first);
  });

  it('a missing server fails mcpToolset with its name and cause, never a hang', async () => {
    await expect(
      mcpToolset({ name: 'ghost', transport: { command: '/nonexistent/mcp-server' }, onWarning: () => {} }),
    ).rejects.toThrow(/MCP server "ghost" cannot be reached/);
    await expect(
      mcpToolset({ name: 'nohttp', transport: { url: 'http://127.0.0.1:9/mcp' }, onWarning: () => {} }),
    ).rejects.toThrow(/MCP server "nohttp" cannot be reached/);
  });

  it('an isError answer over HTTP keeps the session: a slow call in flight beside it is answered', async () => {
    const server = await startTestMcpServer([
      {
        name: 'slow',
        call: () =>
          new Promise((resolve) =>
            setTimeout(() => resolve({ content: [{ type: 'text', text: 'late' }] }), 300),
          ),
      },
      {
        name: 'refuse',
        call: () => ({ content: [{ type: 'text', text: 'no such record: 42' }], isError: true }),
      },
    ]);
    try {
      const toolset = await connect({ name: 'svc', transport: { url: server.url } });
      const slow = call(toolset, 'svc.slow', {});
      await expect.poll(() => server.log.calls.length).toBe(1);
      const refused = await call(toolset, 'svc.refuse', {});
      expect(refused).toMatchObject({ retryHint: { reason: 'invalid_arguments', tool: 'svc.refuse' } });
      expect(refused.error?.message).toContain('no such record: 42');
      expect(await slow).toMatchObject({ executed: true, result: 'late' });
      expect(server.sessionsOpened()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('JSON-RPC errors are read by code and never drop the connection', async () => {
    const server = await startTestMcpServer([
      {
        name: 'locked',
        call: () => {
          throw Object.assign(new Error('database is locked'), { code: -32603 });
        },
      },
      {
        name: 'gone',
        call: () => {
          throw Object.assign(new Error('no handler for this tool'), { code: -32601 });
        },
      },
    ]);
    try {
      const toolset = await connect({ name: 'rpc', transport: { url: server.url } });
      const locked = await call(toolset, 'rpc.locked', {});
      expect(locked.error).toMatchObject({ recoverable: true });
      expect(locked.error?.message).toMatch(/MCP server "rpc" answered with an error: .*database is locked/);
      expect(locked.retryHint).toBeUndefined();
      const gone = await call(toolset, 'rpc.gone', {});
      expect(gone.retryHint).toMatchObject({ reason: 'tool_unavailable', tool: 'rpc.gone' });
      expect(gone.error?.message).toMatch(/does not answer this call: .*no handler for this tool/);
      expect(server.sessionsOpened()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('a server error of 2 MB reaches the model cut, as isError text is (issue 39 item 5)', async () => {
    const server = await startTestMcpServer([
      {
        name: 'loud',
        call: () => {
          throw Object.assign(new Error(`boom ${'e'.repeat(2_000_000)}`), { code: -32603 });
        },
      },
      {
        name: 'wordy',
        call: () => ({ content: [{ type: 'text', text: 'w'.repeat(2_000_000) }], isError: true }),
      },
    ]);
    try {
      const toolset = await connect({ name: 'rpc', transport: { url: server.url } });
      for (const name of ['rpc.loud', 'rpc.wordy']) {
        const result = await call(toolset, name, {});
        expect(result.error?.recoverable).toBe(true);
        // The whole error as events, spans and the stored transcript carry it: causes included.
        expect(JSON.stringify(result.error?.toJSON()).length).toBeLessThan(10_000);
        expect(JSON.stringify(result.retryHint ?? {}).length).toBeLessThan(10_000);
      }
    } finally {
      await server.close();
    }
  });

  it('a hanging tool times out at its timeoutMs, and the server sees the cancellation', async () => {
    const server = await startTestMcpServer([
      {
        name: 'hang',
        call: (_args, { signal }) =>
          new Promise((resolve) => signal.addEventListener('abort', () => resolve({ content: [] }))),
      },
    ]);
    try {
      const toolset = await connect({ name: 'slow', transport: { url: server.url }, timeoutMs: 300 });
      const started = Date.now();
      const result = await call(toolset, 'slow.hang', {});
      expect(result).toMatchObject({ executed: true, retryHint: { reason: 'timeout', tool: 'slow.hang' } });
      expect(Date.now() - started).toBeLessThan(5_000);
      await expect.poll(() => server.log.canceled).toEqual(['hang']);
    } finally {
      await server.close();
    }
  });

  it('malformed and oversized results, server-refused arguments, and a structuredContent that fails outputSchema', async () => {
    const server = await startTestMcpServer([
      { name: 'not_content', call: () => ({ content: 'not an array' }) },
      { name: 'huge', call: () => ({ content: [{ type: 'text', text: 'x'.repeat(17 * 1024 * 1024) }] }) },
      {
        name: 'picky',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
        call: () => {
          throw Object.assign(new Error('n must be even'), { code: -32602 });
        },
      },
      {
        name: 'typed',
        outputSchema: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] },
        call: () => ({ content: [], structuredContent: { total: 'lots' } }),
      },
    ]);
    try {
      const toolset = await connect({ name: 'odd', transport: { url: server.url } });
      const notContent = await call(toolset, 'odd.not_content', {});
      expect(notContent.error?.message).toMatch(/Invalid tools\/call result/); // the SDK server refused its own result
      const huge = await call(toolset, 'odd.huge', {});
      expect(huge.retryHint?.reason).toBe('malformed_response');
      const picky = await call(toolset, 'odd.picky', { n: 3 });
      expect(picky).toMatchObject({ retryHint: { reason: 'invalid_arguments', tool: 'odd.picky' } });
      expect(picky.error?.message).toMatch(/n must be even/);
      const typed = await call(toolset, 'odd.typed', {});
      expect(typed.retryHint?.reason).toBe('malformed_response');
      // The server stayed usable through all of it.
      expect(server.log.calls.map((entry) => entry.name)).toEqual(['not_content', 'huge', 'picky', 'typed']);
      expect(server.sessionsOpened()).toBe(1); // none of them dropped the connection
    } finally {
      await server.close();
    }
  });

  it('hostile listings: names normalized without collisions, descriptions cleaned, unreadable schemas skipped, each named in a warning', async () => {
    const server = await startTestMcpServer([
      { name: 'ok' },
      { name: 'bad name/../x' },
      { name: 'bad_name____x' },
      { name: 'chatty', description: `hello\u0000\u001b[31m world ${'y'.repeat(100_000)}` },
      { name: 'broken', inputSchema: { type: 'object', properties: { a: { type: 'no-such-type' } } } },
    ]);
    try {
      const toolset = await connect({ name: 'hostile', transport: { url: server.url } });
      const ids = toolset.tools.map((tool) => tool.id);
      // No annotations: MCP's defaults (destructive, open world).
      expect(toolset.tools[0]?.tags).toEqual(['mcp', 'mcp:hostile', 'destructive', 'open-world']);
      expect(ids).toEqual([
        'hostile.ok',
        'hostile.bad_name____x',
        'hostile.bad_name____x_2',
        'hostile.chatty',
      ]);
      const chatty = toolset.tools.find((tool) => tool.id === 'hostile.chatty')!;
      expect(chatty.description.length).toBeLessThan(4_100);
      expect(chatty.description.includes('\u0000') || chatty.description.includes('\u001b')).toBe(false);
      expect(toolset.warned.join('\n')).toMatch(/offered as "hostile.bad_name____x_2"/);
      expect(toolset.warned.join('\n')).toMatch(
        /description of hostile.chatty: control characters removed, cut from/,
      );
      expect(toolset.warned.join('\n')).toMatch(/tool hostile.broken skipped/);
      // The renamed tool still calls the server's own name.
      await call(toolset, 'hostile.bad_name____x_2', {});
      expect(server.log.calls.at(-1)?.name).toBe('bad_name____x');
    } finally {
      await server.close();
    }
  });

  it('list_changed: a removed tool answers tool_unavailable with the closest names; a new tool is offered', async () => {
    const server = await startTestMcpServer([{ name: 'lookup_v1' }, { name: 'other' }]);
    try {
      const toolset = await connect({ name: 'live', transport: { url: server.url } });
      const changed: string[][] = [];
      toolset.onToolsChanged = (tools) => changed.push(tools.map((tool) => tool.id));
      const catalog = new ToolCatalog(toolset.tools); // what a runtime created now holds
      server.tools.splice(0, 1, { name: 'lookup_v2' });
      await server.listChanged();
      await expect.poll(() => changed.at(-1)).toEqual(['live.lookup_v2', 'live.other']);
      const meta = { runId: 'r', turnId: 'r:t1', toolCallId: 'r:t1:c1', agentId: 'a', attempt: 1 };
      const removed = await callTool(catalog, { name: 'live.lookup_v1', toolCallId: 'r:t1:c1', input: {} }, {
        meta,
      } as never);
      expect(removed).toMatchObject({ retryHint: { reason: 'tool_unavailable' } });
      expect(removed.error?.message).toMatch(/no longer offers this tool; closest: live.lookup_v2/);
      expect(server.log.calls).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a lost HTTP session: the call is tool_unavailable and the next one reconnects', async () => {
    const server = await startTestMcpServer([{ name: 'ping' }]);
    try {
      const toolset = await connect({ name: 'flaky', transport: { url: server.url } });
      expect((await call(toolset, 'flaky.ping', {})).error).toBeUndefined();
      await server.dropSessions();
      let result = await call(toolset, 'flaky.ping', {});
      if (result.error) {
        expect(result.retryHint?.reason).toBe('tool_unavailable');
        result = await call(toolset, 'flaky.ping', {});
      }
      expect(result.error).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe('mcpToolset in a run', () => {
  const { exporter, provider } = inMemoryTracing();

  it('sends the run’s ToolCallMeta and the execute_tool span’s traceparent in _meta', async () => {
    const server = await startTestMcpServer([
      {
        name: 'lookup',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      },
    ]);
    try {
      const toolset = await connect({ name: 'kb', transport: { url: server.url } });
      const runtime = createRuntime({
        agent: { id: 'mcp-agent' },
        tools: toolset.tools,
        planner: scriptedPlanner([
          { toolCalls: [{ name: 'kb.lookup', input: { q: 42 } }] }, // stopped at the boundary
          { toolCalls: [{ name: 'kb.lookup', input: { q: 'refunds' } }] },
          { finalResponse: { text: 'done' } },
        ]),
        telemetry: { tracerProvider: provider },
      });
      const run = runtime.start({ runId: 'mcp-run', messages: [{ role: 'user', content: 'look it up' }] });
      expect((await run.result()).status).toBe('completed');
      await runtime.close();
      expect(server.log.calls).toHaveLength(1); // the bad call never reached the server
      const { meta } = server.log.calls[0]!;
      expect(meta?.[TOOL_CALL_META_KEY]).toMatchObject({
        runId: 'mcp-run',
        toolCallId: 'mcp-run:t2:c1',
        agentId: 'mcp-agent',
      });
      const span = exporter
        .getFinishedSpans()
        .find(
          (candidate) =>
            candidate.name === 'execute_tool kb.lookup' &&
            candidate.attributes['gen_ai.tool.call.id'] !== undefined &&
            candidate.status.code !== 2,
        );
      expect(span).toBeDefined();
      const { traceId, spanId } = span!.spanContext();
      expect(meta?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
      // The MCP side of the call, for the span (OpenTelemetry's MCP attributes).
      expect(span!.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'mcp.session.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'mcp.protocol.version': expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
      });
    } finally {
      await server.close();
    }
  });
});

describe('client features against server-everything (issue 39 item 4): roots, elicitation, sampling, progress, tasks', () => {
  const { exporter, provider } = inMemoryTracing();
  const stdio = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

  /** The live `tool_progress` events of the last {@link runCalls}. */
  let progressEvents: { toolCallId: string; progress?: number; message?: string }[] = [];

  /** One run of `calls`, one per turn, then a final answer; the results in call order. */
  async function runCalls(toolset: McpToolset, calls: { name: string; input: unknown }[]) {
    progressEvents = [];
    const runtime = createRuntime({
      agent: { id: 'features' },
      tools: toolset.tools,
      planner: scriptedPlanner([
        ...calls.map((call) => ({ toolCalls: [call] })),
        { finalResponse: { text: 'done' } },
      ]),
      telemetry: { tracerProvider: provider },
    });
    try {
      const run = runtime.start({ messages: [{ role: 'user', content: 'go' }] });
      run.events$.subscribe((event) => {
        if (event.type === 'tool_progress') progressEvents.push(event);
      });
      const outcome = await run.result();
      expect(outcome.status).toBe('completed');
      return outcome.toolResults;
    } finally {
      await runtime.close();
    }
  }

  it('declares roots, elicitation and sampling only when given, and serves each: roots from the app, elicitation answered from code, sampling by the planner', async () => {
    const elicited: { message: string; runIds: string[] }[] = [];
    const toolset = await connect({
      name: 'everything',
      transport: stdio,
      roots: [{ uri: 'file:///srv/notes', name: 'notes' }],
      onElicitation: async (request, calls) => {
        elicited.push({ message: request.message, runIds: calls.map((call) => call.runId) });
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
      },
      onSampling: samplingFromPlanner(
        scriptedPlanner([{ finalResponse: { text: 'sampled by the planner' } }]),
      ),
    });
    const ids = toolset.tools.map((tool) => tool.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'everything.get-roots-list',
        'everything.trigger-elicitation-request',
        'everything.trigger-sampling-request',
      ]),
    );
    const [roots, elicitation, sampling] = await runCalls(toolset, [
      { name: 'everything.get-roots-list', input: {} },
      { name: 'everything.trigger-elicitation-request', input: {} },
      { name: 'everything.trigger-sampling-request', input: { prompt: 'say hi', maxTokens: 10 } },
    ]);
    expect(JSON.stringify(roots?.result)).toContain('file:///srv/notes');
    expect(elicited).toEqual([
      { message: expect.stringContaining('Please provide'), runIds: [expect.any(String)] },
    ]);
    expect(JSON.stringify(elicitation?.result)).toContain('Ada Lovelace');
    expect(JSON.stringify(sampling?.result)).toContain('sampled by the planner');
  }, 60_000);

  it('progress notifications start the call’s timeout again: a 3 s operation passes a 1 s timeoutMs, each step a span event', async () => {
    const progress: number[] = [];
    const toolset = await connect({
      name: 'everything',
      transport: stdio,
      timeoutMs: 1_000,
      onProgress: (update) => progress.push(update.progress),
    });
    exporter.reset();
    const [result] = await runCalls(toolset, [
      { name: 'everything.trigger-long-running-operation', input: { duration: 3, steps: 6 } },
    ]);
    expect(result?.error).toBeUndefined();
    expect(JSON.stringify(result?.result)).toMatch(/completed/i);
    expect(progress.length).toBeGreaterThanOrEqual(5);
    const span = exporter
      .getFinishedSpans()
      .find((candidate) => candidate.name === 'execute_tool everything.trigger-long-running-operation');
    expect(span?.events.filter((event) => event.name === 'mcp.progress').length).toBeGreaterThanOrEqual(5);
    // ... and a live tool_progress RunEvent of the run, for UIs.
    expect(progressEvents.length).toBeGreaterThanOrEqual(5);
    expect(progressEvents[0]).toMatchObject({ toolCallId: result?.toolCallId, progress: expect.any(Number) });
    // Without progress the same limit still holds: a silent call is cut at timeoutMs.
    const [silent] = await runCalls(toolset, [
      { name: 'everything.trigger-long-running-operation', input: { duration: 2, steps: 1 } },
    ]);
    expect(silent?.retryHint?.reason).toBe('timeout');
  }, 60_000);

  it('a task-required tool runs as an MCP Task: the call waits for it (statuses on the span), and its elicitation is answered', async () => {
    const toolset = await connect({
      name: 'everything',
      transport: stdio,
      onElicitation: async () => ({ action: 'accept', content: { interpretation: 'technical' } }),
    });
    exporter.reset();
    const [plain, ambiguous] = await runCalls(toolset, [
      { name: 'everything.simulate-research-query', input: { topic: 'tides' } },
      { name: 'everything.simulate-research-query', input: { topic: 'python', ambiguous: true } },
    ]);
    expect(plain?.error).toBeUndefined();
    expect(String(plain?.result)).toContain('# Research Report: tides');
    expect(String(ambiguous?.result)).toContain('Clarification**: technical');
    const span = exporter
      .getFinishedSpans()
      .find((candidate) => candidate.name === 'execute_tool everything.simulate-research-query');
    expect(span?.attributes['mcp.task.status']).toBe('completed');
    expect(span?.events.map((event) => event.attributes?.['mcp.task.status'])).toContain('working');
    // The run shows it waits on the task (live tool_progress events), and that the task needed input.
    expect(progressEvents.map((event) => event.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^MCP task working/),
        expect.stringMatching(/^MCP task input_required/),
      ]),
    );
  }, 60_000);

  it('a task call cut by its limit sends tasks/cancel', async () => {
    const sent: string[] = [];
    const transport = new StdioClientTransport({ ...stdio, stderr: 'pipe' });
    const send = transport.send.bind(transport);
    transport.send = (message) => {
      if ('method' in message) sent.push(message.method);
      return send(message);
    };
    const client = new Client({ name: 'own', version: '1' });
    await client.connect(transport);
    try {
      const toolset = await connect({ name: 'everything', transport: { client }, maxTotalTimeoutMs: 1_500 });
      const [cut] = await runCalls(toolset, [
        { name: 'everything.simulate-research-query', input: { topic: 'x' } },
      ]);
      expect(cut?.retryHint?.reason).toBe('timeout');
      await expect.poll(() => sent).toContain('tasks/cancel');
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('a server tool beside the app’s own (issue 39 item 4)', () => {
  it('notifications/tools/list_changed reaches the runtime: the next turn is offered the new tool and can call it; a removed one is unavailable', async () => {
    const server = await startTestMcpServer([]);
    server.tools.push({
      name: 'grow',
      call: async () => {
        // The server gains a tool and loses this one, and says so, while the run goes on.
        server.tools.splice(0, server.tools.length, { name: 'fresh' });
        await server.listChanged();
        return { content: [{ type: 'text', text: 'grown' }] };
      },
    });
    try {
      const toolset = await connect({ name: 'kb', transport: { url: server.url } });
      const relisted = new Promise<void>((resolve) => {
        toolset.onToolsChanged = () => resolve();
      });
      const offered: string[][] = [];
      const seen = (input: { tools: { name: string }[] }) =>
        offered.push(input.tools.map((tool) => tool.name));
      const runtime = createRuntime({
        agent: { id: 'relist' },
        tools: toolset.tools,
        planner: {
          planStart: async (input) => {
            seen(input);
            return { toolCalls: [{ name: 'kb.grow', input: {} }] };
          },
          planResume: async (input) => {
            seen(input);
            if (offered.length === 2) {
              await relisted;
              return {
                toolCalls: [
                  { name: 'kb.fresh', input: {} },
                  { name: 'kb.grow', input: {} },
                ],
              };
            }
            return { finalResponse: { text: 'done' } };
          },
        },
      });
      try {
        const outcome = await runtime.start({ messages: [{ role: 'user', content: 'go' }] }).result();
        expect(outcome.status).toBe('completed');
        expect(offered[0]).toEqual(['kb.grow']);
        expect(offered[2]).toEqual(['kb.fresh']);
        const second = outcome.toolResults.filter((result) => result.toolCallId.includes(':t2:'));
        const fresh = second.find((result) => result.name === 'kb.fresh');
        const gone = second.find((result) => result.name === 'kb.grow');
        expect(fresh?.result).toBe('{}');
        expect(gone?.retryHint?.reason).toBe('tool_unavailable');
        expect(runtime.listTools().map((tool) => tool.id)).toEqual(['kb.fresh']);
      } finally {
        await runtime.close();
      }
    } finally {
      await server.close();
    }
  });

  it('one whose id collides with a local tool is skipped with a warning; createRuntime does not throw', async () => {
    const server = await startTestMcpServer([{ name: 'lookup' }, { name: 'other' }]);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const toolset = await connect({ name: 'kb', transport: { url: server.url } });
      const local = defineTool({
        id: 'kb.lookup',
        description: 'The app’s own lookup',
        input: z.object({}),
        execute: () => 'local',
      });
      const runtime = createRuntime({
        agent: { id: 'collide' },
        tools: [...toolset.tools, local],
        planner: scriptedPlanner([
          { toolCalls: [{ name: 'kb.lookup', input: {} }] },
          { finalResponse: { text: 'ok' } },
        ]),
      });
      try {
        expect(runtime.listTools().map((tool) => tool.id)).toEqual(['kb.other', 'kb.lookup']);
        expect(warn).toHaveBeenCalledWith(expect.stringMatching(/MCP tool kb\.lookup skipped: another tool/));
        const outcome = await runtime.start({ messages: [{ role: 'user', content: 'go' }] }).result();
        expect(outcome.toolResults[0]?.result).toBe('local');
        expect(server.log.calls).toHaveLength(0);
      } finally {
        await runtime.close();
      }
    } finally {
      warn.mockRestore();
      await server.close();
    }
  });
});
