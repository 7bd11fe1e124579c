import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A throwaway HTTP server on 127.0.0.1 (port 0: the OS picks a free one) that serves fixed
 * texts by path, for tests of code that downloads files. Paths not listed answer 404.
 *
 * ```ts
 * const server = await startFileServer({ '/data/a.json': '{"id": 1}\n' });
 * await fetch(`${server.url}/data/a.json`);
 * server.requests; // ['/data/a.json']
 * await server.close();
 * ```
 */
export interface FileServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

export type ServedFile = string | { status: number; body?: string };

export async function startFileServer(files: Record<string, ServedFile>): Promise<FileServer> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
    requests.push(path);
    const file = files[path];
    if (file === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    const { status, body } = typeof file === 'string' ? { status: 200, body: file } : file;
    response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(body ?? '');
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => closeServer(server),
  };
}

/**
 * A URL on 127.0.0.1 where nothing listens: a server is started on a free port and closed, so
 * connecting gets ECONNREFUSED (the "server is down" case).
 */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  const port = await listen(server);
  await closeServer(server);
  return `http://127.0.0.1:${port}`;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}
