import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { DEFAULT_CAPS } from '../run/caps.ts';
import type { PendingCall, RunContext } from './run-context.ts';
import { runMachine } from './run-machine.ts';
import { toolApprovalOutcome, toolCrashOutcome, toolResultOutcome } from './run-outcomes.ts';
import { runSteps } from './run-steps.ts';

const call = (n: number, status: PendingCall['status']): PendingCall => ({
  toolCallId: `r:t1:c${n}`,
  name: 'ops.deploy',
  input: {},
  attempt: 1,
  status,
});

/** A context with a two-call batch awaiting approval of call 1 (call 2 needs none). */
function awaitingApproval(): RunContext {
  return {
    runId: 'r',
    turn: 1,
    hints: [],
    batch: { pending: [call(1, 'confirm'), call(2, 'admitted')], results: [null, null], newHints: [] },
    flow: {
      awaiting: {
        kind: 'confirmation',
        confirmation: { id: 'k', prompt: 'Deploy?' },
        toolCallIds: ['r:t1:c1'],
      },
    },
  } as unknown as RunContext;
}

describe('run outcomes', () => {
  it('admits the calls an approval names and leaves the others', () => {
    const outcome = toolApprovalOutcome(awaitingApproval(), { type: 'confirm', id: 'k', approved: true });
    expect(outcome.update?.batch?.pending.map((c) => c.status)).toEqual(['admitted', 'admitted']);
    expect(outcome.update?.flow?.awaiting).toBeNull();
    expect(outcome.events).toEqual([]);
  });

  it('answers a denied call with a result the planner sees, and emits it', () => {
    const outcome = toolApprovalOutcome(awaitingApproval(), {
      type: 'confirm',
      id: 'k',
      approved: false,
      by: 'ana',
      reason: 'friday',
    });
    const [denied, untouched] = outcome.update!.batch!.results;
    expect(denied).toMatchObject({
      toolCallId: 'r:t1:c1',
      executed: false,
      error: {
        name: 'ToolConfirmationDenied',
        message: 'The call to ops.deploy was not approved by ana: friday',
      },
    });
    expect(untouched).toBeNull();
    expect(outcome.events).toEqual([expect.objectContaining({ type: 'tool_result', result: denied })]);
  });

  it('records a call’s result once: a second answer for it changes nothing', () => {
    const context = awaitingApproval();
    const result = { name: 'ops.deploy', toolCallId: 'r:t1:c2', executed: true, result: { ok: true } };
    const first = toolResultOutcome(context, { type: 'tool.done', output: { index: 1, result } });
    expect(first.update?.batch?.results[1]).toMatchObject(result);
    const after = { ...context, ...first.update } as RunContext;
    expect(toolResultOutcome(after, { type: 'tool.done', output: { index: 1, result } })).toEqual({
      events: [],
    });
  });

  it('keeps a crashed call as a non-recoverable result, only for the call it names', () => {
    const context = awaitingApproval();
    const crash = {
      type: 'tool.error' as const,
      index: 1,
      toolCallId: 'r:t1:c2',
      error: new Error('wrapper threw'),
    };
    expect(toolCrashOutcome(context, crash).update?.batch?.results[1]).toMatchObject({
      executed: true,
      error: { name: 'ToolError', message: 'wrapper threw', recoverable: false },
    });
    expect(toolCrashOutcome(context, { ...crash, toolCallId: 'r:t1:c9' })).toEqual({ events: [] });
  });
});

describe('a planner turn’s usage', () => {
  it('books the time a host lost on a turn that timed out, once, as the turn finalizes', async () => {
    let turns = 0;
    const machine = runMachine.provide({
      actors: {
        runSteps: runSteps({
          // A retried turn (Temporal) that lost 500 ms and then ran out of time.
          plan: async () => (++turns === 1 ? { timedOut: true, hostLostMs: 500 } : new Promise(() => {})),
        }),
      },
      guards: { consultsPolicies: () => false, reviewsResults: () => false },
    });
    const actor = createActor(machine, {
      input: {
        runId: 'r',
        agent: { id: 'a' },
        messages: [{ role: 'user', content: 'go' }],
        caps: DEFAULT_CAPS,
      },
    }).start();
    const snapshot = await waitFor(actor, (s) => s.matches('finalizing'));
    expect(snapshot.context.flow.finalize?.reason).toBe('time_budget');
    expect(snapshot.context.flow.awaitedMs).toBe(500);
    actor.stop();
  });
});
