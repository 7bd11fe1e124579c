import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { temporalRuntime } from '../temporal/index.ts';
import { probeTemporal, TEMPORAL_ADDRESS } from './support/temporal-server.ts';

/**
 * A worker SIGKILLed in the middle of a tool call (issue 14, docs/temporal.md §Workflow): a second
 * worker process takes the run over once the activity's start-to-close timeout passes, the tool
 * runs again with the same toolCallId, the ledger keyed by it books once, and the run completes.
 * Against the real Temporal dev server; required under CI=true.
 */
const SUITE = 'Temporal: a worker killed mid-tool-call (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const CHILD = join(import.meta.dirname, 'support', 'temporal-worker-child.ts');

function worker(config: object): { child: ChildProcess; ready: Promise<void>; inTool: Promise<void> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, JSON.stringify({ address: TEMPORAL_ADDRESS, ...config })],
    {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const seen = (marker: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (out.includes(marker)) resolve();
      };
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        check();
      });
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before ${marker}`)));
    });
  child.stderr!.resume();
  return { child, ready: seen('READY'), inTool: seen('IN_TOOL') };
}

describe.skipIf(!available && !required)(SUITE, () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('a second worker finishes the run; the side effect happened once', async () => {
    if (!available) throw new Error(`No Temporal server at ${TEMPORAL_ADDRESS} and CI=true`);
    const dir = await mkdtemp(join(tmpdir(), 'toolwarden-temporal-crash-'));
    dirs.push(dir);
    const taskQueue = `toolwarden-crash-${Date.now()}`;
    const first = worker({ taskQueue, dir, freeze: true });
    children.push(first.child);
    await first.ready;
    const client = new Client({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
    const runtime = temporalRuntime({
      client,
      taskQueue,
      agent: { id: 'crash' },
      tools: [{ id: 'ledger.book', timeoutMs: 2_000 }],
    });
    const run = await runtime.start({ messages: [{ role: 'user', content: 'book 40' }] });
    await first.inTool;
    first.child.kill('SIGKILL');

    const second = worker({ taskQueue, dir });
    children.push(second.child);
    await second.ready;
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'booked 40' } });

    const read = (file: string) =>
      existsSync(join(dir, file))
        ? readFileSync(join(dir, file), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { toolCallId: string; pid?: number })
        : [];
    const attempts = read('attempts.jsonl');
    const ledger = read('ledger.jsonl');
    expect(new Set(attempts.map((attempt) => attempt.pid)).size).toBe(2); // ran in both workers
    expect(new Set(attempts.map((attempt) => attempt.toolCallId))).toEqual(new Set([`${run.runId}:t1:c1`]));
    expect(ledger).toEqual([{ toolCallId: `${run.runId}:t1:c1`, amount: 40 }]); // booked once
  }, 90_000);
});
