import { z } from 'zod';
import type { PlanInput, PlanResumeInput } from '../../run/planner.ts';
import { lazySchema } from '../../tools/lazy-schema.ts';

/**
 * The money side of `costBudget` (docs/policies.md §Money): a model's price, what a turn's tokens
 * cost, and the prompt estimate a turn reserves for before it runs. Amounts are integer
 * micro-units (10⁻⁶ of the currency: `1_500_000` is 1.50 USD), so sums are exact in JavaScript
 * and in the ledgers' integer columns.
 *
 * @module
 */

/** Micro-units in one unit of the currency. */
export const MICROS = 1_000_000;

/** Schema of {@link ModelPrice}: finite, non-negative prices per million tokens. */
export const ModelPriceSchema = lazySchema(() =>
  z.strictObject({
    inputPerMTok: z.number().nonnegative().finite(),
    outputPerMTok: z.number().nonnegative().finite(),
    cachedInputPerMTok: z.number().nonnegative().finite().optional(),
  }),
);
/**
 * A model's price in the budget's currency per million tokens (the providers' price lists'
 * unit): input, output, and input read from the provider's prompt cache (default: the input
 * price, when absent).
 */
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** A turn's tokens as `PlanResult.usage` reports them. */
export interface TokenCount {
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the prompt cache. */
  cachedInputTokens?: number;
}

/**
 * What `tokens` cost at `price`, micro-units, rounded up. Since a price is per million tokens,
 * `tokens × pricePerMTok` is already in micro-units. Cached tokens are counted at
 * `cachedInputPerMTok` (at most `inputTokens` of them), the rest of the input at `inputPerMTok`.
 */
export function costMicros(price: ModelPrice, tokens: TokenCount): number {
  const cached = Math.min(tokens.cachedInputTokens ?? 0, tokens.inputTokens);
  const raw =
    (tokens.inputTokens - cached) * price.inputPerMTok +
    cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
    tokens.outputTokens * price.outputPerMTok;
  // Up, but not for the float noise of an exact product (0.1 × 3 = 0.30000000000000004).
  return Math.max(0, Math.ceil(raw - 1e-9));
}

/** An amount in the currency as micro-units; throws for what is not a finite amount ≥ 0. */
export function toMicros(amount: number): number {
  if (!Number.isFinite(amount) || amount < 0)
    throw new RangeError(`A money amount must be a finite number ≥ 0, got ${amount}`);
  return Math.round(amount * MICROS);
}

/** Micro-units as an amount in the currency. */
export function fromMicros(micros: number): number {
  return micros / MICROS;
}

/**
 * The default prompt estimate, tokens (docs/policies.md §Money): the JSON text of what the
 * planner is sent (the transcript, the advertised tools' descriptors, the finalizing notice),
 * ASCII characters at four to a token (OpenAI's rule of thumb for English) and every other UTF-16
 * unit as a token of its own, so a transcript in Chinese or emoji is not undercounted fourfold.
 * It does not see what a planner adds itself (a system prompt): `costBudget`'s `estimate` takes a
 * tokenizer's count instead.
 */
export function estimatePromptTokens(input: PlanInput | PlanResumeInput): number {
  let ascii = 0;
  let other = 0;
  const count = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) < 0x80) ascii++;
      else other++;
    }
  };
  for (const message of input.messages) count(JSON.stringify(message));
  if (input.tools.length > 0) count(JSON.stringify(input.tools));
  const resume = input as Partial<PlanResumeInput>;
  if (resume.finalize?.message) count(resume.finalize.message);
  return Math.ceil(ascii / 4) + other;
}
