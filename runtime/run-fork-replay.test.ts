import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Planner } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { RunEventRecord } from '../stores/run-store.ts';
import { counterTool, ledgerPlanner, twentyStepRun } from '../test/support/ledger-runs.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createRuntime } from './create-runtime.ts';
import { FORK_NAME_LABEL } from './run-fork.ts';

describe('runtime.fork with replay: "recorded" (issue 38 item 2)', () => {
  it('forks a 20-step run at step 10 with the same planner: no tool executes, no planner turn is asked, the same answer', async () => {
    const { runtime, planner, executions, parent, scheduledAt } = await twentyStepRun();
    executions.length = 0;
    planner.asked.length = 0;
    const options = { atEvent: scheduledAt(10), replay: 'recorded' as const, name: 'same model' };

    const preview = await runtime.forkPreview('p', options);
    expect(preview.execute).toEqual([]);
    expect(preview.replayed.map((call) => call.turn)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(preview).toMatchObject({
      inDoubt: [],
      plannerTurns: { replayed: 11, asked: 0 },
      endsIn: 'completed',
      exact: true,
    });

    const child = await runtime.fork('p', { ...options, runId: 'same' });
    const out = await child.result();
    expect(executions).toEqual([]);
    expect(planner.asked).toEqual([]);
    expect(out.finalResponse).toEqual(parent.finalResponse);
    expect(out.toolResults.map((r) => r.toolCallId)).toEqual(
      [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20].map((turn) => `same:t${turn}:c1`),
    );
    expect(out.toolResults[0]!.telemetry).toMatchObject({ replayedFrom: 'p:t10:c1' });
    expect(child.context.labels[FORK_NAME_LABEL]).toBe('same model');
    const turns = [];
    for await (const record of runtime.events('same', { follow: false }))
      if (record.event.type === 'planner_turn') turns.push(record.event);
    expect(turns.map((t) => t.replayedFrom)).toEqual(
      [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21].map((t) => `p:t${t}`),
    );
    await runtime.close();
  });

  it('with a planner that diverges at step 14: exactly the calls from step 14 on execute, as the preview listed them', async () => {
    const { runtime, executions, scheduledAt } = await twentyStepRun();
    executions.length = 0;
    const other = ledgerPlanner((turn) => (turn >= 14 ? turn * 100 : turn));
    const options = { atEvent: scheduledAt(10), replay: 'recorded' as const, planner: other };

    const preview = await runtime.forkPreview('p', options);
    expect(preview.replayed.map((call) => call.turn)).toEqual([10, 11, 12, 13]);
    expect(preview.execute).toEqual(
      [14, 15, 16, 17, 18, 19, 20].map((turn) => ({
        turn,
        index: 0,
        name: 'ledger.add',
        input: { amount: turn * 100 },
      })),
    );
    expect(preview.exact).toBe(false);
    // The preview asked the planner (turns 11..21) and executed nothing.
    expect(executions).toEqual([]);

    const out = await (await runtime.fork('p', options)).result();
    expect(executions).toEqual(preview.execute.map((call) => (call.input as { amount: number }).amount));
    // 1..13 from the parent's ledger, then the live calls on this (shared) ledger.
    expect(out.finalResponse?.text).toBe(`balance ${executions.reduce((sum, n) => sum + n, 0)}`);
    await runtime.close();
  });

  it('live (the default) runs every call after the fork point again', async () => {
    const { runtime, executions, scheduledAt } = await twentyStepRun();
    executions.length = 0;
    expect((await runtime.forkPreview('p', { atEvent: scheduledAt(18) })).execute.map((c) => c.turn)).toEqual(
      [18, 19, 20],
    );
    await (await runtime.fork('p', { atEvent: scheduledAt(18) })).result();
    expect(executions).toEqual([18, 19, 20]);
    await runtime.close();
  });

  it('an edited input diverges at once: the edited call and all after it execute', async () => {
    const { runtime, executions, scheduledAt } = await twentyStepRun();
    executions.length = 0;
    const options = {
      atEvent: scheduledAt(19),
      replay: 'recorded' as const,
      edit: { input: { amount: 1000 } },
    };
    expect((await runtime.forkPreview('p', options)).execute.map((c) => c.input)).toEqual([
      { amount: 1000 },
      { amount: 20 },
    ]);
    const out = await (await runtime.fork('p', options)).result();
    expect(executions).toEqual([1000, 20]);
    expect(out.status).toBe('completed');
    await runtime.close();
  });

  it('never runs again a parent call whose outcome is unknown (scheduled, never answered)', async () => {
    const { tool, executions } = counterTool();
    let hang = true;
    const hanging = defineTool({
      id: 'ledger.transfer',
      description: 'Moves money out (the process dies while it runs)',
      input: z.object({ amount: z.number() }),
      execute: async ({ amount }, { signal }) => {
        executions.push(-amount);
        if (hang)
          await new Promise((_, reject) =>
            signal.addEventListener('abort', () => reject(new Error('killed'))),
          );
        return { ok: true };
      },
    });
    const planner: Planner = {
      planStart: async () => ({ toolCalls: [{ name: 'ledger.transfer', input: { amount: 5 } }] }),
      planResume: async () => ({ finalResponse: { text: 'done' } }),
    };
    const runtime = createRuntime({
      agent: { id: 'l' },
      planner,
      tools: [tool, hanging],
      telemetry: false,
      forks: true,
    });
    const run = runtime.start({ runId: 'crashed', messages: [{ role: 'user', content: 'move 5' }] });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The process "dies" mid-call: the actor stops with the call in flight; no result is recorded.
    run.actor.stop();
    await runtime.flush('crashed').catch(() => undefined);
    hang = false;
    executions.length = 0;
    const events: RunEventRecord<RunEvent>[] = [];
    for await (const record of runtime.events('crashed', { follow: false })) events.push(record);
    expect(events.some((r) => r.event.type === 'tool_result')).toBe(false);
    const at = events.find((r) => r.event.type === 'tool_call_scheduled')!.seq;

    const preview = await runtime.forkPreview('crashed', { atEvent: at, replay: 'recorded' });
    expect(preview.inDoubt).toEqual([
      { turn: 1, index: 0, name: 'ledger.transfer', input: { amount: 5 }, parentToolCallId: 'crashed:t1:c1' },
    ]);
    expect(preview.execute).toEqual([]);
    const out = await (await runtime.fork('crashed', { atEvent: at, replay: 'recorded' })).result();
    expect(executions).toEqual([]);
    expect(out.toolResults[0]).toMatchObject({ executed: false, error: { name: 'InDoubtError' } });
    await runtime.close();
  });
});
