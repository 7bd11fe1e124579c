import type { MeterProvider } from '@opentelemetry/api';
import { z } from 'zod';
import type { CostHold, CostLedger } from '../policies/builtins/cost-ledger.ts';
import {
  costMicros,
  estimatePromptTokens,
  fromMicros,
  type ModelPrice,
  ModelPriceSchema,
  toMicros,
} from '../policies/builtins/cost-prices.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { lazySchema } from '../tools/lazy-schema.ts';
import { definePlugin, type PlanInvocation, type Plugin, type RunInfo } from './define-plugin.ts';
import { metrics, trace } from './otel-api.ts';

/** Options of {@link costBudget}. Amounts are in `currency` units (`0.5` is half a dollar for `USD`). */
export interface CostBudgetOptions {
  /** The budget: a run's own, or with `ledger` the ledger key's, shared by the runs that draw on it. */
  limit: number;
  /** The price table's currency, as you name it (`USD`, `EUR`, `credits`): on outcomes, events and spans. */
  currency: string;
  /**
   * Prices per model id, per million tokens: looked up as `provider/modelId`, then `modelId`
   * (the planner's `model`, see `Planner.model`). A model missing from it fails the turn (closed).
   */
  prices: Record<string, ModelPrice>;
  /** The model id to price turns by when the planner names none (a planner of your own). */
  model?: string;
  /**
   * The most output tokens a turn may write, reserved before each turn. Default: the planner's
   * (`modelPlanner({ maxOutputTokens })`); one of them is required, an unbounded turn cannot be
   * reserved for.
   */
  maxOutputTokens?: number;
  /**
   * A budget shared by several runs (a tenant's), in a ledger: `store` from `sqliteCostLedger` /
   * `postgresCostLedger` (across processes) or `memoryCostLedger` (one process); `key` names the
   * account, or picks it per run (`(run) => run.labels.tenant`). Absent: each run has `limit` to
   * itself, counted in its own snapshot.
   */
  ledger?: { store: CostLedger; key: string | ((run: RunInfo) => string) };
  /**
   * The prompt tokens a turn is estimated at before it runs. Default {@link estimatePromptTokens}
   * (JSON characters / 4, non-ASCII 1:1); give a tokenizer's count for a tighter estimate.
   */
  estimate?: (input: PlanInput | PlanResumeInput) => number;
  /**
   * Money held back for the finalizing turn, in `currency` units. Default: the estimate of a
   * finalizing turn over the turn's prompt, its output and the finalizing notice.
   */
  finalizeReserve?: number;
  /** How long a reservation outlives a process that died holding it, ms. Default 900 000 (15 min). */
  reservationTtlMs?: number;
  /** Where the `toolwarden.cost` counter goes. Default: the global meter provider. */
  meterProvider?: MeterProvider;
  /** Default `cost-budget`. */
  name?: string;
}

const OptionsSchema = lazySchema(() =>
  z.object({
    limit: z.number().positive().finite(),
    currency: z.string().trim().min(1).max(32),
    prices: z.record(z.string().min(1), ModelPriceSchema),
    model: z.string().min(1).optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    finalizeReserve: z.number().nonnegative().finite().optional(),
    reservationTtlMs: z.number().int().positive().optional(),
    name: z.string().min(1).optional(),
  }),
);

/** Why a turn could not be priced: the run fails with it before the planner is asked (fails closed). */
export class CostBudgetError extends Error {
  override readonly name = 'CostBudgetError';
  constructor(
    readonly code: 'invalid_options' | 'invalid_estimate' | 'no_model' | 'no_price' | 'no_max_output_tokens',
    message: string,
  ) {
    super(message);
  }
}

/** Tokens the finalizing notice adds to a prompt (its text is a few hundred characters). */
const FINALIZE_NOTICE_TOKENS = 200;
const DEFAULT_TTL_MS = 900_000;

/** The `finalizeReason` of a run whose budget cannot pay for its next turn. */
export const BUDGET_EXHAUSTED = 'budget_exhausted';

/** Span attributes and the metric (docs/telemetry.md). */
export const ATTR_TOOLWARDEN_COST_TURN = 'toolwarden.cost.turn';
export const ATTR_TOOLWARDEN_COST_SPENT = 'toolwarden.cost.spent';
export const ATTR_TOOLWARDEN_COST_LIMIT = 'toolwarden.cost.limit';
export const ATTR_TOOLWARDEN_COST_CURRENCY = 'toolwarden.cost.currency';
export const METRIC_TOOLWARDEN_COST = 'toolwarden.cost';

