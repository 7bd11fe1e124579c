import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CliUsageError,
  checkModelServer,
  checkReportFolder,
  packageVersion,
  portOption,
} from './cli-checks.ts';
import { evalBfclCommand } from './eval-bfcl.ts';
import { evalBfclModelCommand } from './eval-bfcl-model.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port nothing listens on: one the system gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const io = () => {
  let out = '';
  const write = (chunk: string) => {
    out += chunk;
    return true;
  };
  const sink = { write } as unknown as NodeJS.WritableStream;
  return { stdout: sink, stderr: sink, text: () => out };
};

describe('command-line checks (issue 28 item 7)', () => {
  it('--port takes 0..65535 and refuses 99999 with one message', () => {
    expect(portOption('0')).toBe(0);
    expect(portOption('65535')).toBe(65_535);
    expect(() => portOption('99999')).toThrow('"99999" is not a port');
    expect(() => portOption('-1')).toThrow('is not a port');
  });

  it('--json into a folder that does not exist is refused, naming the folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolwarden-cli-'));
    expect(() => checkReportFolder(join(dir, 'r.json'))).not.toThrow();
    expect(() => checkReportFolder('/no/such/dir/r.json')).toThrow(
      '--json /no/such/dir/r.json: the folder /no/such/dir does not exist',
    );
    expect(() => checkReportFolder(undefined)).not.toThrow();
  });

  it('eval bfcl --json /no/such/dir/r.json fails before any run and creates nothing', async () => {
    const out = io();
    await expect(evalBfclCommand({ json: '/no/such/dir/r.json', limit: '1' }, out)).rejects.toThrow(
      CliUsageError,
    );
    expect(out.text()).toBe('');
  });

  it('a model URL nothing listens on fails fast, naming the URL and the refused connection', async () => {
    const port = await closedPort();
    const started = Date.now();
    const failure = await checkModelServer(new URL(`http://127.0.0.1:${port}/v1`)).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(CliUsageError);
    expect((failure as Error).message).toContain(
      `--model http://127.0.0.1:${port}/v1: no model server answers there (ECONNREFUSED)`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('eval bfcl --model with nothing listening rejects instead of printing a 0% table', async () => {
    const port = await closedPort();
    const out = io();
    await expect(
      evalBfclModelCommand({ model: `http://127.0.0.1:${port}/v1`, limit: '1' }, out),
    ).rejects.toThrow('no model server answers there');
    expect(out.text()).not.toContain('%');
  });

  it('any HTTP answer counts as a model server (some have no /models)', async () => {
    const server = createServer((_request, response) => response.writeHead(404).end());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await expect(checkModelServer(new URL(`http://127.0.0.1:${port}/v1`))).resolves.toBeUndefined();
  });

  it('a busy model server that accepts connections but answers late is not taken for an absent one', async () => {
    // llama.cpp's server answers one request at a time: /models may wait minutes behind a generation.
    const server = createServer(() => {});
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await expect(checkModelServer(new URL(`http://127.0.0.1:${port}/v1`), 200)).resolves.toBeUndefined();
  });

  it('--version is the package.json version', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(packageVersion()).toBe(pkg.version);
  });
});
