import type { Server } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import type { InspectionStore } from '../inspection-store.ts';
import { isLoopbackHost, isLoopbackOrigin, tokenMatches } from '../request-guard.ts';

/** Where the sockets are accepted and how large a message may be. */
export interface StatelySocketOptions {
  /** The server's own origin (`http://127.0.0.1:PORT`), to read request URLs against. */
  origin: string;
  token: string;
  /** Largest message accepted, bytes. */
  maxPayload: number;
}

/**
 * `/ws` upgrades: `@statelyai/inspect`'s WebSocket inspector (`createWebSocketInspector({ url })`)
 * sends its inspection events here, and the store shows them like native runs, one connection per
 * actor system (`ws1`, `ws2`, …). An upgrade needs a loopback `Host` (else 421) and `Origin`, and
 * the token (else 403); other paths get 404. A message that is not JSON is ignored.
 *
 * @returns the WebSocket server, for `close()`.
 */
export function acceptStatelySockets(
  server: Server,
  store: InspectionStore,
  options: StatelySocketOptions,
): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
  let connections = 0;
  server.on('upgrade', (request, socket, head) => {
    const reject = (status: number, reason: string) => {
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = new URL(request.url ?? '/', options.origin);
    if (!isLoopbackHost(request.headers.host)) return reject(421, 'Misdirected Request');
    if (!isLoopbackOrigin(request.headers.origin)) return reject(403, 'Forbidden');
    if (!tokenMatches(url.searchParams.get('token'), options.token)) return reject(403, 'Forbidden');
    if (url.pathname !== '/ws') return reject(404, 'Not Found');
    wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const connection = `ws${++connections}`;
      ws.on('message', (data) => {
        let message: unknown;
        try {
          message = JSON.parse(String(data));
        } catch {
          return; // not an inspection event
        }
        store.receiveStately(message, connection);
      });
      ws.on('error', () => ws.terminate());
    });
  });
  return wss;
}
