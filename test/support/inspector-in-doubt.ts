/**
 * A run left in doubt (issue 34 item 3) for the inspector's tests, made as
 * test/durable-in-doubt.test.ts makes one: a first runtime on a SQLite file starts a refund whose
 * tool hangs after its effect, then loses its database (its store is closed: nothing it does
 * reaches the file again); the runtime under test, on the same file and owner name, takes the
 * run once the first one's lease lapsed, and the run waits in `awaiting.inDoubt`.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../../run/planner.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { RunConflictError } from '../../runtime/durable/durable-errors.ts';
import type { RunHandle } from '../../runtime/run-handle.ts';
import type { CoreRuntime } from '../../runtime/runtime-api.ts';
import { sqliteStore } from '../../stores/sqlite-store.ts';
import { defineTool } from '../../tools/define-tool.ts';

/** One refund, then an answer that quotes what the planner was told of it. */
async function plan(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
  const results = 'toolResults' in input ? input.toolResults : [];
  if (results.length === 0) return { toolCalls: [{ name: 'payments.refund', input: { orderId: 'A-17' } }] };
  const [result] = results;
  return {
    finalResponse: {
      text: JSON.stringify(result?.result ?? result?.error?.message ?? result?.retryHint?.reason ?? null),
    },
  };
}

/**
 * Starts run `runId` in a runtime that then "dies" after the refund's effect.
 *
 * @returns `options` for the runtime under test (planner, tool, a store on the same file, the
 *   same owner name and lease), and `ledger`: the orders the tool booked, one entry per effect.
 */
export async function crashAfterRefund(dir: string, runId: string) {
  const path = join(dir, `${runId}.db`);
  const ledger: string[] = [];
  let hang = true;
  let effect!: () => void;
  const effected = new Promise<void>((resolve) => {
    effect = resolve;
  });
  const refund = defineTool({
    id: 'payments.refund',
    description: 'Refunds an order',
    input: z.object({ orderId: z.string() }),
    output: z.object({ refunded: z.string() }),
    execute: async ({ orderId }) => {
      ledger.push(orderId);
      if (hang) {
        hang = false;
        effect();
        await new Promise(() => {});
      }
      return { refunded: orderId };
    },
  });
  const options = {
    agent: { id: 'refunds' },
    planner: { planStart: plan, planResume: plan },
    tools: [refund],
    durable: { owner: 'pod-1', leaseMs: 150 },
    onError: () => {},
  };
  const first = createRuntime({ ...options, telemetry: false, store: sqliteStore({ path }) });
  first.start({ runId, messages: [{ role: 'user', content: 'Refund A-17' }] });
  await effected;
  await first.store.close();
  return { options: { ...options, store: sqliteStore({ path }) }, ledger };
}

/** Restores `runId` in `runtime` once the dead runtime's lease lapsed; resolves when it waits in doubt. */
export async function takeOverInDoubt(
  runtime: Pick<CoreRuntime, 'resume'>,
  runId: string,
): Promise<RunHandle> {
  let run: RunHandle | undefined;
  for (const deadline = Date.now() + 15_000; run === undefined; ) {
    run = await runtime.resume(runId).catch((error: unknown) => {
      if (error instanceof RunConflictError && Date.now() < deadline) return undefined; // its lease still runs
      throw error;
    });
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  for (const deadline = Date.now() + 15_000; run.awaiting?.kind !== 'in_doubt'; ) {
    if (Date.now() > deadline) throw new Error(`run ${runId} never waited in doubt (state ${run.state})`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return run;
}
