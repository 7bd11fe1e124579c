/**
 * Issue 34 items 2–3 (docs/durability.md §Effects): a call started and never recorded finished
 * is not run again blindly. A process "dies" here by losing its database (its SQLite store is
 * closed while its tool hangs after the effect: nothing it does reaches the file again); a second
 * runtime on the same file takes the run once the first's lease lapsed. The SIGKILL version is
 * test/reliability/effects-kill.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { RunConflictError } from '../runtime/durable/durable-errors.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import type { CoreRuntime as Runtime } from '../runtime/runtime-api.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { defineTool, type ReconcileOutcome, type ToolDefinition } from '../tools/define-tool.ts';

type Declaration = Pick<ToolDefinition, 'readOnly' | 'idempotent' | 'whenInDoubt'> & {
  reconcile?: (input: { orderId: string }, ctx: { idempotencyKey: string }) => ReconcileOutcome;
};

/** A refund tool that books each refund in `ledger`; its first call hangs after its effect. */
function refundTool(declaration: Declaration = {}) {
  const ledger: { orderId: string; key: string }[] = [];
  const keys: string[] = [];
  let hang = true;
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
      ledger.push({ orderId, key: ctx.idempotencyKey });
      if (hang) {
        hang = false;
        effect();
        await new Promise(() => {});
      }
      return { refunded: orderId };
    },
  });
  return { tool, ledger, keys, effected };
}

