import { describe, expect, it } from 'vitest';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import { recordToolCallsUpdate } from './run-actions.ts';
import { NO_CALLS, type PendingCall, type RunContext } from './run-context.ts';
import type { RunMachineEvent } from './run-machine.ts';
import { foldResults, pairedResult } from './run-updates.ts';

const flow = (answer: RunContext['flow']['answer']): RunContext['flow'] =>
  ({ awaiting: null, answer, effects: null }) as RunContext['flow'];

function context(answer: RunContext['flow']['answer']): RunContext {
  return {
    runId: 'r',
    turn: 2,
    messages: [],
    restrictTo: null,
    toolStats: {},
    batch: { pending: [], results: [], lastResults: [], newResults: [], newHints: [] },
    flow: flow(answer),
  } as unknown as RunContext;
}

const plan = (toolCalls: { name: string; input: unknown }[]): RunMachineEvent => ({
  type: 'plan.done',
  output: { result: { toolCalls } },
});

describe('run updates', () => {
  it('keeps the very flow object when a turn of tool calls changes nothing in it', () => {
    const before = context(null);
    const update = recordToolCallsUpdate(before, plan([{ name: 'util.echo', input: {} }]));
    // A store keeps its copy of a member that is the same object (stores/immutable-copy.ts).
    expect(update.flow).toBe(before.flow);
  });

  it('clears the answer the turn consumed', () => {
    const before = context({ clarification: { id: 'q', answer: 'yes' } });
    const update = recordToolCallsUpdate(before, plan([{ name: 'util.echo', input: {} }]));
    expect(update.flow).not.toBe(before.flow);
    expect(update.flow?.answer).toBeNull();
  });

  it('leaves the empty lists of a batch between turns shared and frozen (nothing changes them in place)', () => {
    const before = context(null);
    const folded = foldResults(before, []);
    expect(folded.batch?.pending).toBe(NO_CALLS);
    expect(folded.batch?.results).toBe(NO_CALLS);
    expect(Object.isFrozen(NO_CALLS)).toBe(true);
    expect(() => (NO_CALLS as unknown[]).push(1)).toThrow(TypeError);
  });

  it('pairs a result with the provider id, the members in the order a spread gives them', () => {
    const call = {
      toolCallId: 'r:t2:c1',
      providerToolCallId: 'call_0',
      name: 'util.echo',
      input: {},
      attempt: 1,
      status: 'admitted',
    } satisfies PendingCall;
    const result: ToolResultJSON = { name: 'util.echo', toolCallId: 'r:t2:c1', executed: true, result: 1 };
    const paired = pairedResult(call, result);
    expect(paired).toEqual({ ...result, providerToolCallId: 'call_0' });
    expect(Object.keys(paired)).toEqual(['name', 'toolCallId', 'executed', 'result', 'providerToolCallId']);
    expect(result).not.toHaveProperty('providerToolCallId');
  });
});
