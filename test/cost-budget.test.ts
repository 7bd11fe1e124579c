/**
 * costBudget (docs/policies.md §Money, issue 35 item 2): a money budget reserved before each
 * planner turn, settled from the turn's reported usage, and a run that ends `budget_exhausted`
 * with a finalizing turn before a turn that cannot fit.
 */

import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { modelPlanner } from '../models/model-planner.ts';
import { CostBudgetError, type CostBudgetOptions, costBudget } from '../plugins/cost-budget.ts';
import { type CostLedger, memoryCostLedger } from '../policies/builtins/cost-ledger.ts';
import { costMicros, estimatePromptTokens } from '../policies/builtins/cost-prices.ts';
import type { PlanInput, Planner, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { PlannerTurnEvent, RunEvent } from '../run/run-events.ts';
import { echoTool, testRuntime } from './run-fixtures.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';

const prompt = [{ role: 'user' as const, content: 'Echo until told to stop' }];
const MODEL = { provider: 'acme', modelId: 'acme-1', maxOutputTokens: 100 };
/** 10 USD per million input tokens, 30 per million output: a turn of 1,000 in / 100 out is 0.013 USD. */
const prices = { 'acme-1': { inputPerMTok: 10, outputPerMTok: 30, cachedInputPerMTok: 1 } };
/** Every turn estimated at 1,000 prompt tokens, so the reservations are exact numbers. */
const estimate = () => 1_000;

/**
 * A planner that calls `util.echo` every turn (it would never stop by itself), answers the
 * finalizing turn in text, and reports 1,000 input and 100 output tokens per turn.
 */
function echoForever(
  model: Planner['model'] | null = MODEL,
  usage: PlanResult['usage'] | null = { inputTokens: 1_000, outputTokens: 100 },
) {
  const calls: (PlanInput | PlanResumeInput)[] = [];
  const turn = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    calls.push(input);
    if ('finalize' in input && input.finalize)
      return { finalResponse: { text: `stopped: ${input.finalize.reason}` }, ...(usage ? { usage } : {}) };
    return {
      toolCalls: [{ name: 'util.echo', input: { text: `turn ${calls.length}` } }],
      ...(usage ? { usage } : {}),
    };
  };
  const planner: Planner & { calls: typeof calls } = { planStart: turn, planResume: turn, calls };
  if (model) Object.assign(planner, { model });
  return planner;
}

/** One run of `planner` under `costBudget(budget)`, no other policies, to its outcome. */
function runWithBudget(planner: Planner, budget: Partial<CostBudgetOptions>) {
  return testRuntime({
    planner,
    tools: [echoTool],
    policies: [],
    plugins: [costBudget({ limit: 1, currency: 'USD', prices, estimate, ...budget })],
  })
    .start({ messages: prompt })
    .result();
}

function turns(events: RunEvent[]): PlannerTurnEvent[] {
  return events.filter((event): event is PlannerTurnEvent => event.type === 'planner_turn');
}