/** One refund, then an answer that quotes what the planner was told of it. */
async function plan(input: PlanInput | PlanResumeInput): Promise<PlanResult> {
  const results = 'toolResults' in input ? input.toolResults : [];
  if (results.length === 0) return { toolCalls: [{ name: 'payments.refund', input: { orderId: 'A-17' } }] };
  const [result] = results;
  return { finalResponse: { text: JSON.stringify(result?.result ?? result?.retryHint?.reason ?? null) } };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwarden-in-doubt-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
const runtimes: Runtime[] = [];

/**
 * Starts run `r1` in a first runtime, waits for the tool's effect, cuts that runtime off its
 * database, and restores the run in a second runtime (same owner name) once the lease lapsed.
 */
async function crashAfterEffect(declaration: Declaration = {}) {
  const path = join(dir, `runs-${files++}.db`);
  const refund = refundTool(declaration);
  const options = {
    agent: { id: 'refunds' },
    planner: { planStart: plan, planResume: plan },
    tools: [refund.tool],
    telemetry: false as const,
    onError: () => {},
  };
  const first = createRuntime({
    ...options,
    store: sqliteStore({ path }),
    durable: { owner: 'pod-1', leaseMs: 150 },
  });
  first.start({ runId: 'r1', messages: [{ role: 'user', content: 'Refund A-17' }] });
  await refund.effected;
  await first.store.close(); // the process is gone: nothing more of it reaches the file
  const store = sqliteStore({ path });
  const second = createRuntime({ ...options, store, durable: { owner: 'pod-1', leaseMs: 150 } });
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

async function waitInDoubt(run: RunHandle) {
  for (const deadline = Date.now() + 15_000; run.awaiting?.kind !== 'in_doubt' && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return run.awaiting;
}

async function storedEvents(runtime: Runtime, runId: string): Promise<RunEvent[]> {
  const log: RunEvent[] = [];
  for await (const record of runtime.events(runId, { follow: false })) log.push(record.event);
  return log;
}

afterAll(async () => {
  for (const runtime of runtimes) {
    await runtime.close();
    await runtime.store.close();
  }
});

describe('a call started and not recorded finished, after a crash', () => {
  it('of a tool with an effect that must happen once: the run waits in awaiting.inDoubt, listing the call', async () => {
    const { run, runtime, ledger, keys } = await crashAfterEffect();

    const awaiting = await waitInDoubt(run);
    expect(run.state).toBe('awaiting.inDoubt');
    expect(awaiting).toEqual({
      kind: 'in_doubt',
      calls: [
        {
          toolCallId: 'r1:t1:c1',
          name: 'payments.refund',
          input: { orderId: 'A-17' },
          startedAt: expect.any(Number),
          cause: 'restored',
          idempotencyKey: keys[0],
        },
      ],
    });
    expect(ledger).toHaveLength(1); // not run again
    await run.persisted();
    expect((await runtime.load('r1'))?.awaiting).toEqual(awaiting); // another process sees it too
    const log = await storedEvents(runtime, 'r1');
    const recorded = log.filter((event) => event.type === 'tool_result');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ result: { toolCallId: 'r1:t1:c1', inDoubt: { cause: 'restored' } } });
    expect(log.some((event) => event.type === 'await_in_doubt')).toBe(true);

    // A person checked the payment system: the refund went through.
    await runtime.resolveInDoubt('r1', { 'r1:t1:c1': { status: 'done', output: { refunded: 'A-17' } } });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('{"refunded":"A-17"}');
    expect(ledger).toHaveLength(1);
  });

  it('resolved not_done: runs again, by choice, under the same idempotency key', async () => {
    const { run, runtime, ledger } = await crashAfterEffect();
    await waitInDoubt(run);

    await runtime.resolveInDoubt('r1', { 'r1:t1:c1': { status: 'not_done' } });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(ledger).toHaveLength(2);
    expect(ledger[1]?.key).toBe(ledger[0]?.key);
  });

  it('refuses a resolution that leaves a call out, names an unknown one, or has a bad output', async () => {
    const { run } = await crashAfterEffect();
    await waitInDoubt(run);

    await expect(run.resolveInDoubt({})).rejects.toThrow(/missing: r1:t1:c1/);
    await expect(run.resolveInDoubt({ 'r1:t9:c1': { status: 'not_done' } })).rejects.toThrow(
      /no call "r1:t9:c1" is in doubt/,
    );
    await expect(
      run.resolveInDoubt({ 'r1:t1:c1': { status: 'done', output: { refunded: 17 } } }),
    ).rejects.toThrow(/output schema/);
    await expect(run.resolveInDoubt({ 'r1:t1:c1': { status: 'maybe' } as never })).rejects.toThrow(
      /done, not_done or failed/,
    );
    expect(run.state).toBe('awaiting.inDoubt');
    await run.resolveInDoubt({ 'r1:t1:c1': { status: 'failed', error: { message: 'refund bounced' } } });
    expect((await run.result()).toolResults[0]?.error?.message).toBe('refund bounced');
  });

  it('of a tool with reconcile: its answer settles the call, with the key the call had', async () => {
    const asked: string[] = [];
    const { run, ledger } = await crashAfterEffect({
      reconcile: (_input, ctx) => {
        asked.push(ctx.idempotencyKey);
        return { status: 'done', output: { refunded: 'A-17 (reconciled)' } };
      },
    });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('{"refunded":"A-17 (reconciled)"}');
    expect(ledger).toHaveLength(1);
    expect(asked).toEqual([ledger[0]?.key]);
  });

  it('of a tool whose reconcile cannot tell: in doubt', async () => {
    const { run, ledger } = await crashAfterEffect({ reconcile: () => ({ status: 'unknown' }) });
    expect((await waitInDoubt(run))?.kind).toBe('in_doubt');
    expect(ledger).toHaveLength(1);
  });

  it('of an idempotent tool: runs again under the same key (effectively once downstream)', async () => {
    const { run, ledger } = await crashAfterEffect({ idempotent: true });
    expect((await run.result()).status).toBe('completed');
    expect(ledger.map((entry) => entry.key)).toEqual([ledger[0]?.key, ledger[0]?.key]);
  });

  it("of a tool declared whenInDoubt: 'tell_model': the planner is told outcome_unknown and decides", async () => {
    const { run, ledger } = await crashAfterEffect({ whenInDoubt: 'tell_model' });
    const outcome = await run.result();
    expect(outcome.finalResponse?.text).toBe('"outcome_unknown"');
    expect(outcome.toolResults[0]?.retryHint).toMatchObject({
      reason: 'outcome_unknown',
      tool: 'payments.refund',
    });
    expect(ledger).toHaveLength(1);
  });
});