/**
 * A money budget for a run's planner turns (docs/policies.md §Money), as a plugin: its
 * `wrapPlan` prices each turn by the planner's model and the app's price table.
 *
 * | when | does |
 * | --- | --- |
 * | before a turn | reserves the turn's estimate (prompt tokens estimated from the planner input, plus `maxOutputTokens`) and a reserve for the finalizing turn; if they do not fit, the turn is not taken: the run finalizes with `finalizeReason: 'budget_exhausted'` |
 * | after it | settles the turn's reported `usage` at the model's prices (no usage reported: the estimate) and releases the rest; a turn that throws releases its reservation |
 * | the finalizing turn | draws on the reserve; if even that does not fit (the transcript grew), the planner is not asked and the run answers with a fixed text |
 *
 * The turn's cost is on its result (`PlanResult.cost`), hence on the `planner_turn` event, in
 * `outcome.cost`, on the `plan` span (`toolwarden.cost.turn`, `.spent`, `.limit`, `.currency`)
 * and in the `toolwarden.cost` counter.
 *
 * ```ts
 * createRuntime({ planner: modelPlanner({ model, maxOutputTokens: 1_024 }), tools,
 *   plugins: [costBudget({ limit: 0.5, currency: 'USD',
 *     prices: { 'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cachedInputPerMTok: 0.025 } } })] });
 * ```
 *
 * @throws CostBudgetError (`invalid_options`) for a limit that is not a positive amount, an empty
 *   currency, or a price that is not a finite amount ≥ 0. A turn fails (the run fails, nothing
 *   spent) with CostBudgetError `no_model` when neither the planner nor `model` names the model,
 *   `no_price` when the price table has no entry for it, `no_max_output_tokens` when no output
 *   bound is known.
 */
