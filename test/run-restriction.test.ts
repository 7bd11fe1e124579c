import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { restrictOnInvalidArguments } from '../policies/index.ts';
import { type PlanResumeInput, scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { defineTool } from '../tools/define-tool.ts';

describe('a restricted turn offers only the restricted tools', () => {
  it('refuses, without executing, a call to a tool the restricted turn did not offer', async () => {
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
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'bad', input: { email: 'not-an-email' } }] },
      // The policy restricted this turn to crm.upsert_profile; the planner calls another tool anyway.
      { toolCalls: [{ name: 'crm.send_email', toolCallId: 'off-list', input: { to: 'ada@example.com' } }] },
      {
        toolCalls: [{ name: 'crm.upsert_profile', toolCallId: 'good', input: { email: 'ada@example.com' } }],
      },
      { finalResponse: { text: 'done' } },
    ]);
    const runtime = createRuntime({
      agent: { id: 'crm' },
      planner,
      tools: [upsert, email],
      policies: [restrictOnInvalidArguments({ maxRetries: 3 })],
      telemetry: false,
    });

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
});
