/**
 * External tools (issue 11; docs/architecture.md §Awaiting): a tool without `execute` is the
 * app's to run. Its calls pass the tool boundary like any other (a bad input comes back with a
 * hint, never reaches the app); admitted, they are awaited in `awaiting.externalTools` once the
 * batch's own calls are done, and the app's results join the batch in call order. Any planner
 * (a model too) proposes them as ordinary tool calls; `ToolDescriptor.external` tells it which
 * tools are external. They used to fail with "has no execute function".
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';
import { testRuntime } from './run-fixtures.ts';

const lookup = defineTool({
  id: 'crm.lookup',
  description: 'Find a customer',
  input: z.object({ email: z.email() }),
  execute: async ({ email }) => ({ id: `cus_${email}` }),
});
/** Runs in the app (a browser, a person, another service): no `execute`. */
const sendEmail = defineTool({
  id: 'mail.send',
  description: 'Send an email from the user’s own mailbox',
  input: z.object({ to: z.email(), subject: z.string().min(1) }),
  output: z.object({ sent: z.boolean() }),
});

describe('external tools', () => {
  it('say so in their descriptor', () => {
    const descriptors = new ToolCatalog([lookup, sendEmail]).descriptors();
    expect(descriptors.find((d) => d.name === 'mail.send')?.external).toBe(true);
    expect(descriptors.find((d) => d.name === 'crm.lookup')).not.toHaveProperty('external');
  });

  it('are awaited once the batch’s own calls are done, with their validated input; the app’s results join the batch in order', async () => {
    const planner = scriptedPlanner([
      {
        toolCalls: [
          {
            name: 'mail.send',
            toolCallId: 'call_mail',
            input: '{"to":"ada@example.com","subject":"Welcome"}',
          },
          { name: 'crm.lookup', input: { email: 'ada@example.com' } },
        ],
      },
      { finalResponse: { text: 'Sent.' } },
    ]);
    const run = testRuntime({ planner, tools: [lookup, sendEmail] }).start({
      runId: 'ext',
      messages: [{ role: 'user', content: 'Welcome Ada' }],
    });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.externalTools'));
    expect(run.awaiting).toEqual({
      kind: 'external_tools',
      id: 'ext:t1:external',
      calls: [
        { name: 'mail.send', toolCallId: 'ext:t1:c1', input: { to: 'ada@example.com', subject: 'Welcome' } },
      ],
    });
    // The run's own call has run already.
    expect(run.context.batch.results.map((result) => result?.result ?? null)).toEqual([
      null,
      { id: 'cus_ada@example.com' },
    ]);

    await run.provideToolResults([{ toolCallId: 'ext:t1:c1', result: { sent: true } }]);
    const outcome = await run.result();

    expect(outcome.status).toBe('completed');
    const resumed = planner.calls[1] as PlanResumeInput;
    expect(resumed.toolResults.map((result) => [result.toolCallId, result.result])).toEqual([
      ['ext:t1:c1', { sent: true }],
      ['ext:t1:c2', { id: 'cus_ada@example.com' }],
    ]);
    const paired = outcome.transcript.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
    expect(paired).toEqual(['ext:t1:c1', 'ext:t1:c2']);
  });

  it('refuses a bad input at the boundary with a hint: the app never sees it', async () => {
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'mail.send', input: { to: 'not an address', subject: '' } }] },
      { finalResponse: { text: 'Could not send.' } },
    ]);
    const run = testRuntime({ planner, tools: [sendEmail] }).start({
      messages: [{ role: 'user', content: 'x' }],
    });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    const [result] = (planner.calls[1] as PlanResumeInput).toolResults;
    expect(result?.retryHint?.reason).toBe('invalid_arguments');
    expect(result?.executed).toBe(false);
  });

  it('only external calls in a batch: the run awaits them at once', async () => {
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'mail.send', input: { to: 'ada@example.com', subject: 'Hi' } }] },
      { finalResponse: { text: 'Sent.' } },
    ]);
    const run = testRuntime({ planner, tools: [sendEmail] }).start({
      messages: [{ role: 'user', content: 'x' }],
    });
    await vi.waitFor(() => expect(run.awaiting?.kind).toBe('external_tools'));
    await expect(
      run.provideToolResults([{ toolCallId: `${run.runId}:t1:c1`, result: { sent: 'yes' } }]),
    ).rejects.toThrow(/output schema|sent/);
    await run.provideToolResults([{ toolCallId: `${run.runId}:t1:c1`, result: { sent: true } }]);
    expect((await run.result()).status).toBe('completed');
  });
});