describe('costBudget', () => {
  it('ends the run budget_exhausted with a finalizing turn, without the turn that would exceed the budget', async () => {
    // Each tool turn reserves 0.013 (1,000 in + 100 out) plus 0.016 held for the finalizing turn
    // (1,000 + 100 + 200 notice tokens in, 100 out). After three turns 0.039 is spent; a fourth
    // needs 0.039 + 0.029 = 0.068 > 0.06: declined. The finalizing turn fits (0.052).
    const planner = echoForever();
    const runtime = testRuntime({
      planner,
      tools: [echoTool],
      policies: [],
      plugins: [costBudget({ limit: 0.06, currency: 'USD', prices, estimate })],
    });
    const run = runtime.start({ messages: prompt });
    const events: RunEvent[] = [];
    run.events$.subscribe((event) => events.push(event));
    const outcome = await run.result();

    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'budget_exhausted' });
    expect(outcome.finalResponse?.text).toBe('stopped: budget_exhausted');
    // Three tool turns and the finalizing one asked the planner; the declined fourth did not.
    expect(planner.calls).toHaveLength(4);
    expect(outcome.toolResults).toHaveLength(3);
    expect(outcome.cost).toEqual({ currency: 'USD', spent: 0.052, limit: 0.06 });
    expect(outcome.cost!.spent).toBeLessThanOrEqual(0.06);
    const finalize = (planner.calls[3] as PlanResumeInput).finalize;
    expect(finalize?.reason).toBe('budget_exhausted');
    expect(finalize?.message).toMatch(/money budget cannot pay for another planner turn/);

    // The inspector's cost column: each turn's cost on its planner_turn event.
    const costs = turns(events).map((turn) => [turn.kind, turn.cost?.amount, turn.cost?.spent]);
    expect(costs).toEqual([
      ['start', 0.013, 0.013],
      ['resume', 0.013, 0.026],
      ['resume', 0.013, 0.039],
      ['resume', 0, 0.039], // declined: not taken, nothing spent
      ['finalize', 0.013, 0.052],
    ]);
    expect((turns(events)[3]!.result as PlanResult).declined?.reason).toBe('budget_exhausted');
  });

  it('settles what the turn reported, not the estimate: a cheap turn leaves room for more turns', async () => {
    // Reported 100 in / 10 out = 0.0013 a turn, though each reserves 0.029.
    const planner = echoForever(MODEL, { inputTokens: 100, outputTokens: 10 });
    const outcome = await runWithBudget(planner, { limit: 0.06 });
    expect(outcome.finalizeReason).toBe('budget_exhausted');
    // Turns k while 0.0013 (k − 1) + 0.029 ≤ 0.06: 24 tool turns, then the finalizing one.
    expect(planner.calls).toHaveLength(25);
    expect(outcome.cost?.spent).toBeCloseTo(25 * 0.0013, 10);
  });

  it('prices cached input tokens at cachedInputPerMTok, as modelPlanner reports them', async () => {
    const usage = {
      inputTokens: { total: 1_000, noCache: 200, cacheRead: 800, cacheWrite: undefined },
      outputTokens: { total: 100, text: 100, reasoning: undefined },
    };
    const answer: LanguageModelV3GenerateResult = {
      content: [{ type: 'text', text: 'Hello.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage,
      warnings: [],
    };
    const model = new MockLanguageModelV3({
      provider: 'acme',
      modelId: 'acme-1',
      doGenerate: async () => answer,
    });
    const outcome = await testRuntime({
      planner: modelPlanner({ model, maxOutputTokens: 100 }),
      tools: [echoTool],
      plugins: [costBudget({ limit: 1, currency: 'USD', prices })],
    })
      .start({ messages: prompt })
      .result();
    // 200 × 10 + 800 × 1 + 100 × 30 micro-USD.
    expect(outcome.cost).toEqual({ currency: 'USD', spent: 0.0058, limit: 1 });
    expect(outcome.usage.inputTokens).toBe(1_000);
  });

  it('charges the estimate for a turn that reports no usage (never free)', async () => {
    const planner = echoForever(MODEL, null);
    const outcome = await runWithBudget(planner, { limit: 0.03 });
    // The estimate, 0.013, each: one tool turn (0.013 + 0.016 ≤ 0.03), then finalizing (0.026).
    expect(planner.calls).toHaveLength(2);
    expect(outcome.cost?.spent).toBe(0.026);
  });

  it('answers with a fixed text, without asking the planner, when even the finalizing turn does not fit', async () => {
    // No reserve held back: the run spends up to the limit, then cannot pay for the final answer.
    const planner = echoForever();
    const outcome = await runWithBudget(planner, { limit: 0.03, finalizeReserve: 0 });
    expect(outcome).toMatchObject({ status: 'completed', finalizeReason: 'budget_exhausted' });
    expect(planner.calls).toHaveLength(2); // 0.013 + 0.013; a third would pass 0.03
    expect(outcome.finalResponse?.text).toBe(
      'The run stopped: its budget of 0.03 USD cannot pay for a final answer.',
    );
    expect(outcome.cost).toEqual({ currency: 'USD', spent: 0.026, limit: 0.03 });
  });

  it('fails the run closed, before the planner is asked, for a model missing from the price table', async () => {
    for (const modelId of ['acme-2', 'constructor', '__proto__']) {
      const planner = echoForever({ ...MODEL, modelId });
      const outcome = await runWithBudget(planner, {});
      expect(outcome.status).toBe('failed');
      expect(outcome.error?.name).toBe('CostBudgetError');
      expect(outcome.error?.message).toContain(`no price for model "acme/${modelId}" or "${modelId}"`);
      expect(planner.calls).toHaveLength(0);
    }
  });

  it('fails the run for a planner that names no model, unless costBudget({ model }) names it', async () => {
    const unnamed = echoForever(null);
    const failed = await runWithBudget(unnamed, {});
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toMatch(/the planner names no model/);
    expect(unnamed.calls).toHaveLength(0);

    const named = echoForever(null);
    const outcome = await runWithBudget(named, { limit: 0.03, model: 'acme-1', maxOutputTokens: 100 });
    expect(outcome.finalizeReason).toBe('budget_exhausted');
    expect(outcome.cost?.spent).toBe(0.026);
  });

  it('fails a turn with no output bound to reserve for', async () => {
    const planner = echoForever({ provider: 'acme', modelId: 'acme-1' });
    const outcome = await runWithBudget(planner, {});
    expect(outcome.error?.message).toMatch(/no output bound/);
    expect(planner.calls).toHaveLength(0);
  });

  it('refuses options it cannot keep', () => {
    const bad = [
      { limit: -1, currency: 'USD', prices },
      { limit: Number.NaN, currency: 'USD', prices },
      { limit: 1, currency: ' ', prices },
      { limit: 1, currency: 'USD', prices: { m: { inputPerMTok: -1, outputPerMTok: 1 } } },
      {
        limit: 1,
        currency: 'USD',
        prices: { m: { inputPerMTok: 1, outputPerMTok: Number.POSITIVE_INFINITY } },
      },
      { limit: 1, currency: 'USD', prices: { m: { inputPerMTok: 1, outputPerMTok: 1, cachedPerMTok: 1 } } },
    ];
    for (const options of bad) {
      expect(() => costBudget(options as never)).toThrow(CostBudgetError);
    }
  });

  it('releases a failed turn’s reservation in a shared ledger', async () => {
    const store = memoryCostLedger();
    const planner: Planner = {
      model: MODEL,
      planStart: async () => {
        throw new Error('provider down');
      },
      planResume: async () => ({ finalResponse: { text: 'unused' } }),
    };
    const outcome = await testRuntime({
      planner,
      tools: [echoTool],
      plugins: [
        costBudget({ limit: 1, currency: 'USD', prices, estimate, ledger: { store, key: 'tenant-42' } }),
      ],
    })
      .start({ messages: prompt })
      .result();
    expect(outcome.status).toBe('failed');
    expect(await store.balance('tenant-42')).toEqual({ spent: 0, reserved: 0 });
  });

  it('gives a run’s finalizing reserve back before it completes, when it answers without finalizing', async () => {
    const memory = memoryCostLedger();
    const order: string[] = [];
    const store: CostLedger = {
      ...memory,
      release: async (key, id) => {
        order.push(`release ${id}`);
        await memory.release(key, id);
      },
    };
    const planner: Planner = {
      model: MODEL,
      planStart: async () => ({
        finalResponse: { text: 'Done.' },
        usage: { inputTokens: 1_000, outputTokens: 100 },
      }),
      planResume: async () => ({ finalResponse: { text: 'unused' } }),
    };
    const run = testRuntime({
      planner,
      tools: [echoTool],
      plugins: [
        costBudget({ limit: 1, currency: 'USD', prices, estimate, ledger: { store, key: 'tenant-42' } }),
      ],
    }).start({ runId: 'run-1', messages: prompt });
    run.events$.subscribe((event) => {
      if (event.type === 'run_completed') order.push('run_completed');
    });
    const outcome = await run.result();
    expect(outcome.cost?.spent).toBe(0.013);
    // Released with the answer, not left to the run_completed event (a process may exit first).
    expect(order[0]).toBe('release run-1:finalize');
    expect(order).toContain('run_completed');
    expect(await memory.balance('tenant-42')).toEqual({ spent: 13_000, reserved: 0 });
  });

  it('has runs of one tenant draw on one budget in a shared ledger, together never past it', async () => {
    const store = memoryCostLedger();
    const plugin = costBudget({
      limit: 0.2,
      currency: 'USD',
      prices,
      estimate,
      ledger: { store, key: (run) => run.labels.tenant ?? 'none' },
    });
    const planners = Array.from({ length: 4 }, () => echoForever());
    const outcomes = await Promise.all(
      planners.map((planner) =>
        testRuntime({ planner, tools: [echoTool], policies: [], plugins: [plugin] })
          .start({ messages: prompt, labels: { tenant: 'tenant-42' } })
          .result(),
      ),
    );
    const balance = await store.balance('tenant-42');
    expect(balance.reserved).toBe(0);
    expect(balance.spent).toBeLessThanOrEqual(200_000);
    const total = outcomes.reduce((sum, outcome) => sum + outcome.cost!.spent, 0);
    expect(total).toBeCloseTo(balance.spent / 1e6, 10);
    for (const outcome of outcomes) expect(outcome.finalizeReason).toBe('budget_exhausted');
    // Every run made progress (a tool turn, then its final answer).
    for (const planner of planners) expect(planner.calls.length).toBeGreaterThanOrEqual(2);
  });
});

