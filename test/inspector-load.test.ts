import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../create-runtime.ts';
import { busyPlanner, lookupTool, runBusyRuns } from './support/busy-runs.ts';

/**
 * Issue 27 item 1, without a browser: 100 real runs of 10 turns × 3 calls on default settings.
 * The first SSE message used to carry every run's context and log (~5–7 MB here), past
 * `maxSseBufferedBytes`: the client was dropped, reconnected and dropped again, without being
 * told. Now it is a page of summaries and a run's log comes when it is opened (a client that is
 * dropped is told why: test/inspector-server.test.ts; the page in Chromium at 1,000 runs:
 * test/inspector-load.e2e.test.ts).
 */
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.inspector?.close();
  await runtime?.close();
  runtime = undefined;
});

async function busyRuntime() {
  runtime = createRuntime({
    agent: { id: 'busy' },
    planner: busyPlanner(10, 3),
    tools: [lookupTool],
    telemetry: false,
    inspector: { port: 0, onListening: () => {} },
  });
  const ids = await runBusyRuns(runtime, 100);
  return { server: await runtime.inspector!.start(), ids };
}

interface Hello {
  total: number;
  runs: { runId: string; status: string; logSize: number }[];
}

/** The first SSE message of `url`: its event name, its data, and its size in bytes. */
async function firstMessage(url: string): Promise<{ event: string; data: Hello; bytes: number }> {
  const response = await fetch(url);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
  await reader.cancel().catch(() => undefined);
  const block = text.slice(0, text.indexOf('\n\n'));
  return {
    event: /^event: (.*)$/m.exec(block)![1]!,
    data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!),
    bytes: Buffer.byteLength(block),
  };
}

describe('inspector at realistic load (100 real runs × 10 turns × 3 calls, defaults)', () => {
  it('sends a page of run summaries first, and a run’s context and log when it is opened', async () => {
    const { server, ids } = await busyRuntime();
    const hello = await firstMessage(`${server.origin}/events?token=${server.token}`);
    expect(hello.event).toBe('hello');
    expect(hello.bytes).toBeLessThan(64 * 1024);
    expect(hello.data.total).toBe(100);
    expect(hello.data.runs).toHaveLength(100);
    expect(hello.data.runs[0]).toMatchObject({ runId: ids.at(-1), status: 'completed' });
    expect(hello.data.runs[0]!.logSize).toBeGreaterThan(60);
    expect(hello.data.runs[0]).not.toHaveProperty('context');

    const opened = await (await fetch(`${server.origin}/api/runs/${ids[0]}?token=${server.token}`)).json();
    expect(opened.log.filter((entry: { type: string }) => entry.type === 'tool_result')).toHaveLength(30);
    expect(opened.context.messages.length).toBeGreaterThan(30);
  }, 90_000);
});
