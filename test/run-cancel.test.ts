import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import { type PlanResult, type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { defineTool } from '../tools/define-tool.ts';
import { call, deferred, done, hangingStep, nextEvent, reachState, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Do it' }];
const never = <T>() => new Promise<T>(() => {});
const carryOn = async (): Promise<PolicyEffects> => ({ decisions: [] });

interface Case {
  state: string;
  steps: (seen: { signal?: AbortSignal }) => ScriptedStep[];
  policyRunner?: PolicyRunner;
  /** Whose AbortSignal must abort on cancel: the planner's or the tool's. */
  aborts?: 'planner' | 'tool';
  maxToolCalls?: number;
}

let toolStarted = deferred<AbortSignal>();
const slowTool = defineTool({
  id: 'util.slow',
  description: 'Runs until aborted',
  input: z.object({}),
  execute: (_, ctx) => {
    toolStarted.resolve(ctx.signal);
    return never();
  },
});
const confirmTool = defineTool({
  id: 'util.guarded',
  description: 'Needs approval',
  input: z.object({}),
  requiresConfirmation: true,
  execute: async () => ({ ok: true }),
});
const externalTool = defineTool({ id: 'app.lookup', description: 'Run by the app', input: z.object({}) });
const plainCall = call('util.slow', {});
const askClarification: PlanResult = {
  await: { clarification: { id: 'q', question: 'Which?', missingFields: [] } },
};

const cases: Case[] = [
  { state: 'planning', steps: (seen) => [hangingStep(seen)], aborts: 'planner' },
  {
    state: 'validating.policies',
    steps: () => [plainCall],
    policyRunner: { onToolBatch: never, onResults: carryOn },
  },
  { state: 'executing', steps: () => [plainCall], aborts: 'tool' },
  { state: 'awaiting.clarification', steps: () => [askClarification] },
  {
    state: 'awaiting.externalTools',
    steps: () => [
      { await: { externalTools: { id: 'x', calls: [{ name: 'app.lookup', toolCallId: 'x1', input: {} }] } } },
    ],
  },
  { state: 'awaiting.confirmation', steps: () => [call('util.guarded', {})] },
  {
    state: 'awaiting.backoff',
    steps: () => [call('util.guarded', {})],
    // Backs off for a minute after the (denied) batch.
    policyRunner: { onToolBatch: carryOn, onResults: async () => ({ decisions: [], backoffMs: 60_000 }) },
  },
  {
    state: 'resuming.policies',
    steps: () => [{ await: { confirmation: { id: 'c', prompt: 'Go?' } } }],
    policyRunner: { onToolBatch: carryOn, onResults: never },
  },
  {
    state: 'finalizing',
    steps: (seen) => [
      {
        toolCalls: [
          { name: 'util.guarded', input: {} },
          { name: 'util.guarded', input: {} },
        ],
      },
      hangingStep(seen),
    ],
    aborts: 'planner',
    maxToolCalls: 1,
  },
];

describe('cancel', () => {
  // First in the file: it counts the process's timers, and the runs of the tests after it leave
  // timers of their own (a canceled tool's sleep) that would come and go while it counts.
  it('leaves no timer behind when it stops a planner call the time budget was bounding', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const planner = scriptedPlanner([done(), hangingStep({})]);
    const runtime = testRuntime({ planner, caps: { timeBudgetMs: 600_000 } });
    await runtime.start({ messages: prompt }).result();
    // The test runner's own timers (its RPC to the main process) come and go while a test
    // starts: counted once they are gone, or the count changes under the test (it did, when
    // the first run above got fast enough to end before them).
    const before = await settledCount(timers);

    const run = runtime.start({ messages: prompt });
    await reachState(run, 'planning');
    run.cancel();
    await run.result();

    // Polled: files share a worker in the unit run (isolate: false), so another file's runtime may
    // hold a short timer at either count; the budget's 600 s timer, if left, would stay. Not with
    // expect.poll: since vitest 5 its own timeout timer is active while it counts.
    expect(await countReaching(timers, before, 3_000)).toBe(before);
  });

  it.each(cases)('ends a run in $state as canceled, with run_canceled, and result() resolves', async (c) => {
    const plannerSeen: { signal?: AbortSignal } = {};
    toolStarted = deferred<AbortSignal>();
    const runtime = testRuntime({
      planner: scriptedPlanner(c.steps(plannerSeen)),
      tools: [slowTool, confirmTool, externalTool],
      policyRunner: c.policyRunner,
      caps: { maxToolCalls: c.maxToolCalls ?? 10 },
    });
    const run = runtime.start({ messages: prompt });
    if (c.state === 'awaiting.backoff') {
      const awaited = await nextEvent(run, 'await_confirmation');
      await run.confirm({ id: awaited.confirmation.id, approved: false });
    } else if (c.state === 'resuming.policies') {
      await nextEvent(run, 'await_confirmation');
      await run.confirm({ id: 'c', approved: true });
    }
    await reachState(run, c.state);
    const toolSignal = c.aborts === 'tool' ? await toolStarted.promise : undefined;
    // A planner turn starts from the turn scheduler a moment after its state is entered.
    if (c.aborts === 'planner') await vi.waitFor(() => expect(plannerSeen.signal).toBeDefined());

    run.cancel('user asked');
    const outcome = await run.result();
    const canceled = await nextEvent(run, 'run_canceled');

    expect(outcome.status).toBe('canceled');
    expect(run.status).toBe('canceled');
    expect(run.state).toBe('canceled');
    expect(canceled).toMatchObject({ type: 'run_canceled', reason: 'user asked', runId: run.runId });
    if (c.aborts === 'planner') expect(plannerSeen.signal?.aborted).toBe(true);
    if (c.aborts === 'tool') expect(toolSignal?.aborted).toBe(true);
  });

  it('does nothing to a run that already ended', async () => {
    const run = testRuntime({ planner: scriptedPlanner([done('All done.')]) }).start({ messages: prompt });
    await run.result();

    run.cancel('too late');

    expect((await run.result()).status).toBe('completed');
    expect(run.state).toBe('completed');
  });
});

/** `count()` once it equals `want` (checked every 10 ms between this helper's own timers), or its last value after `timeoutMs`. */
async function countReaching(count: () => number, want: number, timeoutMs: number): Promise<number> {
  for (const giveUpAt = Date.now() + timeoutMs; ; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const now = count();
    if (now === want || Date.now() >= giveUpAt) return now;
  }
}

/** `count()` once it has stayed the same for 250 ms (checked every 10 ms, for at most 5 s). */
async function settledCount(count: () => number): Promise<number> {
  let last = count();
  let stableSince = Date.now();
  for (const giveUpAt = Date.now() + 5_000; Date.now() < giveUpAt; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const now = count();
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 250) {
      break;
    }
  }
  return last;
}
