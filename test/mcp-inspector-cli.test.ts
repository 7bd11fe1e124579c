import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpGateway, serveMcp } from '../mcp/index.ts';
import { lookupTool } from './support/kb-lookup-tool.ts';

/**
 * The official MCP inspector CLI (`@modelcontextprotocol/inspector` 2.12.0 `--cli`, pinned in
 * .ci/inspector, installed by .ci/run) against the gateway over streamable HTTP (issue 25): what
 * a user of the inspector sees. Each invocation is a new MCP session. With CI=true the CLI must be
 * there; elsewhere the test is skipped until `npm ci --prefix .ci/inspector --ignore-scripts`.
 */

const CLI = join(
  process.cwd(),
  '.ci/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);
const installed = existsSync(CLI);
if (process.env.CI === 'true' && !installed) {
  throw new Error(
    `The inspector CLI is not installed at ${CLI}: npm ci --prefix .ci/inspector --ignore-scripts`,
  );
}
if (!installed) {
  console.warn(
    `skipped: the official MCP inspector CLI tests (test/mcp-inspector-cli.test.ts): not installed; npm ci --prefix .ci/inspector --ignore-scripts`,
  );
}

/** Runs the CLI: its JSON output, exit code (5 when a call answers `isError`) and stderr. */
async function inspector(
  url: string,
  ...args: string[]
): Promise<{ output: Record<string, unknown>; code: number; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [CLI, '--cli', url, '--transport', 'http', ...args],
      { timeout: 60_000 },
    );
    return { output: JSON.parse(stdout) as Record<string, unknown>, code: 0, stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    if (typeof failed.code !== 'number' || !failed.stdout) throw error;
    return {
      output: JSON.parse(failed.stdout) as Record<string, unknown>,
      code: failed.code,
      stderr: failed.stderr ?? '',
    };
  }
}

describe.skipIf(!installed)('the official MCP inspector CLI against the gateway', () => {
  let gateway: McpGateway;
  beforeAll(async () => {
    gateway = await serveMcp({ tools: [lookupTool], telemetry: false }, { transport: { port: 0 } });
  });
  afterAll(async () => {
    await gateway?.close();
  });
  /** `tools/call` of kb.lookup on refunds with `limit` (over 10 is refused at the boundary). */
  const callLookup = (limit: number) =>
    inspector(
      gateway.url!,
      '--method',
      'tools/call',
      '--tool-name',
      'kb.lookup',
      '--tool-arg',
      'topic=refunds',
      '--tool-arg',
      `limit=${limit}`,
    );

  it('tools/list shows the tool with its title, schema and annotations', async () => {
    const { output, code } = await inspector(gateway.url!, '--method', 'tools/list');
    expect(code).toBe(0);
    const listed = output as { tools: Record<string, unknown>[] };
    expect(listed.tools).toHaveLength(1);
    expect(listed.tools[0]).toMatchObject({
      name: 'kb.lookup',
      title: 'Look up an article',
      inputSchema: { type: 'object', required: ['topic', 'limit'] },
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
  });

  it('a good call returns the structured result', async () => {
    const { output: result, code } = await callLookup(2);
    expect(code).toBe(0);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ topic: 'refunds', articles: ['refunds-1', 'refunds-2'] });
  });

  it('a bad call comes back as isError with the hint text a model can act on', async () => {
    const { output, code, stderr } = await callLookup(50);
    console.info(
      JSON.stringify({ code, stderr: stderr.slice(0, 300), output: JSON.stringify(output).slice(0, 300) }),
    );
    const result = output as {
      isError?: boolean;
      content: { text: string }[];
      _meta?: Record<string, unknown>;
    };
    expect(result.isError).toBe(true);
    const text = result.content[0]!.text;
    expect(text).toMatch(/Argument validation failed for kb\.lookup: limit: Too big/);
    expect(text).toMatch(/reason: invalid_arguments/);
    expect(text).toMatch(/example input: \{"topic":"refunds","limit":3\}/);
    expect(result._meta?.['toolwarden/retry']).toMatchObject({ retryHint: { reason: 'invalid_arguments' } });
  });
});
