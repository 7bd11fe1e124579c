import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import { scriptedPlanner } from '../run/planner.ts';
import type { PolicyEffects } from '../run/policy-effects.ts';
import { RunAnswerError } from '../runtime/run-handle.ts';
import { defineTool } from '../tools/define-tool.ts';
import { call, done, echoTool, nextEvent, reachState, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Add Ada as a customer' }];

describe('awaiting a clarification the planner asks for', () => {
  const ask = {
    await: { clarification: { id: 'q1', question: 'Which plan should Ada be on?', missingFields: ['plan'] } },
  };

  it('waits, rejects a wrong answer without losing anything, and resumes the planner with the right one', async () => {
    const planner = scriptedPlanner([ask, done('Ada is on pro.')]);
    const run = testRuntime({ planner }).start({ messages: prompt });

    const awaited = await nextEvent(run, 'await_clarification');
    expect(awaited.clarification).toMatchObject({ id: 'q1', question: 'Which plan should Ada be on?' });
    expect(run.status).toBe('awaiting');
    expect(run.state).toBe('awaiting.clarification');

    await expect(run.provideClarification({ id: 'q2', answer: 'pro' })).rejects.toThrow(RunAnswerError);
    await expect(run.provideClarification({ id: 'q1', answer: '' })).rejects.toThrow(/non-empty/);
    await expect(run.provideToolResults([{ toolCallId: 'x', result: {} }])).rejects.toThrow(
      /not awaiting external tools/,
    );
    expect(run.state).toBe('awaiting.clarification');
    expect(planner.calls).toHaveLength(1);

    await run.provideClarification({ id: 'q1', answer: 'pro' });
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    expect(planner.calls[1]).toMatchObject({ clarification: { id: 'q1', answer: 'pro' } });
    expect(outcome.transcript).toEqual([
      { role: 'user', content: 'Add Ada as a customer' },
      { role: 'assistant', content: 'Which plan should Ada be on?' },
      { role: 'user', content: 'pro' },
      { role: 'assistant', content: 'Ada is on pro.' },
    ]);
  });
});

describe('awaiting results of external tools', () => {
  // An external tool: no execute; the app runs it and provides the result.
  const lookup = defineTool({
    id: 'crm.lookup',
    description: 'Looks a customer up in the CRM (run by the app)',
    input: z.object({ email: z.string() }),
    output: z.object({ id: z.string(), plan: z.enum(['free', 'pro']) }),
  });
  const external = {
    await: {
      externalTools: {
        id: 'ext1',
        calls: [
          { name: 'crm.lookup', toolCallId: 'e1', input: { email: 'ada@example.com' } },
          { name: 'crm.lookup', toolCallId: 'e2', input: { email: 'bob@example.com' } },
        ],
      },
    },
  };

  it('rejects unknown, missing and duplicate ids and results that fail the output schema, then completes with a right answer', async () => {
    const planner = scriptedPlanner([external, done('Ada is pro, Bob is free.')]);
    const run = testRuntime({ planner, tools: [lookup] }).start({ messages: prompt });
    const awaited = await nextEvent(run, 'await_external_tools');
    expect(awaited.externalTools.calls.map((c) => c.toolCallId)).toEqual(['e1', 'e2']);
    const ada = { toolCallId: 'e1', result: { id: 'cus_1', plan: 'pro' } };
    const bob = { toolCallId: 'e2', result: { id: 'cus_2', plan: 'free' } };

    const wrong: [unknown[], RegExp][] = [
      [[ada, bob, { toolCallId: 'e3', result: {} }], /unknown toolCallId "e3"/],
      [[ada], /missing results for toolCallIds: e2/],
      [[ada, ada, bob], /duplicate result for toolCallId "e1"/],
      [
        [ada, { toolCallId: 'e2', result: { id: 'cus_2', plan: 'gold' } }],
        /does not match crm.lookup's output schema: plan/,
      ],
    ];
    for (const [results, message] of wrong) {
      const attempt = run.provideToolResults(results as never);
      await expect(attempt).rejects.toBeInstanceOf(RunAnswerError);
      await expect(attempt).rejects.toThrow(message);
      // Nothing lost: still awaiting the same calls, nothing recorded, the planner not asked.
      expect(run.state).toBe('awaiting.externalTools');
      expect(run.context.batch.pending.map((c) => c.toolCallId)).toEqual(['e1', 'e2']);
      expect(run.context.batch.results).toEqual([null, null]);
      expect(planner.calls).toHaveLength(1);
    }

    await run.provideToolResults([bob, ada]);
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    const resumed = planner.calls[1]!;
    expect('toolResults' in resumed && resumed.toolResults.map((r) => [r.toolCallId, r.result])).toEqual([
      ['e1', { id: 'cus_1', plan: 'pro' }],
      ['e2', { id: 'cus_2', plan: 'free' }],
    ]);
    expect(outcome.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
  });

  it('counts external calls against maxToolCalls', async () => {
    const planner = scriptedPlanner([external, done()]);
    const run = testRuntime({ planner, tools: [lookup], caps: { maxToolCalls: 2 } }).start({
      messages: prompt,
    });
    await reachState(run, 'awaiting.externalTools');

    await run.provideToolResults([
      { toolCallId: 'e1', result: { id: 'cus_1', plan: 'pro' } },
      { toolCallId: 'e2', error: { message: 'CRM unreachable' } },
    ]);
    const outcome = await run.result();

    expect(outcome.finalizeReason).toBe('tool_cap');
    expect(outcome.caps.toolCalls).toBe(2);
  });
});

describe('awaiting a confirmation', () => {
  function deleteTool() {
    const execute = vi.fn(async ({ email }: { email: string }) => ({ deleted: email }));
    const tool = defineTool({
      id: 'crm.delete_profile',
      description: 'Deletes a customer profile',
      input: z.object({ email: z.string() }),
      requiresConfirmation: true,
      execute,
    });
    return { tool, execute };
  }

  it('holds a call to a tool that requires confirmation until it is approved, then runs it', async () => {
    const { tool, execute } = deleteTool();
    const planner = scriptedPlanner([
      call('crm.delete_profile', { email: 'ada@example.com' }, 'del1'),
      done('Deleted.'),
    ]);
    const run = testRuntime({ planner, tools: [tool] }).start({ runId: 'run-del', messages: prompt });

    const awaited = await nextEvent(run, 'await_confirmation');
    expect(awaited.confirmation).toMatchObject({
      toolCallIds: ['run-del:t1:c1'],
      prompt: 'Approve the call to crm.delete_profile?',
      details: [
        { toolCallId: 'run-del:t1:c1', tool: 'crm.delete_profile', input: { email: 'ada@example.com' } },
      ],
    });
    expect(execute).not.toHaveBeenCalled();
    await expect(run.confirm({ id: 'other', approved: true })).rejects.toThrow(RunAnswerError);

    await run.confirm({ id: awaited.confirmation.id, approved: true, by: 'ops@example.com' });
    const outcome = await run.result();

    expect(execute).toHaveBeenCalledTimes(1);
    expect(outcome.toolResults).toMatchObject([
      {
        toolCallId: 'run-del:t1:c1',
        providerToolCallId: 'del1',
        executed: true,
        result: { deleted: 'ada@example.com' },
      },
    ]);
    expect(outcome.status).toBe('completed');
  });

  it('turns a denial into a tool result the planner sees, without running the tool', async () => {
    const { tool, execute } = deleteTool();
    const planner = scriptedPlanner([
      call('crm.delete_profile', { email: 'ada@example.com' }, 'del1'),
      done('Not deleted.'),
    ]);
    const run = testRuntime({ planner, tools: [tool] }).start({ messages: prompt });
    const awaited = await nextEvent(run, 'await_confirmation');

    await run.confirm({
      id: awaited.confirmation.id,
      approved: false,
      by: 'ops@example.com',
      reason: 'too risky',
    });
    const outcome = await run.result();

    expect(execute).not.toHaveBeenCalled();
    const resumed = planner.calls[1]!;
    const [denied] = 'toolResults' in resumed ? resumed.toolResults : [];
    expect(denied).toMatchObject({ providerToolCallId: 'del1', executed: false });
    expect(denied?.error).toMatchObject({
      name: 'ToolConfirmationDenied',
      message: 'The call to crm.delete_profile was not approved by ops@example.com: too risky',
      recoverable: true,
    });
    expect(outcome.transcript[2]).toMatchObject({ role: 'tool', providerToolCallId: 'del1' });
    expect(outcome.toolResults.map((r) => r.providerToolCallId)).toEqual(['del1']);
  });

  it('waits for a confirmation the planner asks for and hands the answer to the next turn', async () => {
    const planner = scriptedPlanner([
      { await: { confirmation: { id: 'send1', prompt: 'Send the welcome email to Ada?' } } },
      done('Not sent.'),
    ]);
    const run = testRuntime({ planner }).start({ messages: prompt });
    await nextEvent(run, 'await_confirmation');
    expect(run.state).toBe('awaiting.confirmation');

    await expect(run.confirm({ id: 'send2', approved: true })).rejects.toThrow(/no confirmation "send2"/);
    await run.confirm({ id: 'send1', approved: false, reason: 'not now' });
    const outcome = await run.result();

    expect(planner.calls[1]).toMatchObject({
      confirmation: { id: 'send1', approved: false, reason: 'not now' },
    });
    expect(outcome.transcript.slice(1, 3)).toEqual([
      { role: 'assistant', content: 'Send the welcome email to Ada?' },
      { role: 'user', content: 'Denied: not now.' },
    ]);
  });
});

describe('awaiting a clarification a policy asks for', () => {
  it('keeps the batch results for the turn after the answer, and reviews them only once', async () => {
    const onResults = vi.fn(
      async (_context: unknown, results: unknown[]): Promise<PolicyEffects> =>
        results.length > 0
          ? {
              decisions: [],
              awaitClarification: { id: 'p1', question: 'Really echo that?', missingFields: [] },
            }
          : { decisions: [] },
    );
    const policyRunner: PolicyRunner = { onToolBatch: async () => ({ decisions: [] }), onResults };
    const planner = scriptedPlanner([call('util.echo', { text: 'hi' }, 'c1'), done()]);
    const run = testRuntime({ planner, tools: [echoTool], policyRunner }).start({ messages: prompt });
    await nextEvent(run, 'await_clarification');

    await run.provideClarification({ id: 'p1', answer: 'yes' });
    await run.result();

    const resumed = planner.calls[1]!;
    expect('toolResults' in resumed && resumed.toolResults.map((r) => r.providerToolCallId)).toEqual(['c1']);
    expect(resumed).toMatchObject({ clarification: { id: 'p1', answer: 'yes' } });
    expect(onResults.mock.calls.map(([, results]) => results.length)).toEqual([1, 0]);
  });

  it('fails the run closed on a clarification request that is not valid, with run_failed ending the events', async () => {
    const policyRunner: PolicyRunner = {
      onToolBatch: async () => ({ decisions: [] }),
      // No id: not an AwaitClarification.
      onResults: async () => ({ decisions: [], awaitClarification: { question: 'Sure?' } as never }),
    };
    const planner = scriptedPlanner([call('util.echo', { text: 'hi' }), done()]);
    const run = testRuntime({ planner, tools: [echoTool], policyRunner }).start({ messages: prompt });

    const outcome = await run.result();
    const failed = await nextEvent(run, 'run_failed');

    expect(outcome.status).toBe('failed');
    expect(failed.error).toMatchObject({ name: 'PolicyError', recoverable: false });
    expect(failed.error.message).toContain('invalid awaitClarification');
    expect(planner.calls).toHaveLength(1);
  });
});
