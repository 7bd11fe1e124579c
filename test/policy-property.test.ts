import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askOnMissingFields } from '../policies/builtins/ask-on-missing-fields.ts';
import { circuitBreaker } from '../policies/builtins/circuit-breaker.ts';
import { rateLimitBackoff } from '../policies/builtins/rate-limit-backoff.ts';
import { restrictOnInvalidArguments } from '../policies/builtins/restrict-on-invalid-arguments.ts';
import { timeBudget } from '../policies/builtins/time-budget.ts';
import { toolAllowlist, toolDenylist } from '../policies/builtins/tool-allowlist.ts';
import { definePolicy, type Policy } from '../policies/define-policy.ts';
import type { Caps } from '../run/caps.ts';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import type { RunHandle } from '../runtime/run-handle.ts';
import { defineTool } from '../tools/define-tool.ts';
import { RateLimitedError, ToolTimeoutError, ToolUnavailableError } from '../tools/tool-error.ts';

/**
 * docs/policies.md invariants under random input, through the real runtime: for random sequences of tool
 * outcomes (so random sequences of hints) and random sets of built-in policies, the effective
 * caps never exceed the configured ceilings and a disabled tool never executes. The scripted
 * planner is stubborn: it calls the tools it was scripted to call, advertised or not.
 */
const TOOL_IDS = ['crm.write', 'crm.read', 'mail.send'] as const;
const OUTCOMES = [
  'ok',
  'invalid',
  'missing',
  'timeout',
  'rate',
  'malformed',
  'crash',
  'unavailable',
] as const;
type Outcome = (typeof OUTCOMES)[number];

const CEILINGS: Caps = {
  maxToolCalls: 12,
  maxConsecutiveFailedToolCalls: 6,
  maxRetriesPerTool: 4,
  timeBudgetMs: 20_000,
};

const toolIds = fc.constantFrom(...TOOL_IDS);
const selector = fc.record({
  ids: fc.subarray([...TOOL_IDS]),
  tags: fc.subarray(['write', 'read', 'external']),
});
const capsProposal = fc.record(
  {
    maxToolCalls: fc.integer({ min: 0, max: 40 }),
    maxConsecutiveFailedToolCalls: fc.integer({ min: 1, max: 40 }),
    maxRetriesPerTool: fc.integer({ min: 0, max: 40 }),
    timeBudgetMs: fc.integer({ min: 1_000, max: 100_000 }),
  },
  { requiredKeys: [] },
);

/** One random built-in (or a random cap-proposing policy), named uniquely by its index. */
const policyArb: fc.Arbitrary<(index: number) => Policy> = fc.oneof(
  fc
    .record({
      maxRetries: fc.integer({ min: 0, max: 3 }),
      onExhausted: fc.constantFrom('disable', 'finalize') as fc.Arbitrary<'disable' | 'finalize'>,
    })
    .map((o) => (i: number) => restrictOnInvalidArguments({ ...o, name: `restrict-${i}` })),
  fc
    .record({ failures: fc.integer({ min: 1, max: 3 }), cooldownMs: fc.integer({ min: 0, max: 5 }) })
    .map((o) => (i: number) => circuitBreaker({ ...o, name: `breaker-${i}` })),
  fc
    .record({
      baseMs: fc.integer({ min: 1, max: 3 }),
      maxMs: fc.integer({ min: 3, max: 6 }),
      maxWaits: fc.integer({ min: 0, max: 3 }),
      onExhausted: fc.constantFrom('finalize', 'disable') as fc.Arbitrary<'finalize' | 'disable'>,
    })
    .map((o) => (i: number) => rateLimitBackoff({ ...o, name: `backoff-${i}` })),
  fc
    .integer({ min: 0, max: 2 })
    .map((maxAsks) => (i: number) => askOnMissingFields({ maxAsks, name: `ask-${i}` })),
  selector.map((s) => (i: number) => toolAllowlist({ ...s, name: `allow-${i}` })),
  selector.map((s) => (i: number) => toolDenylist({ ...s, name: `deny-${i}` })),
  fc
    .record({
      maxMs: fc.integer({ min: 5_000, max: 60_000 }),
      finalizeWhenRemainingMs: fc.integer({ min: 0, max: 100 }),
    })
    .map((o) => (i: number) => timeBudget({ ...o, name: `time-${i}` })),
  fc.array(capsProposal, { minLength: 1, maxLength: 4 }).map((proposals) => (i: number) => {
    let n = 0;
    return definePolicy({
      name: `caps-${i}`,
      onRetryHint: () => ({ caps: proposals[n++ % proposals.length] }),
      onToolBatch: () => ({ caps: proposals[n++ % proposals.length] }),
    });
  }),
);

