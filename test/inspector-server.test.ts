import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { InspectionStore } from '../inspector/inspection-store.ts';
import {
  InspectorHostError,
  type InspectorServer,
  startInspectorServer,
} from '../inspector/inspector-server.ts';
import { isLoopbackHost, isLoopbackOrigin } from '../inspector/request-guard.ts';
import { toGraphModel } from '../machines/diagram/graph-model.ts';
import { runMachine } from '../machines/run-machine.ts';

const graph = toGraphModel(runMachine);
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" class="tw-chart"><g data-state-id="run"></g></svg>';
let server: InspectorServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(token = 'test-token') {
  const store = new InspectionStore({ graph });
  server = await startInspectorServer({ store, svg: SVG, token });
  return { store, server };
}

/** A raw GET, so the test controls the Host header (fetch would not let it). */
function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('inspector server access rules', () => {
  it('listens on 127.0.0.1 with a random port and a random token in the URL by default', async () => {
    const store = new InspectionStore({ graph });
    server = await startInspectorServer({ store, svg: SVG });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/);
    expect(server.port).toBeGreaterThan(0);
    expect(server.wsUrl).toBe(`ws://127.0.0.1:${server.port}/ws?token=${server.token}`);
  });

  it('answers 403 without the token or with a wrong one, on every path', async () => {
    const { server } = await start();
    for (const path of [
      '/',
      '/events',
      '/api/runs',
      '/api/graph',
      '/nope',
      '/?token=wrong',
      '/?token=test-toke',
    ]) {
      expect((await get(server.port, path)).status, path).toBe(403);
    }
  });

  it('answers 421 when the Host header is not loopback (DNS rebinding), token or not', async () => {
    const { server } = await start();
    for (const host of ['evil.example', `evil.example:${server.port}`, `192.168.1.5:${server.port}`]) {
      expect((await get(server.port, '/?token=test-token', { host })).status, host).toBe(421);
    }
    // HTTP/1.0 without any Host header.
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(server.port, '127.0.0.1', () =>
        socket.end('GET /?token=test-token HTTP/1.0\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('close', () => resolve(text));
    });
    expect(raw.split('\r\n')[0]).toMatch(/^HTTP\/1\.[01] 421/);
    expect((await get(server.port, '/?token=test-token', { host: `localhost:${server.port}` })).status).toBe(
      200,
    );
  });

  it('serves a self-contained page under a CSP that forbids anything from elsewhere', async () => {
    const { server } = await start();
    const page = await get(server.port, '/?token=test-token');
    expect(page.status).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(page.body).toContain(`<script nonce="${nonce}">`);
    expect(page.body).toContain('data-state-id="run"');
    expect(page.body).not.toMatch(/(src|href)="(?!data:)[^"]+"/);
    expect(page.body).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses to listen anywhere but loopback', async () => {
    const store = new InspectionStore({ graph });
    await expect(startInspectorServer({ store, svg: SVG, host: '0.0.0.0' })).rejects.toBeInstanceOf(
      InspectorHostError,
    );
    expect(isLoopbackHost('[::1]:80')).toBe(true);
    expect(isLoopbackHost('127.0.0.2')).toBe(true);
    expect(isLoopbackHost('localhost.evil.example')).toBe(false);
    expect(isLoopbackOrigin('https://evil.example')).toBe(false);
  });
});

