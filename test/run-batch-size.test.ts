import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePolicy } from '../policies/define-policy.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { SYNC_VALIDATION_MAX_CALLS } from '../runtime/steps/validate-batch.ts';
import { defineTool } from '../tools/define-tool.ts';
import { done, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Go' }];

/** A tool whose input schema counts the calls it checks (`checked`), and a hook run on each check. */
function checkedTool(onCheck: () => void = () => {}) {
  const counts = { checked: 0, executed: 0 };
  const tool = defineTool({
    id: 'util.count',
    description: 'Counts',
    input: z.object({ n: z.number() }).refine(() => {
      counts.checked++;
      onCheck();
      return true;
    }),
    execute: async ({ n }) => {
      counts.executed++;
      return { n };
    },
  });
  return { tool, counts };
}

const calls = (count: number) =>
  Array.from({ length: count }, (_, n) => ({ name: 'util.count', toolCallId: `p${n}`, input: { n } }));

describe('maxCallsPerBatch', () => {
  it('refuses an answer over the cap before validating any of its calls, tells the planner the limit, and plans again', async () => {
    const { tool, counts } = checkedTool();
    const planner = scriptedPlanner([{ toolCalls: calls(4_000) }, { toolCalls: calls(3) }, done('ok')]);
    const runtime = testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 10_000 } });
    const events: RunEvent[] = [];
    const run = runtime.start({ messages: prompt, caps: { maxCallsPerBatch: 100 } });
    run.events$.subscribe((event) => events.push(event));

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    // Only the second answer's three calls were checked and run.
    expect(counts).toEqual({ checked: 3, executed: 3 });
    const message =
      'Your last answer proposed 4000 tool calls; at most 100 run in one turn, so none of them ran. Propose at most 100 calls, and the rest in later turns.';
    const second = planner.calls[1]!;
    expect(second.messages.at(-1)).toEqual({ role: 'user', content: message });
    expect('toolResults' in second && second.toolResults).toEqual([]);
    // No call of the refused answer is in the transcript (each would need a result).
    expect(
      outcome.transcript.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])),
    ).toHaveLength(3);
    const hints = events.flatMap((e) => (e.type === 'retry_hint' ? [e.hint] : []));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatchObject({ reason: 'invalid_arguments', tool: 'util.count', message, attempt: 1 });
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(3);
  });

  it('counts a refused answer as one failed turn, not one per call, and policies review its hint', async () => {
    const { tool } = checkedTool();
    const reviewed: string[] = [];
    const planner = scriptedPlanner([
      { toolCalls: calls(200) },
      { toolCalls: calls(200) },
      { toolCalls: calls(1) },
      done('ok'),
    ]);
    const runtime = testRuntime({
      planner,
      tools: [tool],
      caps: { maxToolCalls: 1_000, maxCallsPerBatch: 50, maxConsecutiveFailedToolCalls: 3 },
      policies: [definePolicy({ name: 'watch', onRetryHint: (hint) => void reviewed.push(hint.message) })],
    });

    const outcome = await runtime.start({ messages: prompt }).result();

    // Two refusals (two failures) stay under the cap of 3; the third answer runs and resets it.
    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBeUndefined();
    expect(planner.calls).toHaveLength(4);
    expect(reviewed).toHaveLength(2);
    expect(reviewed[0]).toMatch(/^Your last answer proposed 200 tool calls; at most 50 run in one turn/);
  });

  it("is the runtime's default at 128 calls, and an answer at the cap runs", async () => {
    const { tool, counts } = checkedTool();
    const planner = scriptedPlanner([{ toolCalls: calls(129) }, { toolCalls: calls(128) }, done('ok')]);
    const runtime = testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 1_000 } });

    const outcome = await runtime.start({ messages: prompt }).result();

    expect(outcome.status).toBe('completed');
    expect(counts).toEqual({ checked: 128, executed: 128 });
  });
});

