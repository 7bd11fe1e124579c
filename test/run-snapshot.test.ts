import { describe, expect, it } from 'vitest';
import { type AnyStateNode, createActor, waitFor } from 'xstate';
import { type RunMachine, runMachine } from '../machines/run-machine.ts';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { stateName } from '../runtime/run-handle.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { call, done, echoTool, nextEvent, reachState, sleep, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Add Ada as a customer' }];
const ask = {
  await: { clarification: { id: 'q1', question: 'Which plan should Ada be on?', missingFields: ['plan'] } },
};

/** A fresh actor from a persisted snapshot (`input` is not used then; the type asks for it). */
const restore = (machine: RunMachine, snapshot: unknown) =>
  createActor(machine, { snapshot: snapshot as never, input: undefined as never });

/** A persisted snapshot as it comes back from a store: through JSON text. */
const throughJson = (snapshot: unknown) => JSON.parse(JSON.stringify(snapshot));

describe('a snapshot taken while awaiting', () => {
  it('restores into a fresh actor of a fresh runtime, which takes the answer and completes', async () => {
    const first = testRuntime({ planner: scriptedPlanner([ask]) });
    const run = first.start({ messages: prompt });
    await nextEvent(run, 'await_clarification');
    const snapshot = throughJson(run.getPersistedSnapshot());
    run.actor.stop(); // the first process is gone

    const planner = scriptedPlanner([done('Ada is on pro.')]);
    const second = testRuntime({ planner });
    const actor = restore(second.machine, snapshot);
    actor.start();
    expect(stateName(actor.getSnapshot())).toBe('awaiting.clarification');
    actor.send({ type: 'provide.clarification', id: 'q1', answer: 'pro' });
    const final = await waitFor(actor, (s) => s.status === 'done', { timeout: 5_000 });

    expect(final.value).toBe('completed');
    expect(final.context.flow.finalResponse).toEqual({ text: 'Ada is on pro.' });
    expect(planner.calls).toHaveLength(1);
    expect(planner.calls[0]).toMatchObject({
      turnId: `${run.runId}:t2`,
      clarification: { id: 'q1', answer: 'pro' },
      messages: [
        { role: 'user', content: 'Add Ada as a customer' },
        { role: 'assistant', content: 'Which plan should Ada be on?' },
        { role: 'user', content: 'pro' },
      ],
    });
  });

  it('is resumed by id by another runtime on the same store, answered through its handle, and completes', async () => {
    const store = memoryStore();
    const first = testRuntime({ planner: scriptedPlanner([ask]), store });
    const run = first.start({ messages: prompt });
    await reachState(run, 'awaiting.clarification');
    await first.close(); // releases the run, as a process that shuts down does

    const planner = scriptedPlanner([done('Ada is on pro.')]);
    const second = testRuntime({ planner, store });
    const restored = await second.resume(run.runId);
    expect(restored.state).toBe('awaiting.clarification');
    expect(restored.status).toBe('awaiting');

    await restored.provideClarification({ id: 'q1', answer: 'pro' });
    const outcome = await restored.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(planner.calls[0]).toMatchObject({ clarification: { id: 'q1', answer: 'pro' } });
  });
});

describe('a backoff deadline', () => {
  it('is a timestamp: restored from a snapshot, the run waits only for what is left of it', async () => {
    const backoffMs = 400;
    const policyRunner: PolicyRunner = {
      onToolBatch: async () => ({ decisions: [] }),
      onResults: async (_context, results) =>
        results.length > 0 ? { decisions: [], backoffMs } : { decisions: [] },
    };
    const first = testRuntime({
      planner: scriptedPlanner([call('util.echo', { text: 'hi' })]),
      tools: [echoTool],
      policyRunner,
    });
    const run = first.start({ messages: prompt });
    await reachState(run, 'awaiting.backoff');
    const awaiting = run.context.flow.awaiting;
    const until = awaiting?.kind === 'backoff' ? awaiting.until : Number.NaN;
    // Most of the backoff passes before the snapshot, so the wait left (~150 ms) and a restarted
    // one (400 ms) stay apart by more than a loaded machine's timer latency.
    await sleep(250);
    const snapshot = throughJson(run.getPersistedSnapshot());
    run.actor.stop();

    let resumedAt = Number.NaN;
    const second = testRuntime({
      planner: scriptedPlanner([
        () => {
          resumedAt = Date.now();
          return done();
        },
      ]),
      tools: [echoTool],
      policyRunner,
    });
    const restoredAt = Date.now();
    const actor = restore(second.machine, snapshot);
    actor.start();
    expect(stateName(actor.getSnapshot())).toBe('awaiting.backoff');
    await waitFor(actor, (s) => s.status === 'done', { timeout: 5_000 });

    expect(resumedAt).toBeGreaterThanOrEqual(until);
    // A restarted `after` timer would wait the whole backoff again from the restore.
    expect(resumedAt - restoredAt).toBeLessThan(backoffMs - 20);
  });

  it('needs no `after` timer: the run machine declares no delayed transitions', () => {
    const delayed: string[] = [];
    const visit = (node: AnyStateNode) => {
      if (node.after.length > 0) delayed.push(node.id);
      for (const child of Object.values(node.states)) visit(child);
    };
    visit(runMachine.root);

    expect(delayed).toEqual([]);
  });
});
