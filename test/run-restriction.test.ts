import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { restrictOnInvalidArguments } from '../policies/index.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

/** The CRM tools, a run that restricts a turn after invalid arguments, and the mail tool's spy. */
function crmRuntime(planner: ReturnType<typeof scriptedPlanner>) {
  const sendEmail = vi.fn(async () => ({ sent: true }));
  const upsert = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a profile',
    input: z.object({ email: z.email() }),
    execute: async ({ email }) => ({ id: email }),
  });
  const email = defineTool({
    id: 'crm.send_email',
    description: 'Send an email',
    input: z.object({ to: z.email() }),
    execute: sendEmail,
  });
  const runtime = createRuntime({
    agent: { id: 'crm' },
    planner,
    tools: [upsert, email],
    policies: [restrictOnInvalidArguments({ maxRetries: 3 })],
    telemetry: false,
  });
  return { runtime, sendEmail };
}

describe('a restricted turn offers only the restricted tools', () => {
  it('refuses, without executing, a call to a tool the restricted turn did not offer', async () => {
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'bad', input: { email: 'not-an-email' } }] },
      // The policy restricted this turn to crm.upsert_profile; the planner calls another tool anyway.
      { toolCalls: [{ name: 'crm.send_email', toolCallId: 'off-list', input: { to: 'ada@example.com' } }] },
      {
        toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'good', input: { email: 'ada@example.com' } }],
      },
      { finalResponse: { text: 'done' } },
    ]);
    const { runtime, sendEmail } = crmRuntime(planner);

    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'add ada' }] }).result();

    expect(outcome.status).toBe('completed');
    expect(planner.calls[1]?.tools.map((tool) => tool.name)).toEqual(['crm.upsert_profile']);
    const refused = (planner.calls[2] as PlanResumeInput).toolResults[0];
    expect(refused).toMatchObject({
      providerToolCallId: 'off-list',
      executed: false,
      retryHint: { reason: 'tool_unavailable', tool: 'crm.send_email' },
    });
    expect(refused?.error?.message).toContain('crm.upsert_profile');
    expect(sendEmail).not.toHaveBeenCalled();
    // The restriction held for one turn only: the next turn offers every tool again.
    expect(planner.calls[3]?.tools.map((tool) => tool.name)).toEqual([
      'crm.upsert_profile',
      'crm.send_email',
    ]);
  });

  it('runs a call to any tool in the turn after the restricted one', async () => {
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'bad', input: { email: 'not-an-email' } }] },
      // The restricted turn: a call to the one tool it offers.
      {
        toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'good', input: { email: 'ada@example.com' } }],
      },
      // No restriction now: the batch is checked against every tool.
      { toolCalls: [{ name: 'crm.send_email', toolCallId: 'mail', input: { to: 'ada@example.com' } }] },
      { finalResponse: { text: 'done' } },
    ]);
    const { runtime, sendEmail } = crmRuntime(planner);

    const outcome = await runtime.start({ messages: [{ role: 'user', content: 'add ada' }] }).result();

    expect(outcome.status).toBe('completed');
    expect(planner.calls[1]?.tools.map((tool) => tool.name)).toEqual(['crm.upsert_profile']);
    expect(planner.calls[2]?.tools).toHaveLength(2);
    expect(sendEmail).toHaveBeenCalledTimes(1);
    expect((planner.calls[3] as PlanResumeInput).toolResults[0]).toMatchObject({
      providerToolCallId: 'mail',
      executed: true,
      result: { sent: true },
    });
  });
});
