import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The embedding example (issue 7 §4) as its users would run it: the HTTP server in a child
 * process on a SQLite file, killed with SIGKILL while a run waits for an answer, started again,
 * answered, and the run completes; its event stream carries on with the same numbering.
 */

const SERVER = join(import.meta.dirname, '..', 'examples', 'embedding', 'server.ts');

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<NodeJS.Signals | number | null>;
}

async function startServer(db: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    cwd: process.cwd(),
    env: { ...process.env, TOOLWARDEN_DB: db, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`server exited before listening:\n${output}`)));
  });
  return { child, url, exited };
}

interface SseEvent {
  id: number;
  event: string;
  data: { type: string; [key: string]: unknown };
}

/** Reads a server-sent event stream, calling `onEvent` for each event, until it ends. */
async function readEvents(
  url: string,
  onEvent: (event: SseEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal });
  expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = Object.fromEntries(
        block
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
      );
      onEvent({ id: Number(fields.id), event: fields.event!, data: JSON.parse(fields.data!) });
      end = buffer.indexOf('\n\n');
    }
  }
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('embedding example: an HTTP server whose runs survive kill -9', () => {
  let dir: string;
  let db: string;
  const servers: Server[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-embedding-'));
    db = join(dir, 'runs.db');
  });
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('starts a run that awaits, is killed, restarts, takes the answers, and the run completes', async () => {
    const first = await startServer(db);
    servers.push(first);
    const created = await post(`${first.url}/runs`, {
      text: 'Add ada@example.com',
      labels: { channel: 'web' },
    });
    expect(created.status).toBe(201);
    const { runId } = (await created.json()) as { runId: string };

    // Follow the stream until the run asks its question.
    const before: SseEvent[] = [];
    const asked = new AbortController();
    await readEvents(
      `${first.url}/runs/${runId}/events`,
      (event) => {
        before.push(event);
        if (event.event === 'await_clarification') asked.abort();
      },
      asked.signal,
    ).catch((error: unknown) => {
      if (!asked.signal.aborted) throw error;
    });
    expect(before.find((event) => event.event === 'await_clarification')?.data).toMatchObject({
      type: 'await_clarification',
      clarification: { id: 'plan', question: 'Which plan should ada@example.com be on: free or pro?' },
    });

    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const second = await startServer(db);
    servers.push(second);
    const waiting = (await (await fetch(`${second.url}/runs?status=awaiting`)).json()) as {
      runs: { runId: string; state: string; labels: Record<string, string> }[];
    };
    expect(waiting.runs).toEqual([
      expect.objectContaining({
        runId,
        state: 'awaiting.clarification',
        labels: { channel: 'web' },
        // What another process needs to answer, without the snapshot's internals.
        awaiting: expect.objectContaining({
          kind: 'clarification',
          id: 'plan',
          question: expect.any(String),
        }),
      }),
    ]);

    // The whole log, from seq 1, then live to the end of the run.
    const all: SseEvent[] = [];
    let confirmed: Promise<Response> | undefined;
    const streamed = readEvents(`${second.url}/runs/${runId}/events`, (event) => {
      all.push(event);
      if (event.event === 'await_confirmation') {
        confirmed = post(`${second.url}/runs/${runId}/confirmation`, {
          id: 'approve-upsert',
          approved: true,
          by: 'ops@example.com',
        });
      }
    });
    // The killed server's lease has to lapse first (same owner name, another instance): the
    // server says when with Retry-After, and a client waits that long once.
    let answered = await post(`${second.url}/runs/${runId}/clarification`, { id: 'plan', answer: 'pro' });
    if (answered.status === 409 && answered.headers.get('retry-after')) {
      await new Promise((done) => setTimeout(done, Number(answered.headers.get('retry-after')) * 1000 + 200));
      answered = await post(`${second.url}/runs/${runId}/clarification`, { id: 'plan', answer: 'pro' });
    }
    expect(answered.status).toBe(202);
    await streamed;
    expect((await confirmed)?.status).toBe(202);

    expect(all.map((event) => event.id)).toEqual(all.map((_, index) => index + 1));
    expect(all.slice(0, before.length).map((event) => event.data)).toEqual(before.map((event) => event.data));
    const types = all.map((event) => event.event);
    expect(types.filter((type) => type === 'run_started')).toHaveLength(1);
    for (const type of ['await_clarification', 'await_confirmation', 'tool_result', 'run_completed']) {
      expect(types).toContain(type);
    }
    expect(all.find((event) => event.event === 'tool_result')?.data).toMatchObject({
      result: { name: 'crm.upsert_profile', executed: true, result: { id: 'cus_1' } },
    });

    const run = (await (await fetch(`${second.url}/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(run).toMatchObject({
      runId,
      status: 'completed',
      state: 'completed',
      finalResponse: { text: 'ada@example.com is on the pro plan ({"id":"cus_1"}).' },
    });

    // Answers that do not fit, and unknown runs, are refused with the status a client can act on.
    const late = await post(`${second.url}/runs/${runId}/clarification`, { id: 'plan', answer: 'free' });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: string }).error).toBe('answer_refused');
    expect((await fetch(`${second.url}/runs/no-such-run`)).status).toBe(404);
    expect((await post(`${second.url}/runs`, { nope: true })).status).toBe(400);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
