import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../run/run-events.ts';
import { isImmutableCopy } from '../../stores/immutable-copy.ts';
import { memoryStore } from '../../stores/memory-store.ts';
import type { RunStore, RunUpdate, StoredRun } from '../../stores/run-store.ts';
import { RunStoreUnavailableError } from '../../stores/run-store-errors.ts';
import { RunConflictError, RunPersistenceError } from './durable-errors.ts';
import { type PersistedWrite, RunPersister, type SnapshotEntry } from './run-persister.ts';

const note = (n: number): RunEvent => ({
  type: 'planner_note',
  runId: 'r1',
  at: n,
  turnId: 'r1:t1',
  note: `n${n}`,
});
const entry = (step: number, toolCallIds: string[] = []): SnapshotEntry => ({
  status: 'running',
  state: `step-${step}`,
  snapshot: { value: `step-${step}`, context: { step } },
  labels: {},
  toolCallIds,
});
const down = (operation: string) =>
  new RunStoreUnavailableError({ store: 'test store', operation, cause: new Error('connection reset') });

/** A store whose `create`/`save` wait for `release()` and can be told to fail. */
function gatedStore() {
  const store = memoryStore();
  const gates: (() => void)[] = [];
  let failNext: ((update: RunUpdate | undefined) => Error | 'after-commit' | undefined) | undefined;
  const gated: RunStore = {
    ...store,
    create: async (run) => {
      await new Promise<void>((resolve) => gates.push(resolve));
      return store.create(run);
    },
    save: async (runId, update) => {
      await new Promise<void>((resolve) => gates.push(resolve));
      const failure = failNext?.(update);
      failNext = undefined;
      if (failure === 'after-commit') {
        await store.save(runId, update);
        throw down('save');
      }
      if (failure) throw failure;
      return store.save(runId, update);
    },
  };
  return {
    store: gated,
    inner: store,
    /** Lets the oldest waiting write through. */
    release: async () => {
      await vi.waitFor(() => expect(gates.length).toBeGreaterThan(0));
      gates.shift()!();
    },
    failNext(decide: typeof failNext) {
      failNext = decide;
    },
  };
}

/** A memory store that records every snapshot it is given. */
function snapshotRecordingStore(): { store: RunStore; given: unknown[] } {
  const inner = memoryStore();
  const given: unknown[] = [];
  const store: RunStore = {
    ...inner,
    create: (run) => {
      given.push(run.snapshot);
      return inner.create(run);
    },
    save: (runId, update) => {
      given.push(update.snapshot);
      return inner.save(runId, update);
    },
  };
  return { store, given };
}

function persisterOn(
  store: RunStore,
  extra: { onWrite?: (write: PersistedWrite) => void; recordToolCalls?: boolean } = {},
) {
  const errors: RunPersistenceError[] = [];
  const conflicts: Error[] = [];
  const persister = new RunPersister({
    store,
    runId: 'r1',
    agentId: 'agent',
    retry: { initialMs: 5, maxMs: 20 },
    onError: (error) => errors.push(error),
    onConflict: (error) => conflicts.push(error),
    ...extra,
  });
  return { persister, errors, conflicts };
}