describe('inspector server data', () => {
  it('streams a hello of run summaries, then deltas; an opened run’s log and context go to the stream that opened it', async () => {
    const { store, server } = await start();
    store.recordRunEvent({ type: 'run_started', runId: 'r1', at: 1, agentId: 'a', labels: { team: 'x' } });
    store.recordRunEvent({ type: 'run_started', runId: 'r2', at: 2, agentId: 'a', labels: {} });
    const response = await fetch(`${server.origin}/events?token=test-token`);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) text += (await reader.read()).value ?? '';
    };
    await readUntil('event: hello');
    await readUntil('\n\n');
    const hello = JSON.parse(/event: hello\ndata: (.*)\n/.exec(text)![1]!);
    // Newest first, summaries only: no context, no log.
    expect(hello.runs.map((run: { runId: string }) => run.runId)).toEqual(['r2', 'r1']);
    expect(hello.runs[1]).toMatchObject({ labels: { team: 'x' }, logSize: 1 });
    expect(hello.runs[0]).not.toHaveProperty('context');
    expect(hello).not.toHaveProperty('logs');
    expect(hello).toMatchObject({ total: 2, matched: 2, next: null, counts: { running: 2 } });
    // Not opened: r1's entries are not sent.
    store.recordRunEvent({ type: 'planner_note', runId: 'r1', at: 2, turnId: 't', note: 'unseen' });
    const opened = await (
      await fetch(`${server.origin}/api/runs/r1?stream=${hello.stream}&token=test-token`)
    ).json();
    expect(opened.log.map((entry: { type: string }) => entry.type)).toEqual(['run_started', 'planner_note']);
    store.recordRunEvent({ type: 'planner_note', runId: 'r2', at: 3, turnId: 't', note: 'other run' });
    store.recordRunEvent({ type: 'planner_note', runId: 'r1', at: 3, turnId: 't', note: 'thinking' });
    store.recordRunEvent({ type: 'run_canceled', runId: 'r1', at: 4, reason: 'enough' });
    await readUntil('event: update');
    await readUntil('"note":"thinking"');
    expect(text).toContain('event: log');
    expect(text).not.toContain('unseen');
    expect(text).not.toContain('other run');
    const update = JSON.parse(/event: update\ndata: (.*)\n/.exec(text)![1]!);
    expect(update).toMatchObject({
      key: 'r1',
      changes: { status: 'canceled', outcome: { kind: 'canceled', message: 'enough' } },
    });
    expect(Object.keys(update.changes).sort()).toEqual([
      'endedAt',
      'logSize',
      'outcome',
      'status',
      'updatedAt',
    ]);
    await reader.cancel();
  });

  it('pages the runs newest first, filtered by status and text', async () => {
    const { store, server } = await start();
    for (let i = 0; i < 5; i++)
      store.recordRunEvent({
        type: 'run_started',
        runId: `r${i}`,
        at: i,
        agentId: 'a',
        labels: { n: `${i}` },
      });
    store.recordRunEvent({ type: 'run_canceled', runId: 'r3', at: 9 });
    const get = async (query: string) =>
      (await fetch(`${server.origin}/api/runs?token=test-token&${query}`)).json();
    const first = await get('limit=2');
    expect(first.runs.map((run: { runId: string }) => run.runId)).toEqual(['r4', 'r3']);
    const second = await get(`limit=2&before=${encodeURIComponent(first.next)}`);
    expect(second.runs.map((run: { runId: string }) => run.runId)).toEqual(['r2', 'r1']);
    expect((await get('status=canceled')).runs.map((run: { runId: string }) => run.runId)).toEqual(['r3']);
    expect((await get('q=n%3D1')).runs.map((run: { runId: string }) => run.runId)).toEqual(['r1']);
  });

  it('drops a client that stops reading, tells it why, and its next hello says so again', async () => {
    const store = new InspectionStore({ graph, maxRuns: 100_000 });
    server = await startInspectorServer({ store, svg: SVG, token: 't', maxSseBufferedBytes: 64 * 1024 });
    // A page that stops reading: a raw socket, paused after the request.
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /events?token=t&client=slow-page HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
    });
    while (!text.includes('event: hello')) await new Promise((resolve) => setTimeout(resolve, 5));
    socket.pause();
    const filler = 'x'.repeat(2000);
    for (let i = 0; i < 20_000 && server; i++) {
      store.recordRunEvent({ type: 'run_started', runId: `r${i}`, at: i, agentId: 'a', labels: { filler } });
      if (i % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    socket.resume();
    const end = Date.now() + 10_000;
    while (!text.includes('event: dropped') && Date.now() < end)
      await new Promise((resolve) => setTimeout(resolve, 10));
    socket.destroy();
    expect(text).toMatch(
      /event: dropped\ndata: \{"reason":"this page fell more than 64 KiB of updates behind/,
    );
    // The page reconnects (EventSource does, with the same client id): its hello says why.
    const again = await fetch(`${server.origin}/events?token=t&client=slow-page&x=1`);
    const reader = again.body!.pipeThrough(new TextDecoderStream()).getReader();
    let hello = '';
    while (!hello.includes('\n\n')) hello += (await reader.read()).value ?? '';
    await reader.cancel();
    expect(hello).toContain('"droppedBefore":"this page fell more than 64 KiB');
  });

  it('opens a run with a bounded page of its newest log entries; earlier ones come a page at a time', async () => {
    const { store, server } = await start();
    store.recordRunEvent({ type: 'run_started', runId: 'r1', at: 1, agentId: 'a', labels: {} });
    for (let n = 1; n < 450; n++)
      store.recordRunEvent({ type: 'planner_note', runId: 'r1', at: 1 + n, turnId: 't', note: `n${n}` });
    const notes = (log: { data: { note?: string } }[]) => log.map((entry) => entry.data.note ?? 'start');
    const opened = await (await fetch(`${server.origin}/api/runs/r1?token=test-token`)).json();
    // The newest 200 of 450, not all of them (up to maxLog: 1,000 entries, ~300 KB for a long run).
    expect(opened.log).toHaveLength(200);
    expect(opened.earlier).toBe(250);
    expect(notes(opened.log).at(-1)).toBe('n449');
    expect(opened.run.logSize).toBe(450);
    const page = async (query: string) =>
      (await fetch(`${server.origin}/api/runs/r1/log?token=test-token&${query}`)).json();
    const before = await page(`before=${opened.log[0].seq}&limit=200`);
    expect(notes(before.log)).toEqual(Array.from({ length: 200 }, (_, i) => `n${i + 50}`));
    expect(before.earlier).toBe(50);
    const first = await page(`before=${before.log[0].seq}&limit=200`);
    expect(notes(first.log)).toEqual(['start', ...Array.from({ length: 49 }, (_, i) => `n${i + 1}`)]);
    expect(first.earlier).toBe(0);
    expect((await page('limit=5')).log).toHaveLength(5);
    expect((await page('')).log).toHaveLength(450);
  });

  it('serves the runs and the graph as JSON', async () => {
    const { store, server } = await start();
    store.recordRunEvent({ type: 'run_started', runId: 'r1', at: 1, agentId: 'a', labels: {} });
    const runs = await (await fetch(`${server.origin}/api/runs?token=test-token`)).json();
    expect(runs.runs[0]).toMatchObject({ runId: 'r1', agentId: 'a', status: 'running' });
    const log = await (await fetch(`${server.origin}/api/runs/r1/log?token=test-token`)).json();
    expect(log.log).toHaveLength(1);
    const model = await (await fetch(`${server.origin}/api/graph?token=test-token`)).json();
    expect(model).toEqual(graph);
  });

  it('compares two runs only when it holds both and is attached to a runtime (GET /api/compare)', async () => {
    const { store, server } = await start();
    store.recordRunEvent({ type: 'run_started', runId: 'r1', at: 1, agentId: 'a', labels: {} });
    store.recordRunEvent({ type: 'run_started', runId: 'r2', at: 2, agentId: 'a', labels: {} });
    const compare = async (query: string) => {
      const response = await fetch(`${server.origin}/api/compare?token=test-token${query}`);
      return { status: response.status, error: ((await response.json()) as { error: string }).error };
    };
    expect(await compare('&a=r1')).toEqual({ status: 400, error: 'expected ?a=<run>&b=<run>' });
    expect(await compare('&a=r1&b=nope')).toEqual({ status: 404, error: 'no such run here: nope' });
    // No runtime behind this server: nothing to load the runs from.
    expect(await compare('&a=r1&b=r2')).toMatchObject({
      status: 501,
      error: expect.stringMatching(/needs the runtime/),
    });
    expect((await fetch(`${server.origin}/api/compare?a=r1&b=r2`)).status).toBe(403); // the token, as everywhere
  });

  it('accepts @statelyai/inspect events on /ws only with the token and a loopback origin', async () => {
    const { store, server } = await start();
    const refused = (url: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(url, { headers });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
        ws.on('error', () => undefined);
      });
    expect(await refused(`ws://127.0.0.1:${server.port}/ws`)).toBe(403);
    expect(await refused(`ws://127.0.0.1:${server.port}/ws?token=nope`)).toBe(403);
    expect(await refused(server.wsUrl, { origin: 'https://evil.example' })).toBe(403);
    expect(await refused(server.wsUrl, { host: 'evil.example' })).toBe(421);

    const ws = new WebSocket(server.wsUrl);
    await new Promise((resolve) => ws.on('open', resolve));
    ws.send('not json');
    ws.send(
      JSON.stringify({
        type: '@xstate.actor',
        name: 'run',
        sessionId: 'x:0',
        rootId: 'x:0',
        snapshot: { status: 'active', value: 'planning', context: { runId: 'remote-1' } },
      }),
    );
    const end = Date.now() + 2000;
    while (!store.run('remote-1') && Date.now() < end)
      await new Promise((resolve) => setTimeout(resolve, 10));
    ws.close();
    expect(store.run('remote-1')).toMatchObject({ source: 'stately', activeStates: ['run', 'run.planning'] });
  });

  it('closes with SSE streams and sockets open', async () => {
    const { server: running } = await start();
    const response = await fetch(`${running.origin}/events?token=test-token`);
    const ws = new WebSocket(running.wsUrl);
    await new Promise((resolve) => ws.on('open', resolve));
    const reader = response.body!.getReader();
    await reader.read();
    await running.close();
    server = undefined;
    const rest = await reader.read().catch(() => ({ done: true }));
    expect(rest.done).toBe(true);
  });
});
