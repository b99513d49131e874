import { expect, test } from "bun:test";
import type { ModelCallAdmission } from "../agent/loop-input.ts";
import { createCampaign, type CampaignLimits } from "./run-context.ts";

// The campaign's shared budget: token and cost caps, the one-at-a-time admission of model calls
// while a cap is set (BUD-06), output allowances (BUD-07), and the run count.

const limits = (over: Partial<CampaignLimits> = {}): CampaignLimits => ({
  steps: null,
  toolCalls: null,
  tokens: null,
  costMicroUsd: null,
  runs: null,
  deadline: new Date(Date.now() + 60_000),
  ...over,
});
const live = () => new AbortController().signal;
const PRICING = { inputPerMillionUsd: 2, outputPerMillionUsd: 8 };

/** Whether `promise` settled within a few event-loop turns. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await Bun.sleep(20);
  return done;
}

function admitted(admission: ModelCallAdmission): Extract<ModelCallAdmission, { ok: true }> {
  if (!admission.ok) throw new Error(`expected an admission, got a refusal: ${admission.message}`);
  return admission;
}

test("exhausted: the token cap once the campaign spent it, naming limits.maxCampaignTokens", () => {
  const campaign = createCampaign(limits({ tokens: 100 }));
  expect(campaign.exhausted()).toBeUndefined();
  campaign.charge({ tokens: 99 });
  expect(campaign.exhausted()).toBeUndefined();
  campaign.charge({ tokens: 1 });
  const stop = campaign.exhausted();
  expect(stop?.guard).toBe("max_tokens");
  expect(stop?.message).toContain("limits.maxCampaignTokens");
  expect(stop?.message).toContain("100 tokens of its 100");
  expect(campaign.spent.tokens).toBe(100);
});

test("exhausted: the cost cap once the campaign spent it, naming limits.maxCostUsd", () => {
  const campaign = createCampaign(limits({ costMicroUsd: 5_000_000 }));
  campaign.charge({ costMicroUsd: 4_999_999 });
  expect(campaign.exhausted()).toBeUndefined();
  campaign.charge({ costMicroUsd: 1 });
  const stop = campaign.exhausted();
  expect(stop?.guard).toBe("max_cost");
  expect(stop?.message).toContain("limits.maxCostUsd");
  expect(stop?.message).toContain("5.000000 USD of its 5.000000");
  expect(campaign.spent.costMicroUsd).toBe(5_000_000);
});

test("exhausted: no caps, no stop however much is spent; spending already done counts", () => {
  const open = createCampaign(limits());
  open.charge({ tokens: 10_000_000, costMicroUsd: 10_000_000, steps: 5, toolCalls: 7 });
  expect(open.exhausted()).toBeUndefined();
  expect(open.spent).toEqual({ steps: 5, toolCalls: 7, tokens: 10_000_000, costMicroUsd: 10_000_000, runs: 0 });
  // A resumed campaign starts from what it spent.
  const resumed = createCampaign(limits({ tokens: 50 }), { tokens: 50 });
  expect(resumed.exhausted()?.guard).toBe("max_tokens");
});

test("without a cap every model call is admitted at once, concurrent ones too, with no allowance", async () => {
  const campaign = createCampaign(limits({ runs: 3 }));
  const first = campaign.admitModelCall!({ estimatedInputTokens: 1_000_000, signal: live() });
  const second = campaign.admitModelCall!({ estimatedInputTokens: 1_000_000, signal: live() });
  // Neither was released, yet both are through.
  expect(await settled(second)).toBe(true);
  const [a, b] = await Promise.all([first, second]);
  expect(admitted(a).maxOutputTokens).toBeUndefined();
  expect(admitted(b).maxOutputTokens).toBeUndefined();
});

test("with a cap a second concurrent call waits until the first released, then gets what is left after its charge", async () => {
  const campaign = createCampaign(limits({ tokens: 10_000 }));
  const order: string[] = [];
  const first = admitted(await campaign.admitModelCall!({ estimatedInputTokens: 1_000, signal: live() }));
  expect(first.maxOutputTokens).toBe(9_000);
  order.push("first admitted");
  const second = campaign.admitModelCall!({ estimatedInputTokens: 1_000, signal: live() }).then((admission) => {
    order.push("second admitted");
    return admitted(admission);
  });
  expect(await settled(second)).toBe(false);
  // The first call's usage is charged, then it releases: only then is the second admitted.
  campaign.charge({ tokens: 3_000 });
  order.push("first charged");
  first.release();
  order.push("first released");
  const next = await second;
  expect(order).toEqual(["first admitted", "first charged", "first released", "second admitted"]);
  // 10,000 − 3,000 spent − 1,000 estimated input.
  expect(next.maxOutputTokens).toBe(6_000);
  next.release();
  // A cost cap alone also queues.
  const costly = createCampaign(limits({ costMicroUsd: 1_000_000 }));
  const holder = admitted(await costly.admitModelCall!({ estimatedInputTokens: 10, pricing: PRICING, signal: live() }));
  const waiter = costly.admitModelCall!({ estimatedInputTokens: 10, pricing: PRICING, signal: live() });
  expect(await settled(waiter)).toBe(false);
  holder.release();
  expect(admitted(await waiter).ok).toBe(true);
});

test("three concurrent calls under a cap pass one at a time, in the order they asked", async () => {
  const campaign = createCampaign(limits({ tokens: 1_000_000 }));
  const order: number[] = [];
  let inside = 0;
  let peak = 0;
  await Promise.all(
    [1, 2, 3].map(async (n) => {
      const admission = admitted(await campaign.admitModelCall!({ estimatedInputTokens: 100, signal: live() }));
      inside += 1;
      peak = Math.max(peak, inside);
      order.push(n);
      await Bun.sleep(10);
      campaign.charge({ tokens: 500 });
      inside -= 1;
      admission.release();
    }),
  );
  expect(peak).toBe(1);
  expect(order).toEqual([1, 2, 3]);
  expect(campaign.spent.tokens).toBe(1_500);
});

test("a call whose estimated input does not fit the tokens left is refused (max_tokens), and frees its turn", async () => {
  const campaign = createCampaign(limits({ tokens: 1_000 }), { tokens: 200 });
  const refused = await campaign.admitModelCall!({ estimatedInputTokens: 800, signal: live() });
  expect(refused.ok).toBe(false);
  if (refused.ok) return;
  expect(refused.guard).toBe("max_tokens");
  expect(refused.message).toContain("limits.maxCampaignTokens");
  expect(refused.message).toContain("800 of 1000 tokens left");
  // The refusal did not keep the queue: the next call gets through (a hang here would time out).
  const fits = admitted(await campaign.admitModelCall!({ estimatedInputTokens: 799, signal: live() }));
  expect(fits.maxOutputTokens).toBe(1);
  fits.release();
  // Nothing left at all: refused too.
  campaign.charge({ tokens: 900 });
  const over = await campaign.admitModelCall!({ estimatedInputTokens: 0, signal: live() });
  expect(over).toMatchObject({ ok: false, guard: "max_tokens" });
  if (!over.ok) expect(over.message).toContain("0 of 1000 tokens left");
});

test("a call whose estimated input alone costs what is left is refused (max_cost)", async () => {
  const campaign = createCampaign(limits({ costMicroUsd: 1_000_000 }));
  // 500,000 tokens × 2 USD/M = 1.000000 USD: all that is left.
  const refused = await campaign.admitModelCall!({ estimatedInputTokens: 500_000, pricing: PRICING, signal: live() });
  expect(refused).toMatchObject({ ok: false, guard: "max_cost" });
  if (!refused.ok) {
    expect(refused.message).toContain("limits.maxCostUsd");
    expect(refused.message).toContain("1.000000 of 1.000000 USD left");
  }
  const fits = admitted(await campaign.admitModelCall!({ estimatedInputTokens: 499_999, pricing: PRICING, signal: live() }));
  // 2 micro-USD left after the input: not one output token at 8 per token, but at least one is allowed.
  expect(fits.maxOutputTokens).toBe(1);
  fits.release();
});

test("the output allowance is the smaller of what the tokens left and the cost left allow", async () => {
  // Cost: 1 USD cap, 100,000 input tokens cost 0.2 USD; 0.8 USD buys 100,000 output tokens at 8/M.
  const costBound = createCampaign(limits({ tokens: 1_000_000, costMicroUsd: 1_000_000 }));
  const a = admitted(await costBound.admitModelCall!({ estimatedInputTokens: 100_000, pricing: PRICING, signal: live() }));
  expect(a.maxOutputTokens).toBe(100_000);
  a.release();
  // Tokens: 150,000 − 100,000 = 50,000, below the 100,000 the cost would allow.
  const tokenBound = createCampaign(limits({ tokens: 150_000, costMicroUsd: 1_000_000 }));
  const b = admitted(await tokenBound.admitModelCall!({ estimatedInputTokens: 100_000, pricing: PRICING, signal: live() }));
  expect(b.maxOutputTokens).toBe(50_000);
  b.release();
  // Cost left shrinks as calls are charged: 0.5 USD spent → (0.5 − 0.2) / 8 per token.
  costBound.charge({ costMicroUsd: 500_000 });
  const c = admitted(await costBound.admitModelCall!({ estimatedInputTokens: 100_000, pricing: PRICING, signal: live() }));
  expect(c.maxOutputTokens).toBe(37_500);
  c.release();
  // Free output (price 0): the cost puts no bound on it, only the tokens do.
  const freeOutput = createCampaign(limits({ tokens: 5_000, costMicroUsd: 1_000_000 }));
  const d = admitted(await freeOutput.admitModelCall!({ estimatedInputTokens: 1_000, pricing: { inputPerMillionUsd: 2, outputPerMillionUsd: 0 }, signal: live() }));
  expect(d.maxOutputTokens).toBe(4_000);
  d.release();
  // A cost cap and a call without pricing: no cost bound, and no token cap either — no allowance.
  const unpriced = createCampaign(limits({ costMicroUsd: 1_000_000 }));
  const e = admitted(await unpriced.admitModelCall!({ estimatedInputTokens: 100_000_000, signal: live() }));
  expect(e.maxOutputTokens).toBeUndefined();
  e.release();
});

test("a call cancelled while it waits its turn rejects, and leaves the queue to the others", async () => {
  const campaign = createCampaign(limits({ tokens: 10_000 }));
  const holder = admitted(await campaign.admitModelCall!({ estimatedInputTokens: 10, signal: live() }));
  const controller = new AbortController();
  const cancelled = campaign.admitModelCall!({ estimatedInputTokens: 10, signal: controller.signal });
  const behind = campaign.admitModelCall!({ estimatedInputTokens: 10, signal: live() });
  expect(await settled(cancelled)).toBe(false);
  controller.abort();
  await expect(cancelled).rejects.toThrow();
  expect(await settled(behind)).toBe(false);
  holder.release();
  const next = admitted(await behind);
  next.release();
  // Already cancelled before asking: rejected at once.
  const gone = new AbortController();
  gone.abort();
  await expect(campaign.admitModelCall!({ estimatedInputTokens: 10, signal: gone.signal })).rejects.toThrow();
});

test("admitRun counts runs up to the limit, then says why not", () => {
  const campaign = createCampaign(limits({ runs: 3 }), { runs: 1 });
  expect(campaign.admitRun()).toBeUndefined();
  expect(campaign.admitRun()).toBeUndefined();
  expect(campaign.spent.runs).toBe(3);
  const refusal = campaign.admitRun();
  expect(refusal).toContain("3 runs");
  expect(refusal).toContain("limit 3");
  expect(campaign.spent.runs).toBe(3);
  const open = createCampaign(limits());
  for (let i = 0; i < 50; i++) expect(open.admitRun()).toBeUndefined();
  expect(open.spent.runs).toBe(50);
});
