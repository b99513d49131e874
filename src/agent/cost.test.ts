import { expect, test } from "bun:test";
import { emptyUsage, type Usage } from "../protocol/events.ts";
import { costMicroUsd, microToUsd } from "./cost.ts";
import { estimateTokens } from "./estimate.ts";

// What a step costs (integer micro-USD) from reported usage × configured prices (BUD-02, BUD-04).

const usage = (input: number, output: number, cached = 0): Usage => ({ ...emptyUsage(), inputTokens: input, outputTokens: output, cachedInputTokens: cached, totalTokens: input + output });
const PRICING = { inputPerMillionUsd: 2, outputPerMillionUsd: 8 };

test("2/8 USD per million: 1M in + 0.5M out cost 6,000,000 micro-USD = 6.000000 USD", () => {
  const micro = costMicroUsd(usage(1_000_000, 500_000), PRICING);
  expect(micro).toBe(6_000_000);
  expect(microToUsd(micro!)).toBe(6);
  expect(microToUsd(micro!).toFixed(6)).toBe("6.000000");
  // Input and output are priced separately.
  expect(costMicroUsd(usage(1_000_000, 0), PRICING)).toBe(2_000_000);
  expect(costMicroUsd(usage(0, 1_000_000), PRICING)).toBe(8_000_000);
  expect(costMicroUsd(usage(0, 0), PRICING)).toBe(0);
});

test("reported cache reads get the cached price; the rest of the input the full price", () => {
  const pricing = { ...PRICING, cachedInputPerMillionUsd: 0.5 };
  // 600k uncached × 2 + 400k cached × 0.5 + 100k out × 8
  expect(costMicroUsd(usage(1_000_000, 100_000, 400_000), pricing)).toBe(1_200_000 + 200_000 + 800_000);
  // No cache reads reported: the whole input at the full price, even with a cached price configured.
  expect(costMicroUsd(usage(1_000_000, 100_000, 0), pricing)).toBe(2_000_000 + 800_000);
  // All of it cached.
  expect(costMicroUsd(usage(1_000_000, 0, 1_000_000), pricing)).toBe(500_000);
  // A provider reporting more cache reads than input: never more than the input is discounted.
  expect(costMicroUsd(usage(1_000, 0, 5_000), pricing)).toBe(500);
});

test("without a cached price, cache reads cost the input price", () => {
  expect(costMicroUsd(usage(1_000_000, 500_000, 400_000), PRICING)).toBe(6_000_000);
});

test("an unpriced model has no cost, never a guessed one", () => {
  expect(costMicroUsd(usage(1_000_000, 500_000), undefined)).toBeUndefined();
  expect(costMicroUsd(usage(0, 0), undefined)).toBeUndefined();
});

test("costs are whole micro-USD, rounded to the nearest", () => {
  const cheap = { inputPerMillionUsd: 0.25, outputPerMillionUsd: 0.1 };
  expect(costMicroUsd(usage(1, 0), cheap)).toBe(0); // 0.25
  expect(costMicroUsd(usage(3, 0), cheap)).toBe(1); // 0.75
  expect(costMicroUsd(usage(2, 0), cheap)).toBe(1); // 0.5 rounds up
  expect(costMicroUsd(usage(3, 7), cheap)).toBe(1); // 0.75 + 0.7 = 1.45
  for (const [input, output, cached] of [[123, 457, 0], [1001, 3, 17], [77_777, 33_333, 11_111]] as const) {
    const micro = costMicroUsd(usage(input, output, cached), { inputPerMillionUsd: 0.3, outputPerMillionUsd: 1.7, cachedInputPerMillionUsd: 0.07 });
    expect(Number.isInteger(micro)).toBe(true);
  }
});

test("microToUsd gives USD with six decimals", () => {
  expect(microToUsd(0)).toBe(0);
  expect(microToUsd(1)).toBe(0.000001);
  expect(microToUsd(1_234_567)).toBe(1.234567);
  expect(microToUsd(25_000_000)).toBe(25);
  // Sums of micro-USD stay exact where the same sums of USD floats would not.
  expect(microToUsd(100_000 + 200_000)).toBe(0.3);
});

test("estimateTokens: about four characters a token, rounded up", () => {
  expect(estimateTokens(0)).toBe(0);
  expect(estimateTokens(1)).toBe(1);
  expect(estimateTokens(4)).toBe(1);
  expect(estimateTokens(5)).toBe(2);
  expect(estimateTokens(8)).toBe(2);
  expect(estimateTokens(10_000)).toBe(2_500);
  expect(estimateTokens(10_001)).toBe(2_501);
});
