import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Message } from '../run/message.ts';
import { type PlanInput, scriptedPlanner } from '../run/planner.ts';
import { SessionBusyError } from '../runtime/continue-session.ts';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';

/**
 * Conversation threads (issue 16 item 6, docs/threads.md): the runs of one sessionId continue
 * one conversation, each starting from the transcript the previous one ended with, read from the
 * store, so it holds across a restart.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A planner that answers each user message with how many user messages it has seen. */
function countingPlanner() {
  const seen: Message[][] = [];
  const reply = (input: PlanInput) => {
    seen.push(input.messages);
    const users = input.messages.filter((message) => message.role === 'user');
    return { finalResponse: { text: `heard ${users.length}: ${users.at(-1)?.content}` } };
  };
  return {
    seen,
    planner: {
      planStart: async (input: PlanInput) => reply(input),
      planResume: async (input: PlanInput) => reply(input),
    },
  };
}

function runtimeOn(store: RunStore, planner: ReturnType<typeof countingPlanner>['planner']): Runtime {
  const runtime = createRuntime({ agent: { id: 'chat' }, telemetry: false, store, planner });
  cleanups.push(() => runtime.close());
  return runtime;
}

describe('conversation threads by sessionId', () => {
  it('continues the transcript across two runs and a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwarden-threads-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const open = () => {
      const store = sqliteStore({ path: join(dir, 'runs.db') });
      cleanups.push(() => store.close());
      return store;
    };

    const before = countingPlanner();
    const first = runtimeOn(open(), before.planner);
    const one = await first.continueSession('s-1', {
      messages: [{ role: 'user', content: 'my name is Ada' }],
    });
    expect((await one.result()).finalResponse?.text).toBe('heard 1: my name is Ada');
    const two = await first.continueSession('s-1', { messages: [{ role: 'user', content: 'I am on pro' }] });
    expect((await two.result()).finalResponse?.text).toBe('heard 2: I am on pro');
    expect(before.seen[1]).toEqual([
      { role: 'user', content: 'my name is Ada' },
      { role: 'assistant', content: 'heard 1: my name is Ada' },
      { role: 'user', content: 'I am on pro' },
    ]);
    await first.close();

    // A new process on the same database: the thread goes on from the store.
    const after = countingPlanner();
    const second = runtimeOn(open(), after.planner);
    const three = await second.continueSession('s-1', {
      messages: [{ role: 'user', content: 'what do you know?' }],
    });
    const outcome = await three.result();
    expect(outcome.finalResponse?.text).toBe('heard 3: what do you know?');
    expect(outcome.transcript.map((message) => message.content)).toEqual([
      'my name is Ada',
      'heard 1: my name is Ada',
      'I am on pro',
      'heard 2: I am on pro',
      'what do you know?',
      'heard 3: what do you know?',
    ]);
    // Another session starts empty.
    const other = await second.continueSession('s-2', { messages: [{ role: 'user', content: 'hi' }] });
    expect((await other.result()).finalResponse?.text).toBe('heard 1: hi');
    expect((await second.list({ sessionId: 's-1' })).map((run) => run.runId).sort()).toEqual(
      [one.runId, two.runId, three.runId].sort(),
    );
  });

  it('refuses a next run while the session has one awaiting an answer', async () => {
    const store = sqliteStore({
      path: join(await mkdtemp(join(tmpdir(), 'toolwarden-threads-')), 'runs.db'),
    });
    cleanups.push(() => store.close());
    const runtime = createRuntime({
      agent: { id: 'chat' },
      telemetry: false,
      store,
      planner: scriptedPlanner([{ await: { clarification: { id: 'q', question: 'Which plan?' } } }]),
    });
    cleanups.push(() => runtime.close());
    const waiting = await runtime.continueSession('s-1', {
      messages: [{ role: 'user', content: 'upgrade me' }],
    });
    await vi.waitFor(() => expect(waiting.status).toBe('awaiting'));
    await waiting.persisted();
    const next = runtime.continueSession('s-1', { messages: [{ role: 'user', content: 'hello?' }] });
    await expect(next).rejects.toThrow(SessionBusyError);
    await expect(next).rejects.toMatchObject({ runId: waiting.runId, status: 'awaiting' });
  });
});