describe('a large batch is validated in slices', () => {
  it('lets the event loop run between slices of the checks, and keeps the results in call order', async () => {
    // Each check takes ~1 ms: 300 of them would hold the event loop ~300 ms in one go.
    let timerFiredAfter: number | undefined;
    const { tool, counts } = checkedTool(() => {
      const until = performance.now() + 1;
      while (performance.now() < until) {}
      // The first macrotask queued once checks began: it runs between two slices.
      if (counts.checked === 1) {
        setImmediate(() => {
          timerFiredAfter = counts.checked;
        });
      }
    });
    const size = 300;
    const planner = scriptedPlanner([
      {
        toolCalls: calls(size).map((call, n) => (n === 7 ? { ...call, input: { n: 'seven' } } : call)),
      },
      done('ok'),
    ]);
    const runtime = testRuntime({
      planner,
      tools: [tool],
      caps: { maxToolCalls: size, maxCallsPerBatch: size },
    });
    const outcome = await runtime.start({ messages: prompt }).result();

    expect(size).toBeGreaterThan(SYNC_VALIDATION_MAX_CALLS);
    expect(outcome.status).toBe('completed');
    expect(timerFiredAfter).toBeGreaterThan(1);
    expect(timerFiredAfter).toBeLessThan(size - 1);
    // Same checks, same order as in one go: the call with a bad input refused, the others run.
    const results = planner.calls[1] && 'toolResults' in planner.calls[1] ? planner.calls[1].toolResults : [];
    expect(results.map((r) => r.providerToolCallId)).toEqual(calls(size).map((call) => call.toolCallId));
    expect(results.filter((r) => !r.executed).map((r) => r.providerToolCallId)).toEqual(['p7']);
    expect(results[7]?.retryHint?.reason).toBe('invalid_arguments');
  });

  it('checks no call in the macrotask that recorded the batch, and answers after a macrotask when the last slice ran long', async () => {
    let checkedWhenRecorded: number | undefined;
    let lastCheckTimerFired = false;
    let timerBeforeAdmitted: boolean | undefined;
    const size = 100;
    const { tool, counts } = checkedTool(() => {
      const until = performance.now() + 1;
      while (performance.now() < until) {}
      // Queued in the last slice: it runs before the run takes the output in.
      if (counts.checked === size) setImmediate(() => (lastCheckTimerFired = true));
    });
    const planner = scriptedPlanner([{ toolCalls: calls(size) }, done('ok')]);
    const runtime = testRuntime({
      planner,
      tools: [tool],
      caps: { maxToolCalls: size, maxCallsPerBatch: size },
    });
    const run = runtime.start({ messages: prompt });
    run.events$.subscribe((event) => {
      if (event.type !== 'state_changed') return;
      // Published by the step that recorded the batch and asked for its validation: a macrotask
      // queued then runs before the first check (the step's own stretch was long enough).
      if (event.state === 'validating.policies') setImmediate(() => (checkedWhenRecorded = counts.checked));
      if (event.state === 'executing') timerBeforeAdmitted = lastCheckTimerFired;
    });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(checkedWhenRecorded).toBe(0);
    expect(timerBeforeAdmitted).toBe(true);
  });

  it('validates a batch at the synchronous limit in the machine step, without the port', async () => {
    const { tool } = checkedTool();
    const planner = scriptedPlanner([{ toolCalls: calls(SYNC_VALIDATION_MAX_CALLS) }, done('ok')]);
    const runtime = testRuntime({ planner, tools: [tool], caps: { maxToolCalls: 1_000 } });
    const states: string[] = [];
    const run = runtime.start({ messages: prompt });
    run.events$.subscribe((event) => {
      if (event.type === 'state_changed') states.push(event.state);
    });

    await run.result();

    expect(states).not.toContain('validating.policies');
  });
});

describe('a large batch is scheduled, then run', () => {
  it('starts its first calls after a macrotask when scheduling the batch ran long', async () => {
    const { tool, counts } = checkedTool();
    const size = 100;
    const planner = scriptedPlanner([{ toolCalls: calls(size) }, done('ok')]);
    const runtime = testRuntime({
      planner,
      tools: [tool],
      caps: { maxToolCalls: size, maxCallsPerBatch: size },
    });
    let executedAtTimer: number | undefined;
    let scheduled = 0;
    const run = runtime.start({ messages: prompt });
    run.events$.subscribe((event) => {
      if (event.type !== 'tool_call_scheduled' || ++scheduled !== size) return;
      // The step that schedules the batch takes longer than a slice of call starts (CALL_SLICE_MS).
      const until = performance.now() + 12;
      while (performance.now() < until) {}
      setImmediate(() => (executedAtTimer = counts.executed));
    });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(counts.executed).toBe(size);
    expect(executedAtTimer).toBe(0);
  });
});

describe('a large answer and the turn after it, each in a macrotask of its own', () => {
  const size = 100;
  const caps = { maxToolCalls: 2 * size, maxCallsPerBatch: size };

  it('hands a large answer to the run after a macrotask queued when the planner answered', async () => {
    const { tool } = checkedTool();
    let state = '';
    let stateAtTimer: string | undefined;
    const planner = scriptedPlanner([{ toolCalls: calls(size) }, done('ok')]);
    const planStart = planner.planStart.bind(planner);
    planner.planStart = (input) => {
      setImmediate(() => {
        stateAtTimer = state;
      });
      return planStart(input);
    };
    const runtime = testRuntime({ planner, tools: [tool], caps });
    const run = runtime.start({ messages: prompt });
    const turns: RunEvent[] = [];
    run.events$.subscribe((event) => {
      if (event.type === 'state_changed') state = event.state;
      if (event.type === 'planner_turn') turns.push(event);
    });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    // The answer was copied, frozen and parsed in the port; the run took it in after the timer.
    expect(stateAtTimer).toBe('planning');
    const answer = (turns[0] as { result: { toolCalls: object[] } }).result;
    expect(Object.isFrozen(answer.toolCalls[size - 1])).toBe(true);
  });

  it("builds the planner input after a large batch in the turn's macrotask, not in the step that folded the batch", async () => {
    const { tool } = checkedTool();
    const planner = scriptedPlanner([{ toolCalls: calls(size) }, done('ok')]);
    const runtime = testRuntime({ planner, tools: [tool], caps });
    const run = runtime.start({ messages: prompt });
    let plannings = 0;
    let lastMessageFrozen: boolean | undefined;
    run.events$.subscribe((event) => {
      if (event.type !== 'state_changed' || event.state !== 'planning' || ++plannings !== 2) return;
      // Published by the step that folded the batch and asked for the next turn: the planner's
      // frozen transcript (readonlyTranscript) is not made yet.
      lastMessageFrozen = Object.isFrozen(run.actor.getSnapshot().context.messages.at(-1));
    });

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(lastMessageFrozen).toBe(false);
    const second = planner.calls[1]!;
    expect('toolResults' in second && second.toolResults).toHaveLength(size);
    expect(Object.isFrozen(second.messages.at(-1))).toBe(true);
  });
});