describe('RunPersister', () => {
  it('writes the newest of the snapshots queued behind a write in flight, with all their events, in order', async () => {
    const gated = gatedStore();
    const writes: PersistedWrite[] = [];
    const { persister } = persisterOn(gated.store, { onWrite: (write) => writes.push(write) });
    persister.event(note(1));
    persister.snapshot(entry(1));
    await nextMacrotask(); // the create of step 1 is in flight
    for (const step of [2, 3, 4]) {
      persister.event(note(step));
      persister.snapshot(entry(step));
    }
    expect(persister.status.state).toBe('writing');
    const done = persister.persisted();
    await gated.release(); // create, step 1
    await gated.release(); // save, steps 2-4 at once
    await done;
    expect(writes.map((write) => [write.state, write.version, write.events])).toEqual([
      ['step-1', 1, 1],
      ['step-4', 2, 3],
    ]);
    expect(await gated.inner.load('r1')).toMatchObject({ version: 2, snapshot: { value: 'step-4' } });
    expect(
      (await gated.inner.readEvents('r1')).map((record) => (record.event as { note: string }).note),
    ).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(persister.status).toEqual({ state: 'saved', version: 2 });
  });

  it('writes the boundaries passed within one macrotask as one write with all their events (group commit, issue 17)', async () => {
    const writes: PersistedWrite[] = [];
    const { persister } = persisterOn(memoryStore(), { onWrite: (write) => writes.push(write) });
    for (const step of [1, 2, 3]) {
      persister.event(note(step));
      persister.snapshot(entry(step));
    }
    await persister.persisted();
    persister.event(note(4));
    persister.snapshot(entry(4));
    await persister.persisted();
    expect(writes.map((write) => [write.state, write.version, write.events])).toEqual([
      ['step-3', 1, 3],
      ['step-4', 2, 1],
    ]);
  });

  it('keeps everything through a failed write, reports it, retries, and lands it all once the store is back', async () => {
    const gated = gatedStore();
    const { persister, errors } = persisterOn(gated.store);
    persister.snapshot(entry(1));
    await gated.release();
    await persister.persisted();

    gated.failNext(() => down('save'));
    persister.event(note(2));
    persister.snapshot(entry(2));
    const waiting = persister.persisted();
    let caughtUp = false;
    void persister.caughtUp().then(() => {
      caughtUp = true;
    });
    await gated.release();
    await expect(waiting).rejects.toBeInstanceOf(RunPersistenceError);
    expect(caughtUp).toBe(false);
    expect(persister.status.state).toBe('failing');
    expect(errors[0]).toMatchObject({ runId: 'r1', attempts: 1, retryInMs: 5 });
    persister.event(note(3));
    persister.snapshot(entry(3));
    await gated.release(); // the retry, with step 3 and both events
    await vi.waitFor(() => expect(persister.status.state).toBe('saved'));
    expect(caughtUp).toBe(true);
    expect(await gated.inner.load('r1')).toMatchObject({ version: 2, snapshot: { value: 'step-3' } });
    expect((await gated.inner.readEvents('r1')).map((record) => record.seq)).toEqual([1, 2]);
  });

  it('does not call it a conflict when a failed write had in fact been committed: it carries on after it', async () => {
    const gated = gatedStore();
    const { persister, conflicts, errors } = persisterOn(gated.store);
    persister.snapshot(entry(1));
    await gated.release();
    gated.failNext(() => 'after-commit');
    persister.event(note(2));
    persister.snapshot(entry(2));
    await gated.release();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    // The retry finds step 2 stored as it sent it: nothing is left to write.
    await vi.waitFor(() => expect(persister.status).toEqual({ state: 'saved', version: 2 }));
    persister.event(note(3));
    persister.snapshot(entry(3));
    await gated.release();
    await vi.waitFor(() => expect(persister.status.state).toBe('saved'));
    expect(conflicts).toEqual([]);
    expect(await gated.inner.load('r1')).toMatchObject({ version: 3, snapshot: { value: 'step-3' } });
    // The event of the write that landed is not appended twice.
    expect(
      (await gated.inner.readEvents('r1')).map((record) => (record.event as { note: string }).note),
    ).toEqual(['n2', 'n3']);
  });

  it('stops writing and says so once, when another writer advanced the run', async () => {
    const store = memoryStore();
    const { persister, conflicts } = persisterOn(store);
    persister.snapshot(entry(1));
    await persister.persisted();
    await store.save('r1', { expectedVersion: 1, status: 'running', snapshot: { by: 'someone else' } });
    persister.snapshot(entry(2));
    await expect(persister.persisted()).rejects.toBeInstanceOf(RunConflictError);
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]?.message).toMatch(/it is at version 2, this process had 1/);
    persister.snapshot(entry(3));
    await expect(persister.persisted()).rejects.toBe(conflicts[0]);
    expect(persister.status.state).toBe('conflict');
    expect(await store.load('r1')).toMatchObject({ version: 2, snapshot: { by: 'someone else' } });
  });

  it('resolves whenRecorded(id) only once a snapshot holding the call is stored, waiting through failures', async () => {
    const gated = gatedStore();
    const { persister } = persisterOn(gated.store);
    let recorded = false;
    void persister.whenRecorded('call-1').then(() => {
      recorded = true;
    });
    persister.snapshot(entry(1));
    await gated.release();
    await persister.persisted();
    expect(recorded).toBe(false);
    gated.failNext(() => down('save'));
    persister.snapshot(entry(2, ['call-1']));
    await gated.release();
    await vi.waitFor(() => expect(persister.status.state).toBe('failing'));
    expect(recorded).toBe(false);
    await gated.release();
    await vi.waitFor(() => expect(recorded).toBe(true));
    await expect(persister.whenRecorded('call-1')).resolves.toBeUndefined();
  });

  it('hands a volatile store each snapshot itself, declared immutable, not a copy of it', async () => {
    const { store, given } = snapshotRecordingStore();
    const { persister } = persisterOn(store);
    const messages = [{ role: 'user', content: 'hi' }];
    const first = { value: 'planning', context: { turn: 1, messages } };
    persister.snapshot({ ...entry(1), snapshot: first });
    await persister.persisted();
    const second = { value: 'executing', context: { ...first.context, turn: 2 } };
    persister.snapshot({ ...entry(2), snapshot: second });
    await persister.persisted();
    const [stored1, stored2] = given as (typeof first)[];
    expect(isImmutableCopy(stored1)).toBe(true);
    expect(stored1).toEqual(first);
    expect(stored2).toEqual(second);
    expect(stored1).toBe(first);
    expect(stored2).toBe(second);
    expect(Object.isFrozen(stored2) && !Object.isFrozen(second.context)).toBe(true);
    expect((await store.load('r1'))?.snapshot).toEqual(second);
  });

  it('creates the run owned by its owner, after the lease is ready', async () => {
    const store = memoryStore();
    const order: string[] = [];
    const persister = new RunPersister({
      store: {
        ...store,
        create: (run) => {
          order.push('create');
          return store.create(run);
        },
      } as RunStore,
      runId: 'r1',
      agentId: 'agent',
      sessionId: 's1',
      owner: 'pod-1',
      ready: async () => {
        order.push('ready');
      },
      onError: () => {},
      onConflict: () => {},
    });
    persister.snapshot({ ...entry(1), labels: { tenant: 'acme' } });
    await persister.persisted();
    expect(order).toEqual(['ready', 'create']);
    expect(await store.load('r1')).toMatchObject<Partial<StoredRun>>({
      owner: 'pod-1',
      sessionId: 's1',
      labels: { tenant: 'acme' },
    });
  });

  it('keeps nothing of a written snapshot: once the store holds a newer one, the older is gone', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const store = memoryStore();
    const { persister } = persisterOn(store);
    const context = { step: 1, messages: [{ role: 'user', content: 'hi' }] };
    // A persisted snapshot's other members are new objects at every write (persistedSnapshotOf).
    const written = (() => {
      const children = { steps: { snapshot: { status: 'active' }, src: 'runSteps' } };
      persister.snapshot({ ...entry(1), snapshot: { value: 'awaiting', context, children } });
      return new WeakRef(children);
    })();
    await persister.persisted();
    persister.snapshot({ ...entry(2), snapshot: { value: 'planning', context } });
    await persister.persisted();
    await nextMacrotask();
    gc();
    await nextMacrotask();
    gc();

    expect(written.deref()).toBeUndefined();
  });

  it('keeps no tool call ids when no call waits for its record (recordToolCalls: false)', async () => {
    const { persister } = persisterOn(memoryStore(), { recordToolCalls: false });
    persister.snapshot(entry(1, ['call-1']));
    await persister.persisted();
    const recorded = (persister as unknown as { recorded?: Set<string> }).recorded;

    expect(recorded).toBeUndefined();
    // Nothing to wait for: resolves at once, even for an id no write held.
    const answer = await Promise.race([
      persister.whenRecorded('call-2').then(() => 'resolved'),
      new Promise((resolve) => setTimeout(() => resolve('waiting'), 50)),
    ]);
    expect(answer).toBe('resolved');
  });
});

/** Writes start in the next macrotask (group commit): lets the one queued so far begin. */
function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
