/**
 * A process that "dies" after a tool's effect (issue 34, docs/durability.md §Effects), in
 * process: its SQLite store is closed while its tool hangs after booking (nothing it does reaches
 * the file again), and a second runtime on the same file takes the run once the first's lease
 * lapsed. For test/durable-in-doubt.test.ts and test/in-doubt-policies.test.ts; the SIGKILL
 * version is test/reliability/effects-kill.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import type { Policy } from '../../policies/define-policy.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import type { RunEvent } from '../../run/run-events.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { RunConflictError } from '../../runtime/durable/durable-errors.ts';
import type { RunHandle } from '../../runtime/run-handle.ts';
import type { CoreRuntime as Runtime } from '../../runtime/runtime-api.ts';
import type { CoreRuntimeOptions } from '../../runtime/runtime-options.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool, type ReconcileOutcome, type ToolDefinition } from '../../tools/define-tool.ts';

export type Declaration = Pick<ToolDefinition, 'readOnly' | 'idempotent' | 'whenInDoubt'> & {
  reconcile?: (input: { orderId: string }, ctx: { idempotencyKey: string }) => ReconcileOutcome;
};

/**
 * A refund tool that books each refund in `ledger`; its first `hangs` calls hang after their
 * effect (`effected` resolves once they all have).
 */
function refundTool(declaration: Declaration, hangs: number) {
  const ledger: { orderId: string; key: string; toolCallId: string }[] = [];
  const keys: string[] = [];
  let left = hangs;
  let effect!: () => void;
  const effected = new Promise<void>((resolve) => {
    effect = resolve;
  });
  const tool = defineTool({
    id: 'payments.refund',
    description: 'Refunds an order',
    input: z.object({ orderId: z.string() }),
    output: z.object({ refunded: z.string() }),
    ...declaration,
    execute: async ({ orderId }, ctx) => {
      keys.push(ctx.idempotencyKey);
      ledger.push({ orderId, key: ctx.idempotencyKey, toolCallId: ctx.meta.toolCallId });
      if (left > 0) {
        left -= 1;
        if (left === 0) effect();
        await new Promise(() => {});
      }
      return { refunded: orderId };
    },
  });
  return { tool, ledger, keys, effected };
}

/**
 * Refunds `orders` in one batch, then answers with what the planner was told of the first
 * (`text`: its result, else its hint's reason) and of each (`data`).
 */
function refundPlanner(orders: string[]) {
  const plan = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const results = 'toolResults' in input ? input.toolResults : [];
    if (results.length === 0) {
      return { toolCalls: orders.map((orderId) => ({ name: 'payments.refund', input: { orderId } })) };
    }
    const told = results.map((result) => result.result ?? result.retryHint?.reason ?? null);
    return { finalResponse: { text: JSON.stringify(told[0]), data: told } };
  };
  return { planStart: plan, planResume: plan };
}

/** A folder of SQLite files for the calling test file, and the runtimes it made, closed after it. */
export function crashFixture() {
  let dir: string;
  let files = 0;
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-in-doubt-'));
  });
  afterAll(async () => {
    for (const runtime of runtimes) {
      await runtime.close();
      await runtime.store.close();
    }
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Starts run `r1` (a batch refunding `orders`, default one) in a first runtime, waits for the
   * effects, cuts that runtime off its database, and restores the run in a second runtime (same
   * owner name, `policies` given to both) once the lease lapsed.
   */
  async function crashAfterEffect(
    declaration: Declaration = {},
    options: { orders?: string[]; policies?: Policy[]; telemetry?: CoreRuntimeOptions['telemetry'] } = {},
  ) {
    const orders = options.orders ?? ['A-17'];
    const path = join(dir, `runs-${files++}.db`);
    const refund = refundTool(declaration, orders.length);
    const shared = {
      agent: { id: 'refunds' },
      planner: refundPlanner(orders),
      tools: [refund.tool],
      ...(options.policies ? { policies: options.policies } : {}),
      onError: () => {},
    };
    const first = createRuntime({
      ...shared,
      telemetry: false,
      store: sqliteStore({ path }),
      durable: { owner: 'pod-1', leaseMs: 150 },
    });
    first.start({ runId: 'r1', messages: [{ role: 'user', content: `Refund ${orders.join(', ')}` }] });
    await refund.effected;
    await first.store.close(); // the process is gone: nothing more of it reaches the file
    const store = sqliteStore({ path });
    const second = createRuntime({
      ...shared,
      telemetry: options.telemetry ?? false,
      store,
      durable: { owner: 'pod-1', leaseMs: 150 },
    });
    runtimes.push(second);
    let run: RunHandle | undefined;
    while (run === undefined) {
      run = await second.resume('r1').catch((error: unknown) => {
        if (error instanceof RunConflictError) return undefined; // the first one's lease still runs
        throw error;
      });
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return { ...refund, runtime: second, run, store };
  }
  return { crashAfterEffect };
}

/** Polls until the run waits in doubt (15 s at most); its `awaiting`. */
export async function waitInDoubt(run: RunHandle) {
  for (const deadline = Date.now() + 15_000; run.awaiting?.kind !== 'in_doubt' && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return run.awaiting;
}

/** The run's event log as stored. */
export async function storedEvents(runtime: Runtime, runId: string): Promise<RunEvent[]> {
  const log: RunEvent[] = [];
  for await (const record of runtime.events(runId, { follow: false })) log.push(record.event);
  return log;
}
