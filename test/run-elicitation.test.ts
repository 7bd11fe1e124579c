/**
 * A running call asks a person (issue 39 item 4, docs/mcp.md §Elicitation): the run awaits the
 * answer in `awaiting.elicitation` while the call keeps running, and the answer goes to the call.
 * The MCP side (a server's `elicitation/create`) is test/mcp-elicitation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ANSWER_HEADER } from '../inspector/inspector-server.ts';
import type { RunMachineEvent } from '../machines/run-machine-types.ts';
import {
  initialRunTransition,
  type PersistedRunSnapshot,
  restoredRunEffects,
  runTransition,
} from '../machines/run-transition.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { RunAnswerError } from '../runtime/run-handle.ts';
import { elicit } from '../tools/call-tool.ts';
import { defineTool } from '../tools/define-tool.ts';
import type { ElicitationAnswer } from '../tools/elicitation.ts';
import { allEvents, done, echoTool, nextEvent, reachState, sleep, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Book a table' }];

/** `shop.book`: asks a person (a form with `guests`, or a yes/no question), returns what it was told. */
function askingTool(options: { fields?: boolean; timeoutMs?: number } = {}) {
  const answers: (ElicitationAnswer | undefined)[] = [];
  const tool = defineTool({
    id: 'shop.book',
    description: 'Books a table, asking the guest count',
    input: z.object({ day: z.string() }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: async ({ day }, ctx) => {
      const answer = await elicit(ctx, {
        message: `How many guests on ${day}?`,
        ...(options.fields === false
          ? {}
          : { requestedSchema: { type: 'object', properties: { guests: { type: 'integer' } } } }),
      });
      answers.push(answer);
      return { day, answer: answer ?? null };
    },
  });
  return { tool, answers };
}

const bookAndEcho = {
  toolCalls: [
    { name: 'shop.book', input: { day: 'friday' } },
    { name: 'util.echo', input: { text: 'meanwhile' } },
  ],
};

describe('a running call asks a person: awaiting.elicitation', () => {
  it('puts a form as the run’s clarification, keeps the batch running, and hands the answer to the call', async () => {
    const { tool, answers } = askingTool();
    const planner = scriptedPlanner([bookAndEcho, done('Booked.')]);
    const run = testRuntime({ planner, tools: [tool, echoTool] }).start({ messages: prompt });
    const events = allEvents(run);

    const awaited = await nextEvent(run, 'await_clarification');
    await reachState(run, 'awaiting.elicitation');
    expect(run.status).toBe('awaiting');
    const toolCallId = `${run.runId}:t1:c1`;
    expect(run.awaiting).toEqual({
      kind: 'clarification',
      id: `${toolCallId}:e1`,
      question: 'How many guests on friday?',
      missingFields: ['guests'],
      restrictToTool: 'shop.book',
      elicitation: { toolCallId, tool: 'shop.book' },
    });
    expect(awaited.clarification.id).toBe(`${toolCallId}:e1`);
    // The other call of the batch finished while the run waited; the asking one still runs.
    await sleep(20);
    expect(run.actor.getSnapshot().context.batch.results.map((result) => result?.name ?? null)).toEqual([
      null,
      'util.echo',
    ]);

    await expect(run.confirm({ id: `${toolCallId}:e1`, approved: true })).rejects.toThrow(RunAnswerError);
    await run.provideClarification({ id: `${toolCallId}:e1`, answer: '4' });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(answers).toEqual([{ action: 'accept', answer: '4' }]);
    // In the order they ended: the echo first, while the run waited.
    expect(outcome.toolResults.map((result) => result.result)).toEqual([
      { text: 'meanwhile' },
      { day: 'friday', answer: { action: 'accept', answer: '4' } },
    ]);
    // The answer is the call's, not the planner's: the next turn gets no clarification.
    expect((planner.calls[1] as { clarification?: unknown }).clarification).toBeUndefined();
    // Each call was scheduled once: coming back to `executing` starts nothing again.
    const scheduled = (await events).filter((event) => event.type === 'tool_call_scheduled');
    expect(scheduled.map((event) => event.toolCallId)).toEqual([toolCallId, `${run.runId}:t1:c2`]);
  });

  it('puts a question without fields as a confirmation: a denial declines, with its reason', async () => {
    const { tool, answers } = askingTool({ fields: false });
    const run = testRuntime({
      planner: scriptedPlanner([{ toolCalls: [{ name: 'shop.book', input: { day: 'monday' } }] }, done()]),
      tools: [tool],
    }).start({ messages: prompt });

    await reachState(run, 'awaiting.elicitation');
    const awaiting = run.awaiting;
    expect(awaiting).toMatchObject({ kind: 'confirmation', question: 'How many guests on monday?' });
    expect(awaiting).not.toHaveProperty('toolCallIds');
    await expect(
      run.confirm({ id: (awaiting as { id: string }).id, approved: true, edits: { x: {} } }),
    ).rejects.toThrow(/no call "x" awaits this approval/);
    await run.confirm({ id: (awaiting as { id: string }).id, approved: false, reason: 'closed on mondays' });

    expect((await run.result()).status).toBe('completed');
    expect(answers).toEqual([{ action: 'decline', reason: 'closed on mondays' }]);
  });

  it('declines the question when the run is canceled, and records what the call returned within the cancel', async () => {
    const { tool, answers } = askingTool();
    const run = testRuntime({
      planner: scriptedPlanner([{ toolCalls: [{ name: 'shop.book', input: { day: 'sunday' } }] }, done()]),
      tools: [tool],
    }).start({ messages: prompt });
    await reachState(run, 'awaiting.elicitation');

    run.cancel('the guest left');
    const outcome = await run.result();
    await sleep(10);

    expect(outcome.status).toBe('canceled');
    expect(answers).toEqual([{ action: 'decline', reason: 'the run ended' }]);
    // The call ended at once with the declined answer: its result, not in doubt (docs/durability.md §Effects).
    expect(outcome.toolResults[0]?.inDoubt).toBeUndefined();
    expect(outcome.toolResults[0]?.result).toEqual({
      day: 'sunday',
      answer: { action: 'decline', reason: 'the run ended' },
    });
  });

  it('answers `cancel` when nobody answers before the call’s timeout, and the run goes on with the timeout', async () => {
    const { tool, answers } = askingTool({ timeoutMs: 150 });
    const run = testRuntime({
      planner: scriptedPlanner([{ toolCalls: [{ name: 'shop.book', input: { day: 'today' } }] }, done()]),
      tools: [tool],
    }).start({ messages: prompt });
    await reachState(run, 'awaiting.elicitation');

    const outcome = await run.result();

    expect(answers).toEqual([{ action: 'cancel' }]);
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.retryHint?.reason).toBe('timeout');
    expect(run.awaiting).toBeNull();
  });

  it('resolves `undefined` for a call outside a run (nobody to ask)', async () => {
    const { tool } = askingTool();
    const { callTool } = await import('../tools/call-tool.ts');
    const { ToolCatalog } = await import('../tools/tool-catalog.ts');
    const meta = { runId: 'solo', turnId: 'solo:t1', toolCallId: 'solo:t1:c1', agentId: 'a', attempt: 1 };
    const result = await callTool(
      new ToolCatalog([tool]),
      { name: 'shop.book', toolCallId: 'solo:t1:c1', input: { day: 'friday' } },
      { meta },
    );
    expect(result.result).toEqual({ day: 'friday', answer: null });
  });

  it('after a restore (the process died while it waited) drops the question and asks for the call again', () => {
    const { tool } = askingTool();
    const { machine, caps } = testRuntime({ planner: scriptedPlanner([]), tools: [tool], policies: [] });
    const [first] = initialRunTransition(machine, { runId: 'r', agent: { id: 'a' }, messages: prompt, caps });
    const [executing] = runTransition(machine, first, {
      type: 'plan.done',
      output: { result: { toolCalls: [{ name: 'shop.book', input: { day: 'friday' } }] } },
    });
    const ask: RunMachineEvent = {
      type: 'call.elicit',
      elicitation: {
        id: 'r:t1:c1:e1',
        toolCallId: 'r:t1:c1',
        tool: 'shop.book',
        request: { message: 'Guests?' },
      },
    };
    const [waiting, effects] = runTransition(machine, executing, ask);
    expect(waiting.value).toEqual({ awaiting: 'elicitation' });
    expect(effects).toContainEqual({ type: 'await', kind: 'confirmation', id: 'r:t1:c1:e1' });

    const stored: PersistedRunSnapshot = JSON.parse(JSON.stringify(waiting));
    expect(restoredRunEffects(machine, stored)).toEqual([
      {
        type: 'execute_tools',
        turnId: 'r:t1',
        calls: [{ toolCallId: 'r:t1:c1', name: 'shop.book', input: { day: 'friday' }, index: 0 }],
      },
    ]);
    const [resumed] = runTransition(machine, stored, { type: 'steps.restored' });
    expect(resumed.value).toBe('executing');
    expect(resumed.context.flow.awaiting).toBeNull();
    expect(resumed.context.flow.callsRunning).toBeUndefined();

    // A question from a call that has its result already is answered `cancel`, the run stays.
    const [answered, refused] = runTransition(machine, executing, {
      ...ask,
      elicitation: { ...ask.elicitation, toolCallId: 'r:t1:c9' },
    } as RunMachineEvent);
    expect(answered.value).toBe('executing');
    expect(refused).toEqual([{ type: 'elicited', id: 'r:t1:c1:e1', action: 'cancel' }]);
  });
});

