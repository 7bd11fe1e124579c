import { request as httpRequest } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GATEWAY_CAPS, type McpGateway, mcpToolset, SESSION_ENDED_KEY, serveMcp } from '../mcp/index.ts';
import { circuitBreaker } from '../policies/builtins/circuit-breaker.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolUnavailableError } from '../tools/tool-error.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { lookupTool } from './support/kb-lookup-tool.ts';
import { startTestMcpServer } from './support/mcp-test-server.ts';

/**
 * A runtime's tools served over MCP (issue 13, docs/mcp.md §Gateway), driven by the SDK's own
 * `Client` over streamable HTTP and stdio: every call through the boundary, the policies of the
 * client's session and telemetry.
 */

let flakyCalls = 0;
const flaky = defineTool({
  id: 'svc.flaky',
  description: 'A service that is down',
  input: z.object({}),
  execute: () => {
    flakyCalls += 1;
    throw new ToolUnavailableError('backend down');
  },
});
const wipe = defineTool({
  id: 'disk.wipe',
  description: 'Wipes a disk',
  input: z.object({ disk: z.string() }),
  tags: ['destructive'],
  requiresConfirmation: true,
  execute: ({ disk }) => `wiped ${disk}`,
});

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function httpClient(gateway: McpGateway, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
  opened.push(client);
  return client;
}

