import type { ModelPricing } from "../config/schema.ts";
import type { Usage } from "../protocol/events.ts";

/**
 * What a step cost, in integer micro-USD, from the provider's reported usage and the model's
 * configured prices (USD per million tokens = micro-USD per token). Cache reads get the cached
 * price only when the provider reported them and a cached price is configured; there is no
 * built-in price table, so an unpriced model has no cost (undefined), never a guessed one.
 */
export function costMicroUsd(usage: Usage, pricing: ModelPricing | undefined): number | undefined {
  if (!pricing) return undefined;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const cachedPrice = pricing.cachedInputPerMillionUsd ?? pricing.inputPerMillionUsd;
  return Math.round((usage.inputTokens - cached) * pricing.inputPerMillionUsd + cached * cachedPrice + usage.outputTokens * pricing.outputPerMillionUsd);
}

/** Micro-USD as USD with six decimals (exact: both are integers underneath). */
export function microToUsd(micro: number): number {
  return Number((micro / 1_000_000).toFixed(6));
}
