/**
 * Issue 12, defect 6: the inspector's live stream had no client cap and no backpressure (1,000
 * clients blocked the process for 137 s; a client that never read made the server buffer without
 * limit). Streams are now capped (tested here); a client whose backlog passes
 * `maxSseBufferedBytes` is dropped (not yet shown by a test: loopback socket buffers absorbed
 * the backlog this test could make).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InspectionStore } from '../../inspector/inspection-store.ts';
import { type InspectorServer, startInspectorServer } from '../../inspector/inspector-server.ts';
import { toGraphModel } from '../../machines/diagram/graph-model.ts';
import { runMachine } from '../../machines/run-machine.ts';

const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><g data-state-id="run"></g></svg>';
let server: InspectorServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

/** Opens `/events` and never reads from it. */
function silentClient(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.write(
    `GET /events?token=t HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  socket.pause();
  sockets.push(socket);
  return socket;
}

const status = async (srv: InspectorServer) => {
  const controller = new AbortController();
  const response = await fetch(`${srv.origin}/events?token=t`, { signal: controller.signal });
  controller.abort();
  return response.status;
};

describe('the inspector live stream', () => {
  it('refuses streams past maxSseClients with 503', async () => {
    const store = new InspectionStore({ graph: toGraphModel(runMachine) });
    server = await startInspectorServer({ store, svg: SVG, token: 't', maxSseClients: 2 });
    silentClient(server.port);
    silentClient(server.port);
    await vi.waitFor(async () => expect(await status(server!)).toBe(503));
  });
});
