/**
 * Issue 24 item 1: a run's planner turns and its waits for answers are capped. A planner that
 * keeps asking, with an app that answers from code, used to be bounded only by the time budget
 * (which waits do not spend): 1,137–1,929 turns ran inside a 2 s budget.
 */
import { describe, expect, it } from 'vitest';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Refund my order' }];

/** A planner that asks the user on every turn, and answers only when told to finalize. */
function askingPlanner() {
  const seen: (PlanInput | PlanResumeInput)[] = [];
  const turn = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    seen.push(input);
    if ('finalize' in input && input.finalize) return { finalResponse: { text: 'Stopping.' } };
    return {
      await: { clarification: { id: `q${seen.length}`, question: 'Which order?', missingFields: [] } },
    };
  };
  return { seen, planStart: turn, planResume: turn };
}

/** The app answers every clarification from code, at once. */
function answerFromCode(run: RunHandle): { answers: number } {
  const count = { answers: 0 };
  run.events$.subscribe((event) => {
    if (event.type !== 'await_clarification') return;
    count.answers += 1;
    void run.provideClarification({ id: event.clarification.id, answer: 'The last one' }).catch(() => {});
  });
  return count;
}

describe('caps.maxTurns', () => {
  it('ends a run whose planner keeps awaiting with a finalizing turn, reason turn_cap, after 50 turns by default', async () => {
    const planner = askingPlanner();
    // A time budget that alone would let thousands of turns run (waits do not spend it).
    const runtime = testRuntime({ planner, caps: { timeBudgetMs: 2_000, maxAwaits: 1_000 } });
    const run = runtime.start({ messages: prompt });
    answerFromCode(run);

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('turn_cap');
    // 50 turns that asked, then the finalizing turn (told why, with no tools).
    expect(planner.seen).toHaveLength(51);
    const last = planner.seen.at(-1) as PlanResumeInput;
    expect(last.tools).toEqual([]);
    expect(last.finalize?.reason).toBe('turn_cap');
  });

  it('takes a lower cap per run', async () => {
    const planner = askingPlanner();
    const run = testRuntime({ planner }).start({ messages: prompt, caps: { maxTurns: 3 } });
    answerFromCode(run);

    const outcome = await run.result();

    expect(outcome.finalizeReason).toBe('turn_cap');
    expect(planner.seen).toHaveLength(4);
  });
});

describe('caps.maxAwaits', () => {
  it('finalizes with await_cap after the answer to the last wait the cap allows', async () => {
    const planner = askingPlanner();
    const run = testRuntime({ planner, caps: { maxAwaits: 3 } }).start({ messages: prompt });
    const app = answerFromCode(run);

    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('await_cap');
    expect(app.answers).toBe(3);
    expect(planner.seen).toHaveLength(4);
    expect((planner.seen.at(-1) as PlanResumeInput).finalize?.reason).toBe('await_cap');
  });
});