describe('the money arithmetic', () => {
  it('prices tokens per million in micro-units, rounded up', () => {
    const price = { inputPerMTok: 0.15, outputPerMTok: 0.6 };
    expect(costMicros(price, { inputTokens: 1_000_000, outputTokens: 0 })).toBe(150_000);
    expect(costMicros(price, { inputTokens: 7, outputTokens: 0 })).toBe(2); // 1.05 → 2
    expect(costMicros({ inputPerMTok: 0.1, outputPerMTok: 0 }, { inputTokens: 3, outputTokens: 0 })).toBe(1);
    // More cached tokens than input tokens (a provider's odd report) count as all input cached.
    expect(
      costMicros(
        { ...price, cachedInputPerMTok: 0 },
        { inputTokens: 10, outputTokens: 0, cachedInputTokens: 50 },
      ),
    ).toBe(0);
  });

  it('estimates four ASCII characters to a token and other characters one each', () => {
    const base = { runId: 'r', turnId: 't', agentId: 'a', tools: [], caps: {} as never, labels: {} };
    const english = estimatePromptTokens({
      ...base,
      messages: [{ role: 'user', content: 'a'.repeat(4_000) }],
    });
    const chinese = estimatePromptTokens({
      ...base,
      messages: [{ role: 'user', content: '退'.repeat(4_000) }],
    });
    expect(english).toBeGreaterThanOrEqual(1_000);
    expect(english).toBeLessThan(1_020);
    expect(chinese).toBeGreaterThanOrEqual(4_000);
  });
});