/** Counts the `notifications/tools/list_changed` a client receives. */
function countListChanged(client: Client): { count: number } {
  const seen = { count: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen.count += 1;
  });
  return seen;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('serveMcp over streamable HTTP, driven by the SDK client', () => {
  it('lists tools with annotations, answers good calls, and returns a hint the client model can act on for a bad one', async () => {
    const gateway = await serveMcp({ tools: [lookupTool], telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await httpClient(gateway);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['kb.lookup']);
    expect(tools[0]?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });

    const ok = await client.callTool({ name: 'kb.lookup', arguments: { topic: 'refunds', limit: 2 } });
    expect(ok.isError).toBeFalsy();
    expect(ok.structuredContent).toEqual({ topic: 'refunds', articles: ['refunds-1', 'refunds-2'] });

    const bad = await client.callTool({ name: 'kb.lookup', arguments: { topic: 'refunds', limit: 50 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/reason: invalid_arguments/);
    expect(text(bad)).toMatch(/example input: \{"topic":"refunds","limit":3\}/);
    expect(bad.structuredContent).toMatchObject({
      retryHint: { reason: 'invalid_arguments', tool: 'kb.lookup' },
    });

    const unknown = await client.callTool({ name: 'kb.lookpu', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/kb\.lookup/); // the closest name
  });

  it('keeps policy state per client session: a circuit breaker opens after failures and hides the tool', async () => {
    flakyCalls = 0;
    const gateway = await serveMcp(
      {
        tools: [flaky, lookupTool],
        policies: [circuitBreaker({ failures: 2, cooldownMs: 60_000 })],
        telemetry: false,
      },
      { transport: { port: 0 } },
    );
    opened.push(gateway);
    const client = await httpClient(gateway);
    const changes = countListChanged(client);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect((await client.listTools()).tools).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      const failed = await client.callTool({ name: 'svc.flaky', arguments: {} });
      expect(text(failed)).toMatch(/reason: tool_unavailable/);
    }
    await expect.poll(() => changes.count).toBe(1); // the breaker opened: the served set changed
    const refused = await client.callTool({ name: 'svc.flaky', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(flakyCalls).toBe(2); // the open breaker kept the third call from the backend
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['kb.lookup']);
    // Another client's session has its own breaker.
    const other = await httpClient(gateway);
    expect((await other.listTools()).tools.map((tool) => tool.name)).toEqual(['svc.flaky', 'kb.lookup']);
  });

  it('asks a confirmation of the client by elicitation, and denies it when the client cannot answer', async () => {
    const gateway = await serveMcp({ tools: [wipe], telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    const asking = await httpClient(gateway, { elicitation: {} });
    const asked: string[] = [];
    asking.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { approve: true } };
    });
    const approved = await asking.callTool({ name: 'disk.wipe', arguments: { disk: 'sdb' } });
    expect(text(approved)).toBe('wiped sdb');
    expect(asked[0]).toMatch(/Approve the call to disk.wipe/);

    const silent = await httpClient(gateway);
    const denied = await silent.callTool({ name: 'disk.wipe', arguments: { disk: 'sdb' } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/not approved/);
  });

  it('one span per call in the session’s trace, with the MCP session as conversation id', async () => {
    const { exporter, provider } = inMemoryTracing();
    const gateway = await serveMcp(
      { tools: [lookupTool], telemetry: { tracerProvider: provider } },
      { transport: { port: 0 } },
    );
    opened.push(gateway);
    const client = await httpClient(gateway);
    await client.callTool({ name: 'kb.lookup', arguments: { topic: 'a', limit: 1 } });
    await client.callTool({ name: 'kb.lookup', arguments: { topic: 'b', limit: 1 } });
    const transport = client.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId!;
    await transport.terminateSession(); // DELETE /mcp: the session, and its run, end
    await expect
      .poll(() => exporter.getFinishedSpans().some((span) => span.name.startsWith('invoke_agent')))
      .toBe(true);
    const spans = exporter.getFinishedSpans();
    const calls = spans.filter((span) => span.name === 'execute_tool kb.lookup');
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((span) => span.spanContext().traceId)).size).toBe(1);
    const root = spans.find((span) => span.name.startsWith('invoke_agent'))!;
    expect(root.attributes['gen_ai.conversation.id']).toBe(sessionId);
  });

  it('refuses a bind off loopback without a token, and a request without the token when one is set', async () => {
    await expect(serveMcp([lookupTool], { transport: { port: 0, host: '0.0.0.0' } })).rejects.toThrow(
      /requires a bearer token/,
    );
    const gateway = await serveMcp(
      { tools: [lookupTool], telemetry: false },
      { transport: { port: 0, token: 's3cret' } },
    );
    opened.push(gateway);
    const refused = await fetch(gateway.url!, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(401);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url!), {
        requestInit: { headers: { authorization: 'Bearer s3cret' } },
      }),
    );
    opened.push(client);
    expect((await client.listTools()).tools).toHaveLength(1);
  });

  it('fronts another MCP server: its tools behind the boundary, a bad call never reaches it', async () => {
    const upstream = await startTestMcpServer([
      {
        name: 'search',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      },
    ]);
    opened.push(upstream);
    const toolset = await mcpToolset({ name: 'up', transport: { url: upstream.url }, onWarning: () => {} });
    opened.push(toolset);
    const gateway = await serveMcp({ tools: toolset.tools, telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    const client = await httpClient(gateway);
    const bad = await client.callTool({ name: 'up.search', arguments: {} });
    expect(text(bad)).toMatch(/missing fields: q/);
    const good = await client.callTool({ name: 'up.search', arguments: { q: 'mcp' } });
    expect(good.isError).toBeFalsy();
    expect(upstream.log.calls.map((call) => call.arguments)).toEqual([{ q: 'mcp' }]);
  });
});

/** A raw HTTP request, so that `Host` and `Origin` can be forged (fetch will not send a Host of our choosing). */
function rawPost(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rebinder', version: '1' } },
};

describe('serveMcp sessions: what ends them, and how a client is told', () => {
  it('a capped session says why in _meta, lists no tools, and sends list_changed', async () => {
    const gateway = await serveMcp(
      { tools: [lookupTool], caps: { ...GATEWAY_CAPS, maxToolCalls: 2 }, telemetry: false },
      { transport: { port: 0 } },
    );
    opened.push(gateway);
    const client = await httpClient(gateway);
    const changes = countListChanged(client);
    expect((await client.listTools()).tools).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      const ok = await client.callTool({ name: 'kb.lookup', arguments: { topic: 'a', limit: 1 } });
      expect(ok.isError).toBeFalsy();
    }
    const refused = await client.callTool({ name: 'kb.lookup', arguments: { topic: 'a', limit: 1 } });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.[SESSION_ENDED_KEY]).toEqual({
      reason: 'tool_cap',
      message: 'the run finalized (tool_cap)',
    });
    await expect.poll(() => changes.count).toBe(1);
    const listed = await client.listTools();
    expect(listed.tools).toEqual([]); // it lists nothing it would refuse
    expect(listed._meta?.[SESSION_ENDED_KEY]).toMatchObject({ reason: 'tool_cap' });
  });

  it('refuses a session over maxSessions with 503 and Retry-After, and takes one again when another ends', async () => {
    const gateway = await serveMcp(
      { tools: [lookupTool], telemetry: false },
      { transport: { port: 0, maxSessions: 2 } },
    );
    opened.push(gateway);
    const first = await httpClient(gateway);
    await httpClient(gateway);
    const refused = await rawPost(gateway.url!, {}, INITIALIZE);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('60');
    expect(JSON.parse(refused.body).error.message).toMatch(/Too many MCP sessions: 2 are open/);
    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    await expect.poll(() => gateway.sessions()).toBe(1);
    expect((await rawPost(gateway.url!, {}, INITIALIZE)).status).toBe(200);
  });

  it('abandoned sessions end after the idle timeout: runs complete and memory is freed as with DELETE', async () => {
    const gc = exposeGc();
    const count = 400;
    const idleTimeoutMs = 1_500;
    const gateway = await serveMcp(
      { tools: [lookupTool], telemetry: false },
      { transport: { port: 0, idleTimeoutMs, maxSessions: 1_000 } },
    );
    opened.push(gateway);
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'kb.lookup', arguments: { topic: 'a', limit: 1 } },
    };
    /** A client that initializes, makes one call and vanishes (no DELETE, no GET stream). */
    const session = async () => {
      const init = await rawPost(gateway.url!, {}, INITIALIZE);
      const headers = {
        'mcp-session-id': String(init.headers['mcp-session-id']),
        'mcp-protocol-version': '2025-06-18',
      };
      await rawPost(gateway.url!, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect((await rawPost(gateway.url!, headers, call)).body).toContain('a-1');
      return headers;
    };
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    /** `n` sessions made by `make`, 20 at a time. */
    const many = async (n: number, make: () => Promise<unknown>) => {
      for (let i = 0; i < n; i += 20) await Promise.all(Array.from({ length: 20 }, make));
    };
    const remove = (headers: Record<string, string>) =>
      new Promise<void>((resolve, reject) => {
        const target = new URL(gateway.url!);
        httpRequest(
          { host: target.hostname, port: target.port, path: '/mcp', method: 'DELETE', headers },
          (res) => {
            res.resume().on('end', resolve);
          },
        )
          .on('error', reject)
          .end();
      });
    // Warm up (modules, JIT), then measure sessions closed with DELETE against abandoned ones.
    for (let i = 0; i < 20; i++) await session();
    await expect.poll(() => gateway.sessions(), { timeout: 10_000 }).toBe(0);
    const base = heap();
    const closed = 100;
    await many(closed, async () => remove(await session()));
    expect(gateway.sessions()).toBe(0);
    const closedPer = (heap() - base) / closed;
    const before = heap();
    let last: Record<string, string> = {};
    await many(count, async () => {
      last = await session();
    });
    expect(gateway.sessions()).toBeGreaterThan(0);
    await expect.poll(() => gateway.sessions(), { timeout: 20_000, interval: 200 }).toBe(0);
    // The run behind an abandoned session finalized (it was `running`, for a day, before).
    await expect
      .poll(async () => (await gateway.runtime.load(`mcp-${last['mcp-session-id']}`))?.status)
      .toBe('completed');
    const abandonedPer = (heap() - before) / count;
    console.info(
      `heap per session: abandoned, after the idle timeout ${(abandonedPer / 1024).toFixed(1)} KiB; closed with DELETE ${(closedPer / 1024).toFixed(1)} KiB`,
    );
    expect(abandonedPer).toBeLessThan(Math.max(closedPer, 0) + 4 * 1024);
  }, 120_000);
});

