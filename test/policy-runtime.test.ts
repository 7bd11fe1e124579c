import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../plugins/define-plugin.ts';
import { askOnMissingFields } from '../policies/builtins/ask-on-missing-fields.ts';
import { circuitBreaker } from '../policies/builtins/circuit-breaker.ts';
import { rateLimitBackoff } from '../policies/builtins/rate-limit-backoff.ts';
import { restrictOnInvalidArguments } from '../policies/builtins/restrict-on-invalid-arguments.ts';
import { toolDenylist } from '../policies/builtins/tool-allowlist.ts';
import { definePolicy } from '../policies/define-policy.ts';
import { PolicyError } from '../policies/policy-error.ts';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { scriptedPlanner } from '../run/planner.ts';
import { type RunEvent, RunEventSchema } from '../run/run-events.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { memoryStore } from '../stores/memory-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { RateLimitedError } from '../tools/tool-error.ts';

/** docs/policies.md effects through the real runtime (run machine, steps, store) with scripted planners. */

function crmTools() {
  const upsertCalls: unknown[] = [];
  const sendCalls: unknown[] = [];
  const upsert = defineTool({
    id: 'crm.upsert_profile',
    description: 'Create or update a customer profile',
    input: z.object({ email: z.email().describe('Customer email'), plan: z.enum(['free', 'pro']) }),
    examples: [{ email: 'ada@example.com', plan: 'pro' }],
    tags: ['write'],
    execute: async (input) => {
      upsertCalls.push(input);
      return { id: 'p1' };
    },
  });
  const lookup = defineTool({
    id: 'crm.lookup',
    description: 'Find a profile',
    input: z.object({ email: z.string() }),
    tags: ['read'],
    execute: async () => ({ found: false }),
  });
  const send = defineTool({
    id: 'mail.send',
    description: 'Send an email',
    input: z.object({ to: z.string() }),
    tags: ['write', 'external'],
    execute: async (input) => {
      sendCalls.push(input);
      throw new Error('SMTP down');
    },
  });
  return { tools: [upsert, lookup, send], upsertCalls, sendCalls };
}

const messages = [{ role: 'user' as const, content: 'Add ada as pro' }];
/** Generous: the full suite runs files in parallel, some with database and browser peers. */
const WAIT = { timeout: 10_000, interval: 10 };

function events(run: RunHandle): Promise<RunEvent[]> {
  return firstValueFrom(run.events$.pipe(toArray()));
}

const toolNames = (input: PlanInput) => input.tools.map((tool) => tool.name);