const scenario = fc.record({
  turns: fc.array(
    fc.array(fc.record({ tool: toolIds, outcome: fc.constantFrom(...OUTCOMES) }), {
      minLength: 1,
      maxLength: 3,
    }),
    {
      minLength: 1,
      maxLength: 10,
    },
  ),
  policies: fc.array(policyArb, { maxLength: 5 }),
  appDisabled: fc.subarray([...TOOL_IDS], { maxLength: 1 }),
});

function inputFor(outcome: Outcome): unknown {
  if (outcome === 'invalid') return { mode: 42 };
  if (outcome === 'missing') return {};
  return { mode: outcome };
}

describe('policy invariants through the runtime (fast-check)', () => {
  it('merged caps never exceed the configured ceilings and a disabled tool never executes', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ turns, policies, appDisabled }) => {
        const violations: string[] = [];
        const executed: string[] = [];
        let run: RunHandle | undefined;
        const tools = TOOL_IDS.map((id) =>
          defineTool({
            id,
            description: id,
            tags: id === 'crm.write' ? ['write'] : id === 'crm.read' ? ['read'] : ['write', 'external'],
            input: z.object({ mode: z.enum(OUTCOMES) }),
            output: z.object({ ok: z.boolean() }),
            execute: async (input) => {
              executed.push(id);
              const disabledBy = run?.context.disabledTools[id];
              if (disabledBy !== undefined) violations.push(`${id} executed while disabled by ${disabledBy}`);
              switch (input.mode) {
                case 'timeout':
                  throw new ToolTimeoutError(id, 1);
                case 'rate':
                  throw new RateLimitedError('429', { retryAfterMs: 2 });
                case 'malformed':
                  return { ok: 'yes' };
                case 'crash':
                  throw new Error('boom');
                case 'unavailable':
                  throw new ToolUnavailableError('down');
                default:
                  return { ok: true };
              }
            },
          }),
        );
        let turn = 0;
        const next = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
          if (('finalize' in input && input.finalize) || turn >= turns.length)
            return { finalResponse: { text: 'done' } };
          const calls = turns[turn++]!;
          return { toolCalls: calls.map((call) => ({ name: call.tool, input: inputFor(call.outcome) })) };
        };
        const planner: Planner = { planStart: next, planResume: next };
        const runtime = createRuntime({
          agent: { id: 'prop' },
          planner,
          tools,
          caps: CEILINGS,
          policies: policies.map((make, index) => make(index)),
        });
        run = runtime.start({ messages: [{ role: 'user', content: 'go' }], disabledTools: appDisabled });
        const handle = run;
        const checkCaps = () => {
          const { caps, ceilings } = handle.context;
          for (const key of Object.keys(CEILINGS) as (keyof Caps)[]) {
            if (caps[key]! > CEILINGS[key]!)
              violations.push(`caps.${key} ${caps[key]} above ceiling ${CEILINGS[key]}`);
            if (caps[key]! > ceilings[key]!)
              violations.push(`caps.${key} ${caps[key]} above the run's ${ceilings[key]}`);
          }
        };
        const subscription = handle.events$.subscribe((event) => {
          checkCaps();
          if (event.type === 'await_clarification') {
            setTimeout(
              () =>
                handle
                  .provideClarification({ id: event.clarification.id, answer: 'mode ok' })
                  .catch(() => {}),
              0,
            );
          }
        });
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          handle.result(),
          new Promise<'hung'>((resolve) => {
            timer = setTimeout(() => resolve('hung'), 5_000);
          }),
        ]);
        clearTimeout(timer);
        subscription.unsubscribe();
        checkCaps();
        expect(outcome).not.toBe('hung');
        if (outcome === 'hung') return;
        expect(outcome.status, JSON.stringify(outcome.error)).toBe('completed');
        expect(violations).toEqual([]);
        for (const id of appDisabled) expect(executed).not.toContain(id);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
