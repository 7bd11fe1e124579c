import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

/**
 * Starts the app on `hostname:port` (0: a free port).
 *
 * @returns the Node server and its origin (`http://127.0.0.1:PORT`, `http://[::1]:PORT`).
 * @throws the listen error (`EADDRINUSE`, …).
 */
export async function listen(
  app: Hono,
  hostname: string,
  port: number,
): Promise<{ server: Server; port: number; origin: string }> {
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve({ fetch: app.fetch, port, hostname }, () => resolve(created as Server)) as Server;
    created.once('error', reject);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    origin: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${bound}`,
  };
}
