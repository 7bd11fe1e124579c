import { firstValueFrom, map, type Observable, toArray } from 'rxjs';
import { expect } from 'vitest';
import { z } from 'zod';
import type { Caps } from '../../run/caps.ts';
import type { Planner, ScriptedStep } from '../../run/planner.ts';
import { scriptedPlanner } from '../../run/planner.ts';
import { defineTool } from '../../tools/define-tool.ts';

/**
 * The run-actor scenarios, written once against the surface both engines share (issue 14: "the
 * run-actor test scenarios run unchanged against both"): repair after a hint, caps, each await
 * (clarification, confirmation, external tool results, with a wrong answer refused at the caller),
 * cancel. `test/run-scenarios.test.ts` runs them on `createRuntime`,
 * `test/temporal.integration.test.ts` on `temporalRuntime` with a worker.
 */

/** Tool call ids the `ledger.book` tool executed, in order (per process). */
export const booked: string[] = [];

export const scenarioTools = {
  book: defineTool({
    id: 'ledger.book',
    description: 'Books an amount',
    input: z.object({ amount: z.number().int().positive() }),
    examples: [{ amount: 10 }],
    timeoutMs: 5_000,
    execute: ({ amount }, { meta }) => {
      booked.push(meta.toolCallId);
      return { booked: amount };
    },
  }),
  wipe: defineTool({
    id: 'disk.wipe',
    description: 'Wipes a disk',
    input: z.object({ disk: z.string() }),
    requiresConfirmation: true,
    execute: ({ disk }) => `wiped ${disk}`,
  }),
  lookup: defineTool({
    id: 'crm.lookup',
    description: 'Looks a customer up (run by the app)',
    input: z.object({ email: z.string() }),
    output: z.object({ plan: z.enum(['free', 'pro']) }),
  }),
};

/** One planner for all runs of an engine: each run follows its own script, by run id. */
export function scriptsByRun() {
  const scripts = new Map<string, Planner>();
  const planner: Planner = {
    planStart: (input) => scripts.get(input.runId)!.planStart(input),
    planResume: (input) => scripts.get(input.runId)!.planResume(input),
  };
  return {
    planner,
    scripts,
    script: (runId: string, steps: ScriptedStep[]) => scripts.set(runId, scriptedPlanner(steps)),
  };
}

/** The types of a run's events, in order, once its event stream completes. */
export function eventTypesOf(events$: Observable<{ type: string }>): Promise<string[]> {
  return firstValueFrom(
    events$.pipe(
      map((event) => event.type),
      toArray(),
    ),
  );
}

/** What a scenario sees of a run, on either engine. */
export interface ScenarioRun {
  runId: string;
  /** What the run awaits now: kind and id, or null. */
  awaiting(): Promise<{ kind: string; id?: string } | null>;
  provideClarification(answer: { id: string; answer: string }): Promise<void>;
  provideToolResults(results: { toolCallId: string; result?: unknown }[]): Promise<void>;
  confirm(answer: { id: string; approved: boolean; by?: string }): Promise<void>;
  cancel(reason?: string): Promise<void>;
  result(): Promise<{
    status: string;
    finalResponse?: { text: string };
    toolResults: { executed?: boolean; result?: unknown; retryHint?: { reason: string } }[];
  }>;
  /** Event types of the run, in order, through the terminal one. */
  eventTypes(): Promise<string[]>;
}

/** An engine the scenarios run on. */
export interface ScenarioEngine {
  /** Starts a run whose planner follows `steps`. */
  start(options: {
    runId: string;
    steps: ScriptedStep[];
    messages: { role: 'user'; content: string }[];
    caps?: Partial<Caps>;
  }): Promise<ScenarioRun>;
  /** How long to wait for a run to reach an await, ms. */
  waitMs: number;
}

const user = (content: string) => [{ role: 'user' as const, content }];
const awaits = async (run: ScenarioRun, engine: ScenarioEngine) => {
  await expect.poll(() => run.awaiting(), { timeout: engine.waitMs }).not.toBeNull();
  return (await run.awaiting())!;
};

/** The scenarios, by name; `unique` makes a run id unique to this test run. */
export const runScenarios: Record<
  string,
  (engine: ScenarioEngine, unique: (name: string) => string) => Promise<void>