describe('a call’s question answered from the inspector (POST /api/runs/:key/answer)', () => {
  it('lists the run as awaiting and hands the page’s answer to the call', async () => {
    const { tool, answers } = askingTool();
    const runtime = testRuntime({
      planner: scriptedPlanner([{ toolCalls: [{ name: 'shop.book', input: { day: 'friday' } }] }, done()]),
      tools: [tool],
      inspector: { port: 0 },
    });
    try {
      const server = await runtime.inspector!.start();
      const run = runtime.start({ runId: 'booking-1', messages: prompt });
      const asked = await nextEvent(run, 'await_clarification');
      const listed = (await (await fetch(`${server.origin}/api/runs?token=${server.token}`)).json()) as {
        runs: { key: string; runId: string; status: string }[];
      };
      const entry = listed.runs.find((candidate) => candidate.runId === 'booking-1')!;
      expect(entry.status).toBe('awaiting');

      // As the page sends it: same origin, the answer header.
      const answered = await fetch(
        `${server.origin}/api/runs/${encodeURIComponent(entry.key)}/answer?token=${server.token}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: server.origin, [ANSWER_HEADER]: 'answer' },
          body: JSON.stringify({ kind: 'clarification', id: asked.clarification.id, answer: '6' }),
        },
      );
      expect(answered.status).toBe(200);
      expect((await run.result()).status).toBe('completed');
      expect(answers).toEqual([{ action: 'accept', answer: '6' }]);
    } finally {
      await runtime.inspector?.close();
    }
    // The inspector's start (its page and server) takes seconds on a loaded machine.
  }, 60_000);
});
