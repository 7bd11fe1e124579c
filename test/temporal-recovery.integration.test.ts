import { randomUUID } from 'node:crypto';
import type { NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Planner } from '../run/planner.ts';
import { createTemporalWorker, temporalRuntime } from '../temporal/index.ts';
import { defineTool } from '../tools/define-tool.ts';
import { killWorkerDuring } from './support/temporal-kill.ts';
import { temporalKillSetup } from './support/temporal-kill-setup.ts';
import { probeTemporal } from './support/temporal-server.ts';

/**
 * Issue 26 items 1 and 2, on the real Temporal dev server: every activity heartbeats, so a worker
 * SIGKILLed in the middle of a planner turn or of a tool call is noticed at the heartbeat timeout
 * (5 s) and another worker finishes the run — all its calls made, each once — within 15 s of the
 * kill; the time the retry lost is not the run's (a 6 s budget survives a ~8 s recovery); and a
 * cancel reaches a running tool's signal within 2 s. Before: the lost worker was noticed at the
 * planner's start-to-close timeout (budget + 60 s) and the retry found the budget spent; a cancel
 * never reached the tool. Required under CI=true.
 */
const SUITE = 'Temporal: a dead worker noticed in seconds, cancel reaches the tool (real dev server)';
const { available, required } = await probeTemporal(SUITE);
const AMOUNTS = [10, 20, 30];

describe.skipIf(!available && !required)(SUITE, () => {
  const setup = temporalKillSetup(available, 'toolwarden-temporal-recovery-');

  /** Two workers; the one that reaches `where` first hangs there and is killed; the other finishes. */
  async function killDuring(where: 'plan' | 'tool') {
    // A budget shorter than the recovery: the retry's lost time must not be the run's.
    const { runId, outcome, recoveryMs, ledger, attempts } = await killWorkerDuring({
      client: setup.client,
      where,
      dir: setup.dir,
      bundlePath: setup.bundlePath,
      amounts: AMOUNTS,
      budgetMs: 6_000,
      children: setup.children,
    });
    if (outcome.status !== 'completed') console.log(outcome);
    console.log(
      `[issue 26] worker killed during a ${where === 'plan' ? 'planner turn' : 'tool call'}: the run completed ${recoveryMs} ms after the kill (heartbeat timeout 5 s)`,
    );
    expect(outcome).toMatchObject({
      status: 'completed',
      finalResponse: { text: `booked ${AMOUNTS.length} calls` },
    });
    // Every call answered by the tool itself (no `timeout` result stood in for the retry)…
    expect(outcome.toolResults.map((result) => result.error?.name)).toEqual(AMOUNTS.map(() => undefined));
    // …and made once (the ledger keys on toolCallId).
    expect(ledger.map((entry) => entry.amount)).toEqual(AMOUNTS);
    if (where === 'tool') {
      // The frozen call ran in both workers under one toolCallId.
      const first = attempts.filter((a) => a.toolCallId === `${runId}:t1:c1`);
      expect(new Set(first.map((attempt) => attempt.pid)).size).toBe(2);
    }
    expect(recoveryMs).toBeLessThanOrEqual(15_000);
    return recoveryMs;
  }

  it(
    'a worker killed during a planner turn: another finishes every call within 15 s',
    () => killDuring('plan'),
    90_000,
  );

  it(
    'a worker killed during a tool call: another finishes every call within 15 s, the call booked once',
    () => killDuring('tool'),
    90_000,
  );

  it("cancel reaches a running tool's signal within 2 s", async () => {
    const taskQueue = `toolwarden-cancel-${randomUUID().slice(0, 8)}`;
    let started!: () => void;
    const inTool = new Promise<void>((resolve) => (started = resolve));
    let abortedAt: number | undefined;
    const slow = defineTool({
      id: 'slow.export',
      description: 'Exports for 20 s unless aborted',
      input: z.object({}),
      timeoutMs: 30_000,
      execute: async (_input, { signal }) => {
        started();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 20_000);
          signal.addEventListener('abort', () => {
            abortedAt = Date.now();
            clearTimeout(timer);
            resolve();
          });
        });
        return { exported: !signal.aborted };
      },
    });
    const planner: Planner = {
      planStart: async () => ({ toolCalls: [{ name: 'slow.export', input: {} }] }),
      planResume: async () => ({ finalResponse: { text: 'exported' } }),
    };
    const worker = await createTemporalWorker({
      connection: setup.temporal.connection as NativeConnection,
      taskQueue,
      tools: [slow],
      planner,
      worker: { workflowBundle: { codePath: setup.bundlePath } },
    });
    const running = worker.run();
    try {
      const runtime = temporalRuntime({
        client: setup.client,
        taskQueue,
        agent: { id: 'cancel' },
        tools: [slow],
      });
      const run = await runtime.start({ messages: [{ role: 'user', content: 'export' }] });
      await inTool;
      const canceledAt = Date.now();
      await run.cancel('the person changed their mind');
      expect((await run.result()).status).toBe('canceled');
      const deadline = canceledAt + 5_000;
      while (abortedAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const abortMs = abortedAt === undefined ? undefined : abortedAt - canceledAt;
      console.log(
        `[issue 26] cancel mid-tool: the tool's signal aborted ${abortMs ?? '(never)'} ms after cancel`,
      );
      expect(abortMs).toBeDefined();
      expect(abortMs!).toBeLessThanOrEqual(2_000);
    } finally {
      worker.shutdown();
      await running;
    }
  }, 60_000);
});
