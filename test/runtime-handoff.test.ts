import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { z } from 'zod';
import { createRuntime, type Runtime, type RuntimeOptions } from '../create-runtime.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { RunStore } from '../stores/run-store.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import { defineTool } from '../tools/define-tool.ts';

/**
 * What an app, or another process, sees of a run through the public API (issue 16 item 3): the
 * stored log is complete when `result()` resolves, a resume logs no state twice, a stored run
 * says what it waits for, `close()` lets the process exit, the inspector's token stays out of logs.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sqliteFile(): Promise<() => RunStore> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwarden-handoff-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return () => {
    const store = sqliteStore({ path: join(dir, 'runs.db') });
    cleanups.push(() => store.close());
    return store;
  };
}

function runtimeOn(store: RunStore, options: Partial<RuntimeOptions> = {}): Runtime {
  const runtime = createRuntime({
    agent: { id: 'support' },
    telemetry: false,
    store,
    planner: scriptedPlanner([]),
    ...options,
  });
  cleanups.push(() => runtime.close());
  return runtime;
}

const lookup = defineTool({
  id: 'crm.lookup',
  description: 'Find a customer by email',
  input: z.object({ email: z.string() }),
  execute: async ({ email }) => ({ email, plan: 'pro' }),
});

const askPlan = () =>
  scriptedPlanner([
    {
      await: {
        clarification: {
          id: 'q1',
          question: 'Which email?',
          missingFields: ['email'],
          restrictToTool: 'crm.lookup',
        },
      },
    },
    (input) => ({ finalResponse: { text: `ok ${(input as PlanResumeInput).clarification?.answer}` } }),
  ]);

describe('the public run API across processes (issue 16 item 3)', () => {
  it('result() resolves only once every event of the run is in the store', async () => {
    const open = await sqliteFile();
    const runtime = runtimeOn(open(), {
      tools: [lookup],
      planner: scriptedPlanner([
        { toolCalls: [{ name: 'crm.lookup', input: { email: 'ada@example.com' } }] },
        { finalResponse: { text: 'Ada is on pro' } },
      ]),
    });
    const run = runtime.start({ messages: [{ role: 'user', content: 'plan of ada?' }] });
    const emitted = firstValueFrom(run.events$.pipe(toArray()));
    await run.result();
    const stored = await runtime.store.readEvents(run.runId);
    expect(stored.map((record) => (record.event as RunEvent).type)).toEqual(
      (await emitted).map((e) => e.type),
    );
    expect(stored.at(-2)?.event).toMatchObject({ type: 'state_changed', state: 'completed' });
    expect(stored.at(-1)?.event).toMatchObject({ type: 'run_completed' });
  });

  it('a resumed run logs the state it was saved in once, not again on restore', async () => {
    const open = await sqliteFile();
    const first = runtimeOn(open(), { planner: askPlan() });
    const run = first.start({ messages: [{ role: 'user', content: 'look someone up' }] });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'));
    await first.close();

    const second = runtimeOn(open(), { planner: scriptedPlanner([{ finalResponse: { text: 'done' } }]) });
    const resumed = await second.provideClarification(run.runId, { id: 'q1', answer: 'ada@example.com' });
    await resumed.result();
    const states = [];
    for await (const { event } of second.events(run.runId)) {
      expectTypeOf(event).toEqualTypeOf<RunEvent>();
      if (event.type === 'state_changed') states.push(event.state);
    }
    expect(states.filter((state) => state === 'awaiting.clarification')).toHaveLength(1);
    expect(states.at(-1)).toBe('completed');
  });

  it('a stored run says what it awaits, so another process answers without its snapshot', async () => {
    const open = await sqliteFile();
    const first = runtimeOn(open(), { planner: askPlan(), tools: [lookup] });
    const run = first.start({ messages: [{ role: 'user', content: 'look someone up' }] });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'));
    await run.persisted();
    const expected = {
      kind: 'clarification',
      id: 'q1',
      question: 'Which email?',
      missingFields: ['email'],
      restrictToTool: 'crm.lookup',
    };
    expect(run.awaiting).toEqual(expected);

    const other = runtimeOn(open());
    const [listed] = await other.list({ status: 'awaiting' });
    expect(listed?.awaiting).toEqual(expected);
    expect((await other.load(run.runId))?.awaiting).toEqual(expected);
    await first.close();
    const awaiting = listed?.awaiting;
    if (awaiting?.kind !== 'clarification') throw new Error('expected a clarification');
    await other.provideClarification(run.runId, { id: awaiting.id, answer: 'ada@example.com' });
    await vi.waitFor(async () => expect((await other.load(run.runId))?.awaiting).toBeNull());
  });

  it('close() stops the inspector server the runtime started, and its URL token is printed only when asked', async () => {
    const printed: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      const runtime = createRuntime({
        agent: { id: 'a' },
        planner: scriptedPlanner([]),
        telemetry: false,
        inspector: { port: 0 },
      });
      const { url } = await runtime.inspector!.start();
      expect((await fetch(url)).status).toBe(200);
      await runtime.close();
      await expect(fetch(url)).rejects.toThrow();
      const token = new URL(url).searchParams.get('token')!;
      expect(printed.join('')).toContain(`listening on ${new URL(url).origin}/`);
      expect(printed.join('')).not.toContain(token);

      const asked = createRuntime({
        agent: { id: 'a' },
        planner: scriptedPlanner([]),
        telemetry: false,
        inspector: { port: 0, printUrl: true },
      });
      const server = await asked.inspector!.start();
      await asked.close();
      expect(printed.join('')).toContain(server.url);
    } finally {
      write.mockRestore();
    }
  });
});
