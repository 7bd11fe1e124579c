/**
 * Issue 12, defect 3: "every run ends" as a property. fast-check draws a planner script (tool
 * calls with good and bad inputs, awaits, hangs, throws, nonsense), tools that hang, throw, rate
 * limit or answer malformed, a plugin hook that may hold calls, and small caps; every run must
 * reach a final state or a documented await (clarification, confirmation, external tools) within
 * its time budget plus the grace of its waits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../../plugins/define-plugin.ts';
import { circuitBreaker, restrictOnInvalidArguments } from '../../policies/index.ts';
import type { PlanResult } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { RateLimitedError } from '../../tools/tool-error.ts';
import { testRuntime } from '../run-fixtures.ts';

const BUDGET_MS = 400;
const TOOL_TIMEOUT_MS = 40;
// Budget, plus the finalizing grace and a held call's tool timeout and wrapper grace, plus slack.
const DEADLINE_MS = BUDGET_MS + 2_000 + TOOL_TIMEOUT_MS + 1_000 + 1_500;

const behaviours = ['ok', 'hang', 'throw', 'rate_limited', 'malformed'] as const;
const tools = behaviours.map((behaviour) =>
  defineTool({
    id: `fault.${behaviour}`,
    description: `A tool that ${behaviour}s`,
    input: z.object({ n: z.number() }),
    output: z.object({ n: z.number() }),
    timeoutMs: TOOL_TIMEOUT_MS,
    execute: async ({ n }, { signal }) => {
      if (behaviour === 'hang')
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      if (behaviour === 'throw') throw new Error('boom');
      if (behaviour === 'rate_limited') throw new RateLimitedError('slow down', { retryAfterMs: 5 });
      if (behaviour === 'malformed') return { n: String(n) } as never;
      return { n };
    },
  }),
);
const names = [...tools.map((tool) => tool.id), 'fault.unknown'];

const step: fc.Arbitrary<PlanResult | 'hang' | 'throw'> = fc.oneof(
  fc.record({
    toolCalls: fc.array(
      fc.record({
        name: fc.constantFrom(...names),
        input: fc.oneof(fc.record({ n: fc.integer() }), fc.constant({}), fc.string()),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
  fc.record({ finalResponse: fc.record({ text: fc.string() }) }),
  fc.constant<PlanResult>({
    await: { clarification: { id: 'q', question: 'Which?', missingFields: ['n'] } },
  }),
  fc.constant<PlanResult>({ await: { confirmation: { id: 'c', prompt: 'OK?' } } }),
  fc.constant<PlanResult>({
    await: { externalTools: { id: 'x', calls: [{ name: 'app.ext', toolCallId: 'e1', input: {} }] } },
  }),
  fc.constant<PlanResult>({} as PlanResult),
  fc.constant('hang' as const),
  fc.constant('throw' as const),
);

describe('every run ends', () => {
  it('in a final state or a documented await, within its budget, whatever the planner, tools and hooks do', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 6 }),
        async (script, holdingHook, maxToolCalls) => {
          let turn = 0;
          const next = async (input: { signal?: AbortSignal }): Promise<PlanResult> => {
            const chosen = script[Math.min(turn++, script.length - 1)]!;
            if (chosen === 'hang') {
              return new Promise((_, reject) =>
                input.signal?.addEventListener('abort', () => reject(input.signal?.reason)),
              );
            }
            if (chosen === 'throw') throw new Error('planner down');
            return chosen;
          };
          const hook = definePlugin({
            name: 'holder',
            wrapToolCall: (call, go) =>
              holdingHook && call.tool.id === 'fault.ok' ? new Promise(() => {}) : go(call),
          });
          const runtime = testRuntime({
            planner: { planStart: next, planResume: next },
            tools,
            plugins: [hook],
            policies: [
              restrictOnInvalidArguments({ maxRetries: 1 }),
              circuitBreaker({ failures: 2, cooldownMs: 50 }),
            ],
            caps: { timeBudgetMs: BUDGET_MS, maxToolCalls, maxConsecutiveFailedToolCalls: 3 },
            finalizeGraceMs: 200,
            onError: () => {},
          } as never);
          const run = runtime.start({ messages: [{ role: 'user', content: 'go' }] });
          const started = Date.now();
          const settled = await Promise.race([
            run.result().then(() => 'final' as const),
            new Promise<'waiting' | 'stuck'>((resolve) => {
              const poll = setInterval(() => {
                if (
                  run.status === 'awaiting' &&
                  /^awaiting\.(clarification|confirmation|externalTools)$/.test(run.state)
                ) {
                  clearInterval(poll);
                  resolve('waiting');
                } else if (Date.now() - started > DEADLINE_MS) {
                  clearInterval(poll);
                  resolve('stuck');
                }
              }, 10);
            }),
          ]);
          if (settled === 'stuck') throw new Error(`run stuck in ${run.state} after ${DEADLINE_MS} ms`);
          expect(['final', 'waiting']).toContain(settled);
          run.cancel('test over');
        },
      ),
      { numRuns: 40, seed: 20261124 },
    );
  }, 120_000);
});