export function costBudget(options: CostBudgetOptions): Plugin {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success)
    throw new CostBudgetError('invalid_options', `costBudget: ${z.prettifyError(parsed.error)}`);
  const limit = toMicros(options.limit);
  const { currency } = parsed.data;
  const ttlMs = options.reservationTtlMs ?? DEFAULT_TTL_MS;
  const estimate = options.estimate ?? estimatePromptTokens;
  const ledger = options.ledger;
  let counter: ReturnType<ReturnType<MeterProvider['getMeter']>['createCounter']> | undefined;
  const count = (amount: number, attributes: Record<string, string>) => {
    counter ??= (options.meterProvider ?? metrics.getMeterProvider())
      .getMeter('toolwarden')
      .createCounter(METRIC_TOOLWARDEN_COST, {
        unit: currency,
        description: "Money the run's planner turns cost, in the budget's currency",
      });
    counter.add(amount, attributes);
  };

  /** Reserving and settling for one run: in the shared ledger, or against the run's own spend. */
  const accountOf = (run: RunInfo, spentBefore: number) => {
    if (!ledger)
      return {
        reserve: async (holds: CostHold[]) => spentBefore + sum(holds) <= limit,
        settle: async (_id: string, _spent: number) => {},
        release: async (_id: string) => {},
      };
    const key = typeof ledger.key === 'function' ? ledger.key(run) : ledger.key;
    return {
      reserve: (holds: CostHold[]) => ledger.store.reserve({ key, limit, holds, ttlMs }),
      settle: (id: string, spent: number) => ledger.store.settle(key, id, spent),
      release: (id: string) => ledger.store.release(key, id),
    };
  };

  const wrapPlan = async (
    plan: PlanInvocation,
    next: (plan: PlanInvocation) => Promise<PlanResult>,
  ): Promise<PlanResult> => {
    const span = trace.getActiveSpan();
    const { modelId, price, maxOutputTokens } = pricing(options, plan);
    const estimated = estimate(plan.input);
    if (typeof estimated !== 'number' || !Number.isFinite(estimated) || estimated < 0)
      throw new CostBudgetError(
        'invalid_estimate',
        `costBudget: estimate() must return a number of prompt tokens ≥ 0, got ${String(estimated)}`,
      );
    const promptTokens = Math.ceil(estimated);
    const spentBefore = plan.cost?.currency === currency ? toMicros(plan.cost.spent) : 0;
    const account = accountOf(plan.run, spentBefore);
    const holdId = `${plan.run.runId}:finalize`;
    const finalizing = plan.kind === 'finalize';
    const turnId = finalizing ? holdId : `${plan.run.runId}:${plan.input.turnId}`;
    const turnEstimate = costMicros(price, { inputTokens: promptTokens, outputTokens: maxOutputTokens });
    const holds: CostHold[] = [{ id: turnId, amount: turnEstimate }];
    if (!finalizing) {
      const reserve =
        options.finalizeReserve !== undefined
          ? toMicros(options.finalizeReserve)
          : costMicros(price, {
              inputTokens: promptTokens + maxOutputTokens + FINALIZE_NOTICE_TOKENS,
              outputTokens: maxOutputTokens,
            });
      holds.push({ id: holdId, amount: reserve });
    }
    const costOf = (amount: number) => ({
      currency,
      amount: fromMicros(amount),
      spent: fromMicros(spentBefore + amount),
      limit: options.limit,
    });
    if (!(await account.reserve(holds))) {
      const left = `${fromMicros(Math.max(0, limit - spentBefore))} ${currency}`;
      if (!finalizing) {
        const needs = `${fromMicros(sum(holds))} ${currency}`;
        return {
          declined: {
            reason: BUDGET_EXHAUSTED,
            note: ledger
              ? `the next turn and the finalizing reserve (${needs}) do not fit what the shared budget of ${options.limit} ${currency} has left`
              : `the next turn and the finalizing reserve need ${needs}, ${left} of ${options.limit} ${currency} left`,
          },
          cost: costOf(0),
        };
      }
      // Not even the finalizing turn fits (its prompt grew past the reserve): no model is asked.
      await account.release(holdId);
      return {
        finalResponse: {
          text: `The run stopped: its budget of ${options.limit} ${currency} cannot pay for a final answer.`,
        },
        notes: [
          `costBudget: the finalizing turn needs ${fromMicros(turnEstimate)} ${currency}, which does not fit`,
        ],
        cost: costOf(0),
      };
    }
    let result: PlanResult;
    try {
      result = await next(plan);
    } catch (err) {
      // What a failed turn cost is not reported: its reservation goes back (docs/policies.md §Money).
      await account.release(turnId).catch(() => {});
      throw err;
    }
    const usage = result.usage;
    const spent = usage ? costMicros(price, usage) : turnEstimate;
    await account.settle(turnId, spent);
    // A final answer ends the run without a finalizing turn: its reserve goes back now, not when
    // the run_completed event's release gets to it (the process may be gone by then).
    if (!finalizing && result.finalResponse && !result.toolCalls?.length && !result.await)
      await account.release(holdId);
    const cost = costOf(spent);
    span?.setAttributes({
      [ATTR_TOOLWARDEN_COST_TURN]: cost.amount,
      [ATTR_TOOLWARDEN_COST_SPENT]: cost.spent,
      [ATTR_TOOLWARDEN_COST_LIMIT]: cost.limit,
      [ATTR_TOOLWARDEN_COST_CURRENCY]: currency,
    });
    count(cost.amount, {
      [ATTR_TOOLWARDEN_COST_CURRENCY]: currency,
      'gen_ai.request.model': modelId,
      'toolwarden.plan.kind': plan.kind,
    });
    return { ...result, cost };
  };

  return definePlugin({
    name: parsed.data.name ?? 'cost-budget',
    wrapPlan,
    onEvent(event, run) {
      // A run that ends before its finalizing turn (failed, canceled, answered) gives its reserve back.
      if (!ledger) return;
      if (event.type !== 'run_completed' && event.type !== 'run_failed' && event.type !== 'run_canceled')
        return;
      accountOf(run, 0)
        .release(`${run.runId}:finalize`)
        // Not released (the store is down): it lapses after reservationTtlMs.
        .catch(() => {});
    },
  });
}

function sum(holds: CostHold[]): number {
  let total = 0;
  for (const hold of holds) total += hold.amount;
  return total;
}

/** The turn's model id, its price and its output bound, or the CostBudgetError that fails the turn. */
function pricing(
  options: CostBudgetOptions,
  plan: PlanInvocation,
): { modelId: string; price: ModelPrice; maxOutputTokens: number } {
  const model = plan.model;
  const modelId = model?.modelId ?? options.model;
  if (modelId === undefined)
    throw new CostBudgetError(
      'no_model',
      'costBudget: the planner names no model (Planner.model; modelPlanner sets it) and costBudget({ model }) is not set: the turn cannot be priced',
    );
  const ids = model ? [`${model.provider}/${modelId}`, modelId] : [modelId];
  const id = ids.find((candidate) => Object.hasOwn(options.prices, candidate));
  if (id === undefined)
    throw new CostBudgetError(
      'no_price',
      `costBudget: no price for model ${ids.map((candidate) => JSON.stringify(candidate)).join(' or ')} in the price table (${Object.keys(options.prices).join(', ') || 'empty'}): a turn is never priced as free`,
    );
  const maxOutputTokens = options.maxOutputTokens ?? model?.maxOutputTokens;
  if (maxOutputTokens === undefined)
    throw new CostBudgetError(
      'no_max_output_tokens',
      'costBudget: no output bound to reserve for: set modelPlanner({ maxOutputTokens }) or costBudget({ maxOutputTokens })',
    );
  return { modelId, price: options.prices[id]!, maxOutputTokens };
}