describe('policies in a run', () => {
  it('a disabled tool disappears from the advertised tools and a call to it is tool_unavailable, never executed', async () => {
    const { tools, sendCalls } = crmTools();
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'mail.send', input: { to: 'ada@example.com' } }] },
      { toolCalls: [{ name: 'mail.send', input: { to: 'ada@example.com' } }] },
      { finalResponse: { text: 'Could not send' } },
    ]);
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner,
      tools,
      policies: [circuitBreaker({ failures: 1, cooldownMs: 60_000 })],
    });
    const run = runtime.start({ messages });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(sendCalls).toHaveLength(1);
    expect(toolNames(planner.calls[0]!)).toContain('mail.send');
    expect(toolNames(planner.calls[1]!)).toEqual(['crm.upsert_profile', 'crm.lookup']);
    const second = (planner.calls[2] as PlanResumeInput).toolResults[0]!;
    expect(second).toMatchObject({ executed: false, retryHint: { reason: 'tool_unavailable' } });
    expect(second.error?.message).toContain('Disabled tool "mail.send"');
    expect(run.context.disabledTools).toEqual({ 'mail.send': 'circuit-breaker' });
  });

  it('a denylisted tool is never advertised, from the first turn, and its decision is an event after run_started', async () => {
    const { tools } = crmTools();
    const planner = scriptedPlanner([{ finalResponse: { text: 'ok' } }]);
    const runtime = createRuntime({
      agent: { id: 'support' },
      planner,
      tools,
      policies: [toolDenylist({ tags: ['external'] })],
    });
    const run = runtime.start({ messages, disabledTools: ['crm.lookup'] });
    const all = await events(run);
    expect(toolNames(planner.calls[0]!)).toEqual(['crm.upsert_profile']);
    expect(all.slice(0, 2).map((e) => e.type)).toEqual(['run_started', 'policy_decision']);
    expect(all[1]).toMatchObject({
      decision: { policy: 'tool-denylist', hook: 'onRunStart', decision: { disableTools: ['mail.send'] } },
    });
    expect(run.context.disabledTools).toEqual({ 'crm.lookup': 'app', 'mail.send': 'tool-denylist' });
  });

  it('a policy cannot re-enable a tool the app disabled nor raise a cap', async () => {
    const { tools, sendCalls } = crmTools();
    const greedy = definePolicy({
      name: 'greedy',
      onToolBatch: () => ({ enableTools: ['mail.send'], caps: { maxToolCalls: 500, timeBudgetMs: 10 ** 9 } }),
    });
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'mail.send', input: { to: 'x' } }] },
      { finalResponse: { text: 'done' } },
    ]);
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      tools,
      policies: [greedy],
      caps: { maxToolCalls: 5 },
    });
    const run = runtime.start({ messages, disabledTools: ['mail.send'] });
    const outcome = await run.result();
    expect(sendCalls).toHaveLength(0);
    expect(outcome.toolResults[0]).toMatchObject({
      executed: false,
      retryHint: { reason: 'tool_unavailable' },
    });
    expect(run.context.caps).toEqual(run.context.ceilings);
    expect(run.context.caps.maxToolCalls).toBe(5);
    expect(run.context.disabledTools).toEqual({ 'mail.send': 'app' });
  });

  it('a throwing policy fails the run, naming the policy', async () => {
    const { tools } = crmTools();
    const strict = definePolicy({
      name: 'strict-writes',
      onRetryHint: () => {
        throw new Error('rules file missing');
      },
    });
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'nope' } }] },
    ]);
    const runtime = createRuntime({ agent: { id: 'a' }, planner, tools, policies: [strict] });
    const run = runtime.start({ messages });
    const all = events(run);
    const outcome = await run.result();
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.name).toBe('PolicyError');
    expect(outcome.error?.message).toContain(
      'Policy "strict-writes" threw in onRetryHint: rules file missing',
    );
    expect((await all).find((e) => e.type === 'policy_decision')).toMatchObject({
      decision: { policy: 'strict-writes', kinds: ['fail'] },
    });
  });

  it('a policy that throws in onRunStart makes runtime.start throw a PolicyError', () => {
    const { tools } = crmTools();
    const bad = definePolicy({
      name: 'bad-start',
      onRunStart: () => {
        throw new Error('nope');
      },
    });
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: scriptedPlanner([]),
      tools,
      policies: [bad],
    });
    expect(() => runtime.start({ messages })).toThrow(PolicyError);
  });

  /** A planner that never learns: it sends the same invalid arguments until asked to finalize. */
  function stubbornPlanner(): Planner & { inputs: (PlanInput | PlanResumeInput)[] } {
    const inputs: (PlanInput | PlanResumeInput)[] = [];
    const next = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
      inputs.push(input);
      if ('finalize' in input && input.finalize)
        return { finalResponse: { text: `Gave up (${input.finalize.reason})` } };
      return { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'not-an-email', plan: 'gold' } }] };
    };
    return { inputs, planStart: next, planResume: next };
  }

  it('a planner that keeps sending invalid arguments ends in finalizing (policies), with the chain of hints in the events', async () => {
    const { tools, upsertCalls } = crmTools();
    const planner = stubbornPlanner();
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      tools,
      caps: { maxConsecutiveFailedToolCalls: 5, maxRetriesPerTool: 10 },
      policies: [restrictOnInvalidArguments({ maxRetries: 2 })],
    });
    const run = runtime.start({ messages });
    const all = events(run);
    const outcome = await run.result();
    const log = await all;
    expect(outcome.status).toBe('completed');
    expect(outcome.finalizeReason).toBe('failure_cap');
    expect(upsertCalls).toHaveLength(0);
    expect(log.filter((e) => e.type === 'state_changed').map((e) => e.state)).toContain('finalizing');
    const hints = log.flatMap((e) => (e.type === 'retry_hint' ? [`${e.hint.reason}#${e.hint.attempt}`] : []));
    expect(hints).toEqual([
      'invalid_arguments#1',
      'invalid_arguments#2',
      'invalid_arguments#3',
      'tool_unavailable#4',
      'tool_unavailable#5',
    ]);
    const decisions = log.flatMap((e) => (e.type === 'policy_decision' ? [e.decision.kinds.join()] : []));
    expect(decisions).toEqual(['restrictToTool', 'restrictToTool', 'disableTools']);
    expect(toolNames(planner.inputs[1]!)).toEqual(['crm.upsert_profile']);
    expect(toolNames(planner.inputs[3]!)).toEqual(['crm.lookup', 'mail.send']);
    for (const event of log) expect(RunEventSchema.safeParse(event).success).toBe(true);
  });

  it('a planner that keeps sending invalid arguments ends in finalizing with caps alone', async () => {
    const { tools } = crmTools();
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: stubbornPlanner(),
      tools,
      caps: { maxToolCalls: 4, maxConsecutiveFailedToolCalls: 100, maxRetriesPerTool: 100 },
      // No policies at all (not even the defaults, whose repeatedInvalidCall would stop it first).
      policies: [],
    });
    const outcome = await runtime.start({ messages }).result();
    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'tool_cap' });
    expect(outcome.finalResponse?.text).toBe('Gave up (tool_cap)');
  });

  it('backs off in awaiting.backoff, honouring retryAfterMs, before the next planner turn', async () => {
    let attempts = 0;
    const flaky = defineTool({
      id: 'billing.charge',
      description: 'Charge',
      input: z.object({ cents: z.number() }),
      execute: async () => {
        attempts += 1;
        if (attempts === 1) throw new RateLimitedError('429', { retryAfterMs: 80 });
        return { ok: true };
      },
    });
    const times: number[] = [];
    const charge = () => {
      times.push(Date.now());
      return { toolCalls: [{ name: 'billing.charge', input: { cents: 5 } }] };
    };
    const planner = scriptedPlanner([charge, charge, { finalResponse: { text: 'charged' } }]);
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner,
      tools: [flaky],
      policies: [rateLimitBackoff({ baseMs: 5 })],
    });
    const run = runtime.start({ messages });
    const all = events(run);
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    const states = (await all).flatMap((e) => (e.type === 'state_changed' ? [e.state] : []));
    expect(states).toContain('awaiting.backoff');
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(75);
  });

  it('asks a person for missing fields, then restricts the turn after the answer to the tool', async () => {
    const { tools } = crmTools();
    const planner = scriptedPlanner([
      { toolCalls: [{ name: 'crm.upsert_profile', input: { plan: 'pro' } }] },
      (input) => ({
        toolCalls: [{ name: toolNames(input)[0]!, input: { email: 'ada@example.com', plan: 'pro' } }],
      }),
      { finalResponse: { text: 'Added' } },
    ]);
    const runtime = createRuntime({ agent: { id: 'a' }, planner, tools, policies: [askOnMissingFields()] });
    const run = runtime.start({ messages });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'), WAIT);
    expect(run.context.flow.awaiting).toMatchObject({
      kind: 'clarification',
      clarification: {
        missingFields: ['email'],
        restrictToTool: 'crm.upsert_profile',
        question: expect.stringContaining('Please provide: email (Customer email)'),
        exampleInput: { email: 'ada@example.com', plan: 'pro' },
      },
    });
    const id = (run.context.flow.awaiting as { clarification: { id: string } }).clarification.id;
    await run.provideClarification({ id, answer: 'ada@example.com' });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(toolNames(planner.calls[1]!)).toEqual(['crm.upsert_profile']);
    expect((planner.calls[1] as PlanResumeInput).clarification).toEqual({ id, answer: 'ada@example.com' });
  });

  it('a restored run keeps its disabled tools, caps and policy memory', async () => {
    const store = memoryStore();
    const { tools } = crmTools();
    const tighten = definePolicy({
      name: 'tighten',
      onRetryHint: (hint, ctx) => ({
        caps: { maxToolCalls: 7 },
        disableTools: [hint.tool],
        state: { seen: ((ctx.state as { seen?: number } | undefined)?.seen ?? 0) + 1 },
      }),
    });
    const policies = [tighten, askOnMissingFields()];
    const first = createRuntime({
      agent: { id: 'a' },
      planner: scriptedPlanner([{ toolCalls: [{ name: 'crm.upsert_profile', input: { plan: 'pro' } }] }]),
      tools,
      policies,
      store,
    });
    const run = first.start({ messages, runId: 'run-restore' });
    await vi.waitFor(() => expect(run.state).toBe('awaiting.clarification'), WAIT);
    await vi.waitFor(async () => expect((await store.load('run-restore'))?.status).toBe('awaiting'), WAIT);

    // The first process goes away (it releases the run; a live one would hold it: docs/durability.md).
    await first.close();
    const planner = scriptedPlanner([{ finalResponse: { text: 'after restart' } }]);
    const second = createRuntime({ agent: { id: 'a' }, planner, tools, policies, store });
    const restored = await second.resume('run-restore');
    expect(restored.context.disabledTools).toEqual({ 'crm.upsert_profile': 'tighten' });
    expect(restored.context.caps.maxToolCalls).toBe(7);
    expect(restored.context.policyState).toMatchObject({
      memory: { tighten: { seen: 1 }, 'ask-on-missing-fields': { 'crm.upsert_profile': 1 } },
    });
    const id = (restored.context.flow.awaiting as { clarification: { id: string } }).clarification.id;
    await restored.provideClarification({ id, answer: 'ada@example.com' });
    expect((await restored.result()).status).toBe('completed');
    expect(toolNames(planner.calls[0]!)).toEqual([]);
  });

  it('runs plugin policies after the runtime’s own, in plugin order', async () => {
    const order: string[] = [];
    const spy = (name: string) => definePolicy({ name, onRetryHint: () => void order.push(name) });
    const { tools } = crmTools();
    const runtime = createRuntime({
      agent: { id: 'a' },
      planner: scriptedPlanner([
        { toolCalls: [{ name: 'crm.lookup', input: {} }] },
        { finalResponse: { text: 'ok' } },
      ]),
      tools,
      policies: [spy('own')],
      plugins: [
        definePlugin({ name: 'p1', policies: [spy('p1-a'), spy('p1-b')] }),
        definePlugin({ name: 'p2', policies: [spy('p2')] }),
      ],
    });
    await runtime.start({ messages }).result();
    expect(order).toEqual(['own', 'p1-a', 'p1-b', 'p2']);
  });
});