describe('costBudget telemetry', () => {
  const { exporter, provider } = inMemoryTracing();

  class Reader extends MetricReader {
    protected override async onShutdown(): Promise<void> {}
    protected override async onForceFlush(): Promise<void> {}
    async metric(name: string): Promise<MetricData | undefined> {
      const { resourceMetrics } = await this.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === name);
    }
  }

  it('puts each turn’s cost on its plan span, the run’s on its root span, and counts it in toolwarden.cost', async () => {
    const reader = new Reader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const outcome = await testRuntime({
      planner: echoForever(),
      tools: [echoTool],
      policies: [],
      telemetry: { tracerProvider: provider },
      plugins: [costBudget({ limit: 0.06, currency: 'USD', prices, estimate, meterProvider })],
    })
      .start({ messages: prompt })
      .result();
    expect(outcome.cost?.spent).toBe(0.052);
    const plans = exporter.getFinishedSpans().filter((span) => span.name.startsWith('plan '));
    const priced = plans
      .filter((span) => span.attributes['toolwarden.cost.turn'] !== undefined)
      .map((span) => [span.attributes['toolwarden.cost.turn'], span.attributes['toolwarden.cost.spent']]);
    expect(priced).toEqual([
      [0.013, 0.013],
      [0.013, 0.026],
      [0.013, 0.039],
      [0.013, 0.052],
    ]);
    expect(plans.at(-1)?.attributes).toMatchObject({
      'toolwarden.cost.limit': 0.06,
      'toolwarden.cost.currency': 'USD',
    });
    // The run's root span ends with what the run spent.
    const root = exporter.getFinishedSpans().find((span) => span.name.startsWith('invoke_agent'));
    expect(root?.attributes).toMatchObject({
      'toolwarden.cost.spent': 0.052,
      'toolwarden.cost.limit': 0.06,
      'toolwarden.cost.currency': 'USD',
    });
    const counter = await reader.metric('toolwarden.cost');
    expect(counter?.descriptor.unit).toBe('USD');
    const total = (counter?.dataPoints ?? []).reduce((sum, point) => sum + (point.value as number), 0);
    expect(total).toBeCloseTo(0.052, 10);
    await meterProvider.shutdown();
  });
});
