/**
 * Issue 12, defect 6: the inspector's live stream had no client cap and no backpressure (1,000
 * clients blocked the process for 137 s; a client that never read made the server buffer without
 * limit). Streams are now capped, and a client whose unsent backlog passes `maxSseBufferedBytes`
 * is dropped: 40 MB of events (400 of 100 KB) to a client that never reads (more than the loopback socket
 * buffers absorb) frees its slot.
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

/**
 * Opens `/events`, reads only its `hello` (for the stream id), opens `key` on that stream (so the
 * run's log is sent to it, as to a page showing the run), then never reads again.
 */
async function silentWatcher(srv: InspectorServer, key: string): Promise<Socket> {
  const socket = connect(srv.port, '127.0.0.1');
  sockets.push(socket);
  socket.write(
    `GET /events?token=t HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  const stream = await new Promise<string>((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /"stream":"([^"]+)"/.exec(text);
      if (!match) return;
      socket.off('data', onData);
      socket.pause();
      resolve(match[1]!);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  const opened = await fetch(`${srv.origin}/api/runs/${key}?token=t&stream=${stream}`);
  expect(opened.status).toBe(200);
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

  it('drops a client that never reads once its backlog passes maxSseBufferedBytes, freeing its slot', async () => {
    // No clipping here: each event is sent whole (100 KB), as an app's own sanitizer may allow.
    const store = new InspectionStore({
      graph: toGraphModel(runMachine),
      maxLog: 10,
      sanitize: (value) => value,
    });
    server = await startInspectorServer({
      store,
      svg: SVG,
      token: 't',
      maxSseClients: 1,
      maxSseBufferedBytes: 256 * 1024,
    });
    const note = 'x'.repeat(100_000);
    store.recordRunEvent({ type: 'run_started', runId: 'r1', at: 0, agentId: 'a', labels: {} } as never);
    // Only a page that has the run open is sent its log: this one opens it, then stops reading.
    await silentWatcher(server, 'r1');
    await vi.waitFor(async () => expect(await status(server!)).toBe(503));
    for (let i = 0; i < 400; i++) {
      store.recordRunEvent({ type: 'planner_note', runId: 'r1', at: i, turnId: 'r1:t1', note } as never);
      // Let the stream write: the backlog builds in the socket first, then in Node's buffer.
      if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await vi.waitFor(async () => expect(await status(server!)).toBe(200), { timeout: 10_000 });
  });
});
