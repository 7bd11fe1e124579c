import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporalRuntime } from '../../temporal/index.ts';
import type { RunWorkflowResult } from '../../temporal/workflow-types.ts';
import { TEMPORAL_ADDRESS } from './temporal-server.ts';

/**
 * A worker SIGKILLed in the middle of a planner turn or a tool call (issue 26 items 1 and 2), for
 * test/temporal-recovery.integration.test.ts and bench/temporal.bench.ts: two worker processes
 * (test/support/temporal-worker-child.ts) on a queue of their own; the one that reaches `where`
 * first hangs there (heartbeating) and is killed; the other finishes the run.
 */
const CHILD = join(import.meta.dirname, 'temporal-worker-child.ts');

/** What the killed run did: its outcome, kill → completed, and the tool's ledger and attempts. */
export interface KilledRun {
  runId: string;
  outcome: RunWorkflowResult;
  recoveryMs: number;
  ledger: { toolCallId: string; amount?: number }[];
  attempts: { toolCallId: string; pid?: number }[];
  /** With `once`: the calls that came back in doubt (and were resolved from the ledger). */
  inDoubt: string[];
}

function spawnWorker(config: object) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, JSON.stringify({ address: TEMPORAL_ADDRESS, ...config })],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const seen = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const match = out.match(pattern);
        if (match) resolve(match);
      });
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before ${pattern}`)));
    });
  child.stderr!.resume();
  const frozen = seen(/FROZEN (\d+)/).then((match) => Number(match[1]));
  frozen.catch(() => {}); // the worker that does not freeze is killed at the end
  return { child, ready: seen(/READY/).then(() => {}), frozen };
}

/**
 * Runs `amounts.length` calls (one a turn) with a `budgetMs` time budget and kills the worker that
 * hangs at `where`. Every child it spawned is pushed to `children` (the caller kills them at the end).
 */
export async function killWorkerDuring(options: {
  client: Client;
  where: 'plan' | 'tool';
  dir: string;
  bundlePath: string;
  amounts: number[];
  budgetMs: number;
  children: ChildProcess[];
  /**
   * The tool is not idempotent (issue 34): the retried call comes back in doubt, the run waits
   * in `awaiting.inDoubt`, and it is resolved from the ledger (`done` when the call booked).
   */
  once?: boolean;
}): Promise<KilledRun> {
  const { where, amounts } = options;
  const runDir = await mkdtemp(join(options.dir, `${where}-`));
  const lines = (file: string) =>
    existsSync(join(runDir, file))
      ? readFileSync(join(runDir, file), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { toolCallId: string; amount?: number; pid?: number })
      : [];
  const taskQueue = `toolwarden-recovery-${where}-${randomUUID().slice(0, 8)}`;
  const workers = [0, 1].map(() =>
    spawnWorker({
      taskQueue,
      dir: runDir,
      freezeIn: where,
      amounts,
      bundlePath: options.bundlePath,
      ...(options.once ? { once: true } : {}),
    }),
  );
  options.children.push(...workers.map((worker) => worker.child));
  await Promise.all(workers.map((worker) => worker.ready));
  const runtime = temporalRuntime({ client: options.client, taskQueue, agent: { id: 'recovery' } });
  const run = await runtime.start({
    messages: [{ role: 'user', content: 'book' }],
    caps: { timeBudgetMs: options.budgetMs },
  });
  const pid = await Promise.race(workers.map((worker) => worker.frozen));
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  const inDoubt: string[] = [];
  if (options.once) {
    for (let status = await run.status(); status.awaiting?.kind !== 'in_doubt'; status = await run.status()) {
      if (status.status === 'completed' || status.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const booked = new Set(lines('ledger.jsonl').map((entry) => entry.toolCallId));
    const events = (await run.events(0)).events;
    const doubted = events.flatMap((event) =>
      event.type === 'tool_result' && event.result.inDoubt ? [event.result] : [],
    );
    for (const result of doubted) inDoubt.push(result.toolCallId);
    if (doubted.length > 0) {
      await run.resolveInDoubt(
        Object.fromEntries(
          doubted.map((result) => [
            result.toolCallId,
            booked.has(result.toolCallId)
              ? { status: 'done' as const, output: { booked: -1 } }
              : { status: 'not_done' as const },
          ]),
        ),
      );
    }
  }
  const outcome = await run.result();
  const recoveryMs = Date.now() - killedAt;
  for (const worker of workers) worker.child.kill('SIGKILL');
  return {
    runId: run.runId,
    outcome,
    recoveryMs,
    ledger: lines('ledger.jsonl'),
    attempts: lines('attempts.jsonl'),
    inDoubt,
  };
}