/** `global.gc`, switched on for this process when the test runner did not expose it. */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('serveMcp against DNS rebinding (forged Host and Origin)', () => {
  let reads = 0;
  const secret = defineTool({
    id: 'fs.read_secret',
    description: 'Reads a secret file',
    input: z.object({}),
    execute: () => {
      reads += 1;
      return 'the secret';
    },
  });

  it('refuses a forged Host with 421 and a foreign Origin with 403 before any session opens or tool runs', async () => {
    reads = 0;
    const gateway = await serveMcp({ tools: [secret], telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    const port = new URL(gateway.url!).port;
    const forgedHost = await rawPost(gateway.url!, { host: `attacker.example:${port}` }, INITIALIZE);
    expect(forgedHost.status).toBe(421);
    expect(forgedHost.headers['mcp-session-id']).toBeUndefined();
    const forgedOrigin = await rawPost(gateway.url!, { origin: 'http://attacker.example' }, INITIALIZE);
    expect(forgedOrigin.status).toBe(403);
    expect(forgedOrigin.headers['mcp-session-id']).toBeUndefined();
    expect(gateway.sessions()).toBe(0);

    // A session opened from loopback: a request in it with a foreign Origin is refused too.
    const ok = await rawPost(gateway.url!, { origin: `http://localhost:${port}` }, INITIALIZE);
    expect(ok.status).toBe(200);
    const sessionId = String(ok.headers['mcp-session-id']);
    await rawPost(
      gateway.url!,
      { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      {
        jsonrpc: '2.0',
        method: 'notifications/initialized',
      },
    );
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'fs.read_secret', arguments: {} },
    };
    const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const rebound = await rawPost(gateway.url!, { ...session, origin: 'http://attacker.example' }, call);
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('the secret');
    const reboundHost = await rawPost(gateway.url!, { ...session, host: 'attacker.example' }, call);
    expect(reboundHost.status).toBe(421);
    expect(reads).toBe(0);
    // The same call from loopback is answered: the checks are what refused the others.
    const allowed = await rawPost(gateway.url!, session, call);
    expect(allowed.body).toContain('the secret');
    expect(reads).toBe(1);
  });

  it('accepts the names and origins it is told to, and a bearer token compared whole', async () => {
    const gateway = await serveMcp(
      { tools: [secret], telemetry: false },
      {
        transport: {
          port: 0,
          token: 's3cret',
          allowedHosts: ['mcp.internal'],
          allowedOrigins: ['https://app.example'],
        },
      },
    );
    opened.push(gateway);
    const auth = { authorization: 'Bearer s3cret' };
    expect((await rawPost(gateway.url!, { ...auth, host: 'mcp.internal:8443' }, INITIALIZE)).status).toBe(
      200,
    );
    expect((await rawPost(gateway.url!, { ...auth, origin: 'https://app.example' }, INITIALIZE)).status).toBe(
      200,
    );
    expect(
      (await rawPost(gateway.url!, { ...auth, origin: 'https://app.example.evil' }, INITIALIZE)).status,
    ).toBe(403);
    expect((await rawPost(gateway.url!, { ...auth, host: 'mcp.internal.evil' }, INITIALIZE)).status).toBe(
      421,
    );
    expect((await rawPost(gateway.url!, { authorization: 'Bearer s3cre' }, INITIALIZE)).status).toBe(401);
    expect((await rawPost(gateway.url!, { authorization: 'Bearer s3cretX' }, INITIALIZE)).status).toBe(401);
  });
});

describe('serveMcp: what docs/mcp.md §Gateway security promises, from outside (issue 39 item 5)', () => {
  it('reads Host as a host name: LOCALHOST and any 127/8 address pass (the SDK’s exact check refused them with 403)', async () => {
    const gateway = await serveMcp({ tools: [lookupTool], telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    const port = new URL(gateway.url!).port;
    for (const host of [`LOCALHOST:${port}`, `127.0.0.2:${port}`, `127.1.2.3:${port}`, 'Localhost']) {
      expect((await rawPost(gateway.url!, { host }, INITIALIZE)).status, host).toBe(200);
    }
    expect((await rawPost(gateway.url!, { host: `128.0.0.1:${port}` }, INITIALIZE)).status).toBe(421);
  });

  it('takes the Bearer scheme in any case (RFC 9110), the token still compared whole', async () => {
    const gateway = await serveMcp(
      { tools: [lookupTool], telemetry: false },
      { transport: { port: 0, token: 's3cret' } },
    );
    opened.push(gateway);
    for (const authorization of ['bearer s3cret', 'BEARER s3cret', 'Bearer  s3cret']) {
      expect((await rawPost(gateway.url!, { authorization }, INITIALIZE)).status, authorization).toBe(200);
    }
    for (const authorization of ['bearer S3CRET', 'Basic s3cret', 'bearers3cret']) {
      expect((await rawPost(gateway.url!, { authorization }, INITIALIZE)).status, authorization).toBe(401);
    }
  });

  it('bound to 0.0.0.0 with a token it answers this machine’s addresses and host name; another name gets 421 naming --allowed-host', async () => {
    const gateway = await serveMcp(
      { tools: [lookupTool], telemetry: false },
      { transport: { port: 0, host: '0.0.0.0', token: 't' } },
    );
    opened.push(gateway);
    const port = new URL(gateway.url!).port;
    const url = `http://127.0.0.1:${port}/mcp`;
    const auth = { authorization: 'Bearer t' };
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
    for (const host of [`${hostname()}:${port}`, ...(lan === undefined ? [] : [`${lan}:${port}`])]) {
      expect((await rawPost(url, { ...auth, host }, INITIALIZE)).status, host).toBe(200);
    }
    const other = await rawPost(url, { ...auth, host: `mcp.example:${port}` }, INITIALIZE);
    expect(other.status).toBe(421);
    expect(other.body).toMatch(/--allowed-host NAME \(transport\.allowedHosts\)/);
  });

  it('a port in use: serveMcp rejects naming the address, and nothing is left listening', async () => {
    const first = await serveMcp({ tools: [lookupTool], telemetry: false }, { transport: { port: 0 } });
    opened.push(first);
    const port = Number(new URL(first.url!).port);
    await expect(
      serveMcp({ tools: [lookupTool], telemetry: false }, { transport: { port } }),
    ).rejects.toThrow(`cannot listen on 127.0.0.1:${port}: the port is in use`);
  });
});

describe('serveMcp over stdio', () => {
  it('serves a child process’s tools to the SDK client over stdio', async () => {
    const client = new Client({ name: 'stdio-client', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', join(import.meta.dirname, 'support', 'mcp-gateway-stdio.ts')],
        cwd: process.cwd(),
        stderr: 'pipe',
      }),
    );
    opened.push(client);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['math.add']);
    const sum = await client.callTool({ name: 'math.add', arguments: { a: 2, b: 40 } });
    expect(sum.structuredContent).toEqual({ sum: 42 });
    const bad = await client.callTool({ name: 'math.add', arguments: { a: 2 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/missing fields: b/);
    expect(bad._meta?.['toolwarden/retry']).toMatchObject({ retryHint: { reason: 'missing_fields' } });
  });
});

/** Issue 24 item 4 over MCP (safety): approve with edits by elicitation; the turn cap of a session. */
const strictWipe = defineTool({
  id: 'disk.wipe',
  description: 'Wipes a disk',
  input: z.object({ disk: z.string().regex(/^sd[a-z]$/) }),
  requiresConfirmation: true,
  execute: ({ disk }) => `wiped ${disk}`,
});

describe('the MCP gateway: approve with edits by elicitation', () => {
  it('runs the call with the client’s edit; a refused edit is asked again with why', async () => {
    const gateway = await serveMcp({ tools: [strictWipe], telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    const client = await httpClient(gateway, { elicitation: {} });
    const asked: { message: string; fields: string[] }[] = [];
    const answers = [
      { approve: true, input: '{"disk":"/dev/sda"}' }, // refused by the tool's schema
      { approve: true, input: '{"disk":"sdc"}' },
    ];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const params = request.params as { message: string; requestedSchema: { properties: object } };
      asked.push({ message: params.message, fields: Object.keys(params.requestedSchema.properties) });
      return { action: 'accept', content: answers.shift()! };
    });

    const result = await client.callTool({ name: 'disk.wipe', arguments: { disk: 'sdb' } });

    expect(text(result)).toBe('wiped sdc');
    expect(asked).toHaveLength(2);
    expect(asked[0]!.fields).toEqual(['approve', 'input']);
    expect(asked[1]!.message).toMatch(/^Your edited input was refused: .*Argument validation failed/);
  });

  it('a session runs past the default turn cap (each call is a turn)', async () => {
    const ping = defineTool({
      id: 'svc.ping',
      description: 'Ping',
      input: z.object({ n: z.number() }),
      execute: ({ n }) => `pong ${n}`,
    });
    const gateway = await serveMcp({ tools: [ping], telemetry: false }, { transport: { port: 0 } });
    opened.push(gateway);
    const client = await httpClient(gateway);
    // Each call different: the same call with the same result 5 times is refused by noProgress (on by default).
    for (let i = 0; i < 55; i++) {
      expect(text(await client.callTool({ name: 'svc.ping', arguments: { n: i } }))).toBe(`pong ${i}`);
    }
  }, 60_000);
});