> = {
  'repairs a call after its hint; events end with the terminal one': async (engine, unique) => {
    const run = await engine.start({
      runId: unique('repair'),
      steps: [
        { toolCalls: [{ name: 'ledger.book', input: { amount: -5 } }] },
        { toolCalls: [{ name: 'ledger.book', input: { amount: 5 } }] },
        { finalResponse: { text: 'booked 5' } },
      ],
      messages: user('book 5'),
    });
    const events = run.eventTypes();
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'booked 5' } });
    expect(outcome.toolResults.map((result) => result.retryHint?.reason ?? 'ok')).toEqual([
      'invalid_arguments',
      'ok',
    ]);
    expect(booked).toContain(`${run.runId}:t2:c1`);
    const types = await events;
    expect(types).toContain('retry_hint');
    expect(types.at(-1)).toBe('run_completed');
  },

  'awaits a clarification: a wrong id is refused at the caller, the right answer resumes the run': async (
    engine,
    unique,
  ) => {
    const run = await engine.start({
      runId: unique('clarify'),
      steps: [
        { await: { clarification: { id: 'amount', question: 'How much?', missingFields: ['amount'] } } },
        (input) => ({
          toolCalls: [
            {
              name: 'ledger.book',
              input: {
                amount: Number((input as { clarification?: { answer: string } }).clarification?.answer),
              },
            },
          ],
        }),
        { finalResponse: { text: 'done' } },
      ],
      messages: user('book it'),
    });
    expect(await awaits(run, engine)).toEqual({ kind: 'clarification', id: 'amount' });
    await expect(run.provideClarification({ id: 'nope', answer: '7' })).rejects.toThrow();
    await run.provideClarification({ id: 'amount', answer: '7' });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.result).toEqual({ booked: 7 });
  },

  'asks a confirmation for a tool that requires it: a wrong id is refused, approval runs the call': async (
    engine,
    unique,
  ) => {
    const run = await engine.start({
      runId: unique('confirm'),
      steps: [
        { toolCalls: [{ name: 'disk.wipe', input: { disk: 'sdb' } }] },
        { finalResponse: { text: 'wiped' } },
      ],
      messages: user('wipe sdb'),
    });
    const { kind, id } = await awaits(run, engine);
    expect(kind).toBe('confirmation');
    await expect(run.confirm({ id: 'wrong', approved: true })).rejects.toThrow();
    await run.confirm({ id: id!, approved: true, by: 'ops' });
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.toolResults[0]?.result).toBe('wiped sdb');
  },

  'takes external tool results, checked against the tool’s output schema': async (engine, unique) => {
    const run = await engine.start({
      runId: unique('external'),
      steps: [
        {
          await: {
            externalTools: {
              id: 'ext',
              calls: [{ name: 'crm.lookup', toolCallId: 'e1', input: { email: 'ada@example.com' } }],
            },
          },
        },
        { finalResponse: { text: 'ada is pro' } },
      ],
      messages: user('look ada up'),
    });
    expect((await awaits(run, engine)).kind).toBe('external_tools');
    await run.provideToolResults([{ toolCallId: 'e1', result: { plan: 'pro' } }]);
    expect((await run.result()).status).toBe('completed');
  },

  'finalizes at the tool cap': async (engine, unique) => {
    const run = await engine.start({
      runId: unique('capped'),
      steps: [
        { toolCalls: [{ name: 'ledger.book', input: { amount: 1 } }] },
        // The finalizing turn (tool cap reached after one call).
        { finalResponse: { text: 'stopped at the cap' } },
      ],
      messages: user('book'),
      caps: { maxToolCalls: 1 },
    });
    const outcome = await run.result();
    expect(outcome).toMatchObject({ status: 'completed', finalResponse: { text: 'stopped at the cap' } });
    expect(outcome.toolResults.filter((result) => result.executed)).toHaveLength(1);
  },

  'a canceled run ends canceled': async (engine, unique) => {
    const run = await engine.start({
      runId: unique('cancel'),
      steps: [{ await: { clarification: { id: 'q', question: '?', missingFields: [] } } }],
      messages: user('x'),
    });
    await awaits(run, engine);
    await run.cancel('not needed');
    expect((await run.result()).status).toBe('canceled');
  },
};
