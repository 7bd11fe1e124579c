import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { recordedRun } from '../runtime/run-record.ts';
import { defineTool } from '../tools/define-tool.ts';
import { matchesTrajectory } from './match-trajectory.ts';

const crm = [
  defineTool({
    id: 'crm.find',
    description: 'Finds a customer by email',
    input: z.object({ email: z.email() }),
    execute: async ({ email }) => ({ id: `c-${email.length}` }),
  }),
  defineTool({
    id: 'crm.upsert',
    description: 'Creates or updates a customer',
    input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
    execute: async () => ({ saved: true }),
  }),
  defineTool({
    id: 'mail.send',
    description: 'Sends a mail',
    input: z.object({ to: z.email(), subject: z.string() }),
    execute: async () => ({ sent: true }),
  }),
];

/** A recorded run: find, then upsert and mail in one batch, then an answer. */
async function recorded() {
  const runtime = createRuntime({
    agent: { id: 'crm' },
    planner: scriptedPlanner([
      { toolCalls: [{ name: 'crm.find', input: { email: 'ada@example.com' } }] },
      {
        toolCalls: [
          { name: 'crm.upsert', input: '{"plan":"pro","email":"ada@example.com"}' },
          { name: 'mail.send', input: { to: 'ada@example.com', subject: 'Welcome to pro' } },
        ],
      },
      { finalResponse: { text: 'Ada is on pro.' } },
    ]),
    tools: crm,
    telemetry: false,
  });
  const outcome = await runtime
    .start({ runId: 'ada', messages: [{ role: 'user', content: 'Ada to pro' }] })
    .result();
  return { runtime, outcome, record: await recordedRun(runtime, 'ada') };
}

const find = { name: 'crm.find', input: { email: 'ada@example.com' } };
const upsert = { name: 'crm.upsert', input: { email: 'ada@example.com', plan: 'pro' } };
const mail = { name: 'mail.send' };

describe('matchesTrajectory (issue 38 item 4)', () => {
  it('strict: the same calls in order; names the first mismatch', async () => {
    const { runtime, outcome } = await recorded();
    expect(matchesTrajectory(outcome, [find, upsert, mail], { mode: 'strict' })).toMatchObject({
      pass: true,
    });
    // JSON text input is matched as its value; keys in any order.
    expect(matchesTrajectory(outcome, [find, mail, upsert], { mode: 'strict' }).firstMismatch).toEqual({
      index: 1,
      reason: 'expected mail.send, got crm.upsert',
      expected: mail,
      actual: { name: 'crm.upsert', input: { plan: 'pro', email: 'ada@example.com' } },
    });
    expect(
      matchesTrajectory(outcome, [
        find,
        { ...upsert, input: { email: 'ada@example.com', plan: 'free' } },
        mail,
      ]).firstMismatch,
    ).toMatchObject({ index: 1, reason: 'input differs' });
    expect(matchesTrajectory(outcome, [find, upsert]).firstMismatch).toMatchObject({
      index: 2,
      reason: 'unexpected call mail.send',
    });
    await runtime.close();
  });

  it('unordered, subset, superset: multisets of calls, with matchers for inputs', async () => {
    const { runtime, outcome } = await recorded();
    const anyPro = { name: 'crm.upsert', input: expect.objectContaining({ plan: 'pro' }) };
    expect(matchesTrajectory(outcome, [mail, anyPro, find], { mode: 'unordered' }).pass).toBe(true);
    expect(matchesTrajectory(outcome, [mail, anyPro], { mode: 'unordered' }).firstMismatch).toMatchObject({
      index: 0,
      reason: 'unexpected call crm.find',
    });
    // subset: every call made was expected (more were allowed).
    const extra = { name: 'crm.delete' };
    expect(matchesTrajectory(outcome, [find, upsert, mail, extra], { mode: 'subset' }).pass).toBe(true);
    expect(matchesTrajectory(outcome, [find, upsert], { mode: 'subset' }).firstMismatch).toMatchObject({
      reason: 'unexpected call mail.send',
    });
    // superset: every expected call was made (others too).
    expect(matchesTrajectory(outcome, [upsert], { mode: 'superset' }).pass).toBe(true);
    const subject = {
      name: 'mail.send',
      input: (input: unknown) => String((input as { subject: string }).subject).includes('free'),
    };
    expect(matchesTrajectory(outcome, [upsert, subject], { mode: 'superset' }).firstMismatch).toMatchObject({
      index: 1,
      reason: 'no call of mail.send with the expected input',
      actual: { name: 'mail.send' },
    });
    expect(matchesTrajectory(outcome, [extra], { mode: 'superset' }).firstMismatch).toMatchObject({
      reason: 'missing call crm.delete',
    });
    await runtime.close();
  });

  it('checks the state path from the run log, and says when there is no log', async () => {
    const { runtime, outcome, record } = await recorded();
    const states = ['planning', 'executing', 'planning', 'executing', 'planning', 'completed'];
    expect(matchesTrajectory(record, { calls: [find, upsert, mail], states }).pass).toBe(true);
    expect(
      matchesTrajectory(record, { calls: [find], states: ['executing', 'completed'] }, { mode: 'superset' })
        .pass,
    ).toBe(true);
    expect(
      matchesTrajectory(
        record,
        { calls: [find, upsert, mail], states: ['planning', 'completed', 'executing'] },
        { mode: 'unordered' },
      ).firstMismatch,
    ).toMatchObject({ index: 2, reason: 'state executing not reached (in order) after completed' });
    expect(matchesTrajectory(outcome, { calls: [find, upsert, mail], states }).firstMismatch?.reason).toMatch(
      /event log/,
    );
    // A stored run (runtime.load) has the calls too.
    expect(matchesTrajectory((await runtime.load('ada'))!, [find, upsert, mail]).pass).toBe(true);
    await runtime.close();
  });
});
