import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePolicy } from '../policies/define-policy.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';
import type { RunMachineEvent } from './run-machine-types.ts';
import {
  initialRunTransition,
  type PersistedRunSnapshot,
  type RunEffect,
  restoredRunEffects,
  runTransition,
} from './run-transition.ts';

let executed = 0;
const lookup = defineTool({
  id: 'kb.lookup',
  description: 'Looks a word up',
  input: z.object({ word: z.string() }),
  execute: async ({ word }) => {
    executed++;
    return { definition: `${word}: a word` };
  },
});

const plans = {
  lookup: { toolCalls: [{ name: 'kb.lookup', input: { word: 'xstate' } }] },
  answer: { finalResponse: { text: 'xstate: a word' } },
};

function runtimeFor(planner = { planStart: async () => plans.lookup, planResume: async () => plans.answer }) {
  return createRuntime({ agent: { id: 'kb' }, planner, tools: [lookup], telemetry: false, policies: [] });
}

const input = (runId: string) => ({
  runId,
  agent: { id: 'kb' },
  messages: [{ role: 'user' as const, content: 'What is xstate?' }],
  caps: runtimeFor().caps,
});

const kinds = (effects: RunEffect[]) =>
  effects.map((effect) => (effect.type === 'emit' ? `emit:${effect.event.type}` : effect.type));

describe('runTransition: the run step as a pure function (issue 38 item 1)', () => {
  it('walks a run to its answer without an actor: each step gives the next snapshot and what to do, executing nothing', async () => {
    const { machine } = runtimeFor();
    executed = 0;
    let [snapshot, effects] = initialRunTransition(machine, input('walk'));
    expect(snapshot.value).toBe('planning');
    expect(effects).toEqual([{ type: 'plan', kind: 'start', turnId: 'walk:t1' }]);

    [snapshot, effects] = runTransition(machine, snapshot, {
      type: 'plan.done',
      output: { result: plans.lookup },
    });
    expect(snapshot.value).toBe('executing');
    expect(effects).toContainEqual({
      type: 'execute_tools',
      turnId: 'walk:t1',
      calls: [{ toolCallId: 'walk:t1:c1', name: 'kb.lookup', input: { word: 'xstate' }, index: 0 }],
    });
    expect(kinds(effects)).toEqual(['emit:planner_turn', 'emit:tool_call_scheduled', 'execute_tools']);
    expect(executed).toBe(0);

    const result = {
      name: 'kb.lookup',
      toolCallId: 'walk:t1:c1',
      executed: true,
      result: { definition: 'x' },
    };
    [snapshot, effects] = runTransition(machine, snapshot, {
      type: 'tool.done',
      output: { index: 0, result },
    });
    expect(snapshot.value).toBe('planning');
    expect(kinds(effects)).toEqual(['emit:tool_result', 'plan']);
    expect(effects.at(-1)).toEqual({ type: 'plan', kind: 'resume', turnId: 'walk:t2' });

    [snapshot, effects] = runTransition(machine, snapshot, {
      type: 'plan.done',
      output: { result: plans.answer },
    });
    expect(snapshot.status).toBe('done');
    expect(snapshot.value).toBe('completed');
    expect(kinds(effects)).toEqual(['emit:planner_turn', 'emit:run_completed']);
    expect(effects[0]).toEqual({
      type: 'emit',
      event: expect.objectContaining({
        turnId: 'walk:t2',
        kind: 'resume',
        messages: 3,
        result: plans.answer,
      }),
    });
    expect(effects[1]).toEqual({
      type: 'emit',
      event: expect.objectContaining({ type: 'run_completed', finalResponse: { text: 'xstate: a word' } }),
    });
    expect(executed).toBe(0);
  });

  it('gives the same transcript as the actor does for the same answers', async () => {
    const runtime = runtimeFor();
    const out = await runtime.start({ runId: 'actor', messages: input('actor').messages }).result();
    const { machine } = runtime;
    let [snapshot] = initialRunTransition(machine, input('pure'));
    const answers: RunMachineEvent[] = [
      { type: 'plan.done', output: { result: plans.lookup } },
      {
        type: 'tool.done',
        output: {
          index: 0,
          result: { ...out.toolResults[0]!, error: undefined, toolCallId: 'pure:t1:c1' } as never,
        },
      },
      { type: 'plan.done', output: { result: plans.answer } },
    ];
    for (const event of answers) [snapshot] = runTransition(machine, snapshot, event);
    const rename = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('actor:', 'pure:'));
    expect(snapshot.context.messages).toEqual(rename(out.transcript));
    await runtime.close();
  });

  it('changes nothing it is given, and ignores an event the state does not take', () => {
    const { machine } = runtimeFor();
    const [first] = initialRunTransition(machine, input('pure'));
    const before = JSON.stringify(first);
    const [same, effects] = runTransition(machine, first, {
      type: 'provide.clarification',
      id: 'q',
      answer: 'a',
    });
    expect(effects).toEqual([]);
    expect(same.value).toBe('planning');
    expect(JSON.stringify(first)).toBe(before);
    // Twice from the same snapshot: the same step.
    const event: RunMachineEvent = { type: 'plan.done', output: { result: plans.lookup } };
    const [a] = runTransition(machine, first, event);
    const [b] = runTransition(machine, first, event);
    expect(a.value).toEqual(b.value);
    expect(a.context.batch).toEqual(b.context.batch);
    expect(JSON.stringify(first)).toBe(before);
  });

  it('asks for an answer when the planner awaits one, and again for the calls in flight of a restored snapshot', () => {
    const { machine } = runtimeFor();
    const [first] = initialRunTransition(machine, input('ask'));
    const ask = {
      await: { clarification: { id: 'which', question: 'Which word?', missingFields: ['word'] } },
    };
    const [waiting, effects] = runTransition(machine, first, { type: 'plan.done', output: { result: ask } });
    expect(waiting.value).toEqual({ awaiting: 'clarification' });
    expect(effects).toContainEqual({ type: 'await', kind: 'clarification', id: 'which' });

    const [executing] = runTransition(machine, first, {
      type: 'plan.done',
      output: { result: plans.lookup },
    });
    const stored: PersistedRunSnapshot = JSON.parse(JSON.stringify(executing));
    expect(restoredRunEffects(machine, stored)).toEqual([
      {
        type: 'execute_tools',
        turnId: 'ask:t1',
        calls: [{ toolCallId: 'ask:t1:c1', name: 'kb.lookup', input: { word: 'xstate' }, index: 0 }],
      },
    ]);
  });

  it('asks for the policy steps when the runtime has batch policies', () => {
    const runtime = createRuntime({
      agent: { id: 'kb' },
      planner: { planStart: async () => plans.lookup, planResume: async () => plans.answer },
      tools: [lookup],
      telemetry: false,
      policies: [definePolicy({ name: 'watch', onToolBatch: () => undefined })],
    });
    const [first] = initialRunTransition(runtime.machine, input('p'));
    const [next, effects] = runTransition(runtime.machine, first, {
      type: 'plan.done',
      output: { result: plans.lookup },
    });
    expect(next.value).toEqual({ validating: 'policies' });
    expect(effects.at(-1)).toEqual({ type: 'validate', turnId: 'p:t1' });
  });
});
