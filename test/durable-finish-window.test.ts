import { describe, expect, it } from 'vitest';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { memoryStore } from '../stores/memory-store.ts';
import type { RunStore, RunUpdate } from '../stores/run-store.ts';

/**
 * A run that has finished but whose last write is not in the store yet (a slow database, a write
 * being retried) still looks `running` to anyone reading the store. The runtime that ran it must
 * not restore it from that stale row: `resume` hands back the finished handle, and a recovery
 * sweep (which lists `running` runs every `sweepMs`) leaves it alone. Before the fix the run left
 * the runtime's live set at its last step, so both restored it from the earlier snapshot and ran
 * its planner again (the takeover test in durable-recover.test.ts failed under load this way).
 */

/** A memory store whose write of a finished run waits until `release()` is called. */
function slowFinalWrites(): { store: RunStore; held: Promise<void>; release: () => void } {
  const inner = memoryStore();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived!: () => void;
  const held = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const store: RunStore = Object.assign(Object.create(inner) as RunStore, {
    async save(runId: string, update: RunUpdate) {
      if (update.status === 'completed') {
        arrived();
        await gate;
      }
      return inner.save(runId, update);
    },
  });
  return { store, held, release };
}

function countingPlanner() {
  const turns: string[] = [];
  const plan = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    turns.push(input.runId);
    // Long enough for the run's first write (status running) to land before it finishes.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { finalResponse: { text: 'done' } };
  };
  return { turns, planner: { planStart: plan, planResume: plan } };
}

describe('a finished run whose last write is still on its way', () => {
  it('resume() returns the finished handle instead of restoring the stale stored row', async () => {
    const { store, held, release } = slowFinalWrites();
    const { turns, planner } = countingPlanner();
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      store,
      telemetry: false,
      durable: { owner: 'a' },
    });
    const run = runtime.start({ runId: 'r1', messages: [{ role: 'user', content: 'hi' }] });
    // result() waits for the last write; the write arriving at the store says the run finished.
    await held;
    expect((await store.load('r1'))?.status).toBe('running');

    // Let the write through a little later: a resume that restores the stale row would otherwise wait on it.
    setTimeout(release, 100);
    const again = await runtime.resume('r1');
    expect(again).toBe(run);
    expect((await run.result()).status).toBe('completed');
    await runtime.flush();
    expect(turns).toEqual(['r1']);
    expect((await store.load('r1'))?.status).toBe('completed');
    await runtime.close();
  });

  it('a takeover sweep leaves it alone and recovers nothing twice', async () => {
    const { store, held, release } = slowFinalWrites();
    const { turns, planner } = countingPlanner();
    const recovered: RunHandle[] = [];
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      store,
      telemetry: false,
      durable: {
        owner: 'a',
        recover: { takeover: 'lapsed', sweepMs: 10, onRecovered: (r) => recovered.push(r) },
      },
    });
    const run = runtime.start({ runId: 'r1', messages: [{ role: 'user', content: 'hi' }] });
    // result() waits for the last write; the write arriving at the store says the run finished.
    await held;
    // Several sweeps pass while the write is held.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    expect((await run.result()).status).toBe('completed');
    await runtime.flush();
    expect(recovered).toEqual([]);
    expect(turns).toEqual(['r1']);
    await runtime.close();
  });
});
