import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesRunning } from './support/mcp-processes.ts';

/**
 * `toolwarden mcp serve` and `toolwarden catalog` on the example's config (issue 13, examples/mcp):
 * the command itself, as a user runs it, with the SDK's client over stdio.
 */

const BIN = join(process.cwd(), 'bin', 'toolwarden.js');
const CONFIG = join(process.cwd(), 'examples', 'mcp', 'gateway.config.ts');

describe('toolwarden mcp serve / catalog (examples/mcp/gateway.config.ts)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-mcp-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes tool_schemas.json in Goa-AI’s shape, and with --served only what the gateway serves', async () => {
    const out = join(dir, 'tool_schemas.json');
    const catalog = async (...extra: string[]) => {
      await promisify(execFile)(
        process.execPath,
        [BIN, 'catalog', '--config', CONFIG, '--out', out, ...extra],
        {
          env: { ...process.env, TOOLWARDEN_MCP_DIR: dir },
        },
      );
      const { tools } = JSON.parse(await readFile(out, 'utf8')) as { tools: Record<string, unknown>[] };
      return new Map(tools.map((tool) => [tool.id, tool]));
    };
    const all = await catalog();
    expect(all.get('text.word_count')).toMatchObject({
      service: 'mcp-gateway',
      toolset: 'text',
      title: 'Word count',
      tags: ['read-only', 'idempotent'],
      payload: { schema: { type: 'object', properties: { text: { type: 'string' } } } },
      result: { schema: { type: 'object' } },
      confirmation: { required: false },
    });
    expect(all.get('fs.write_file')).toMatchObject({
      toolset: 'fs',
      title: 'Write File', // the server's MCP title
      tags: expect.arrayContaining(['mcp', 'destructive']),
    });
    expect(all.has('fs.move_file')).toBe(true);
    const served = await catalog('--served');
    expect(served.has('fs.move_file')).toBe(false); // the config's denylist: never served
    expect(served.has('text.word_count')).toBe(true);
    expect(served.size).toBeLessThan(all.size);
  });

  it('serves HTTP with the security and session options of the command line', async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'mcp',
        'serve',
        '--config',
        CONFIG,
        '--port',
        '0',
        '--allowed-host',
        'mcp.internal',
        '--max-sessions',
        '1',
        '--idle-timeout',
        '5',
      ],
      { env: { ...process.env, TOOLWARDEN_MCP_DIR: dir }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let said = '';
        child.stderr!.on('data', (chunk: Buffer) => {
          said += chunk.toString('utf8');
          const found = /toolwarden MCP gateway on (http:\S+)/.exec(said);
          if (found) resolve(found[1]!);
        });
        child.once('exit', (code) => reject(new Error(`mcp serve exited ${code}: ${said}`)));
      });
      const initialize = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const target = new URL(url);
          request(
            {
              host: target.hostname,
              port: target.port,
              path: '/mcp',
              method: 'POST',
              headers: {
                host,
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
              },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          )
            .on('error', reject)
            .end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: 1,
                method: 'initialize',
                params: {
                  protocolVersion: '2025-06-18',
                  capabilities: {},
                  clientInfo: { name: 'c', version: '1' },
                },
              }),
            );
        });
      expect(await initialize('attacker.example')).toBe(421);
      expect(await initialize('mcp.internal:8080')).toBe(200); // --allowed-host
      expect(await initialize('127.0.0.1')).toBe(503); // --max-sessions 1
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('exits non-zero, saying why, and closes its MCP servers when it cannot serve: a port in use, 0.0.0.0 without --token (issue 39 item 5)', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      for (const [args, reason] of [
        [['--port', port], /cannot listen on 127\.0\.0\.1:\d+: the port is in use/],
        [['--port', '0', '--host', '0.0.0.0'], /binding 0\.0\.0\.0 \(not loopback\) requires a bearer token/],
      ] as const) {
        const sandbox = await mkdtemp(join(dir, 'cannot-serve-'));
        const child = spawn(process.execPath, [BIN, 'mcp', 'serve', '--config', CONFIG, ...args], {
          env: { ...process.env, TOOLWARDEN_MCP_DIR: sandbox },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let said = '';
        child.stderr!.on('data', (chunk: Buffer) => {
          said += chunk.toString('utf8');
        });
        const code = await new Promise<number | null>((resolve) => {
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            resolve(-1);
          }, 30_000);
          child.once('exit', (exitCode) => {
            clearTimeout(timer);
            resolve(exitCode);
          });
        });
        expect(code, said).toBe(1);
        expect(said).toMatch(reason);
        // The filesystem server was started with the sandbox as its argument: it is gone too.
        await expect.poll(() => processesRunning(sandbox), { timeout: 5_000 }).toEqual([]);
      }
    } finally {
      taken.close();
    }
  }, 90_000);

  it('serves the config over stdio: policies hold (a denied tool is hidden and refused), calls work', async () => {
    const client = new Client({ name: 'cli-test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', 'serve', '--stdio', '--config', CONFIG],
        env: { ...getDefaultEnvironment(), TOOLWARDEN_MCP_DIR: dir },
        stderr: 'pipe',
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('text.word_count');
      expect(names).toContain('fs.list_allowed_directories');
      expect(names).not.toContain('fs.move_file');
      const count = await client.callTool({ name: 'text.word_count', arguments: { text: 'one two three' } });
      expect(count.structuredContent).toEqual({ words: 3 });
      const moved = await client.callTool({
        name: 'fs.move_file',
        arguments: { source: 'a', destination: 'b' },
      });
      expect(moved.isError).toBe(true);
      expect(JSON.stringify(moved.content)).toMatch(/tool_unavailable/);
      const listed = await client.callTool({ name: 'fs.list_allowed_directories', arguments: {} });
      expect(JSON.stringify(listed.content)).toContain(dir);
      // The filesystem server's isError for a missing file reaches the client as a hint, and the
      // server behind the gateway is not restarted for it (issue 25 item 1).
      const missing = await client.callTool({
        name: 'fs.read_text_file',
        arguments: { path: join(dir, 'missing.txt') },
      });
      expect(missing.isError).toBe(true);
      const said = (missing.content as { text: string }[])[0]!.text;
      expect(said).toMatch(/ENOENT: no such file or directory/);
      expect(said).toMatch(/reason: invalid_arguments/);
      expect(said).not.toMatch(/tool_unavailable|reconnect/);
    } finally {
      await client.close();
    }
  });
});
