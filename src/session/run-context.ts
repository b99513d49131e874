import type { CampaignCharge, ModelCallAdmission } from "../agent/loop-input.ts";
import type { AgentProfile } from "../config/schema.ts";
import type { Roots } from "../security/roots.ts";
import { createGate } from "./delegation/slots.ts";

/**
 * Where a run sits: its own id, its session, its parent and root, its depth,
 * and the budget it shares with every run of its root campaign. A root run
 * is its own root at depth 0; delegation starts children from here.
 */
export type RunPlace = {
  runId: string;
  sessionId: string;
  parentId: string | null;
  rootId: string;
  depth: number;
  agent: AgentProfile;
  roots: Roots;
  campaign: Campaign;
};

/** What a campaign may spend in total; null = no limit of that kind. Cost is integer micro-USD. */
export type CampaignLimits = {
  steps: number | null;
  toolCalls: number | null;
  tokens: number | null;
  costMicroUsd: number | null;
  runs: number | null;
  deadline: Date;
};
export type CampaignSpent = { steps: number; toolCalls: number; tokens: number; costMicroUsd: number; runs: number };

/** Counters shared by the root run and all its children (one object, passed by reference). */
export type Campaign = CampaignCharge & { limits: CampaignLimits; spent: CampaignSpent; admitRun(): string | undefined };

const MICRO = 1_000_000;
const usd = (micro: number) => (micro / MICRO).toFixed(6);

export function createCampaign(limits: CampaignLimits, spent: Partial<CampaignSpent> = {}): Campaign {
  const total: CampaignSpent = { steps: 0, toolCalls: 0, tokens: 0, costMicroUsd: 0, runs: 0, ...spent };
  const capped = limits.tokens !== null || limits.costMicroUsd !== null;
  // With a cap, model calls of the whole campaign pass one at a time: each allowance is computed
  // after the previous call's reported usage was charged, so siblings cannot overspend together.
  const queue = createGate(1);
  return {
    limits,
    spent: total,
    capped,
    charge(delta) {
      total.steps += delta.steps ?? 0;
      total.toolCalls += delta.toolCalls ?? 0;
      total.tokens += delta.tokens ?? 0;
      total.costMicroUsd += delta.costMicroUsd ?? 0;
    },
    exhausted() {
      if (limits.tokens !== null && total.tokens >= limits.tokens) {
        return { guard: "max_tokens", message: `the campaign spent ${total.tokens} tokens of its ${limits.tokens} (limits.maxCampaignTokens)` };
      }
      if (limits.costMicroUsd !== null && total.costMicroUsd >= limits.costMicroUsd) {
        return { guard: "max_cost", message: `the campaign spent ${usd(total.costMicroUsd)} USD of its ${usd(limits.costMicroUsd)} (limits.maxCostUsd)` };
      }
      return undefined;
    },
    async admitModelCall(request): Promise<ModelCallAdmission> {
      if (!capped) return { ok: true, release: () => {} };
      const lease = await queue.acquire(request.signal);
      const refuse = (guard: "max_tokens" | "max_cost", message: string): ModelCallAdmission => {
        lease.release();
        return { ok: false, guard, message };
      };
      let maxOutputTokens = Number.POSITIVE_INFINITY;
      if (limits.tokens !== null) {
        const left = limits.tokens - total.tokens;
        if (request.estimatedInputTokens >= left) {
          return refuse("max_tokens", `the campaign's token budget cannot fit another request: ${Math.max(0, left)} of ${limits.tokens} tokens left, about ${request.estimatedInputTokens} needed for its input (limits.maxCampaignTokens)`);
        }
        maxOutputTokens = left - request.estimatedInputTokens;
      }
      if (limits.costMicroUsd !== null && request.pricing) {
        const left = limits.costMicroUsd - total.costMicroUsd;
        const inputCost = request.estimatedInputTokens * request.pricing.inputPerMillionUsd;
        if (inputCost >= left) {
          return refuse("max_cost", `the campaign's cost budget cannot fit another request: ${usd(Math.max(0, left))} of ${usd(limits.costMicroUsd)} USD left (limits.maxCostUsd)`);
        }
        if (request.pricing.outputPerMillionUsd > 0) maxOutputTokens = Math.min(maxOutputTokens, Math.floor((left - inputCost) / request.pricing.outputPerMillionUsd));
      }
      return { ok: true, ...(Number.isFinite(maxOutputTokens) ? { maxOutputTokens: Math.max(1, maxOutputTokens) } : {}), release: () => lease.release() };
    },
    /** Counts one more run of the campaign; says why not when the total is spent. */
    admitRun() {
      if (limits.runs !== null && total.runs >= limits.runs) return `the campaign already started ${total.runs} runs (limit ${limits.runs})`;
      total.runs += 1;
      return undefined;
    },
  };
}

/** The envelope fields a run's events carry beyond their own run id: children name their parent and root. */
export function eventStamp(place: Pick<RunPlace, "parentId" | "rootId">): Record<string, string> | undefined {
  return place.parentId === null ? undefined : { parentRunId: place.parentId, rootRunId: place.rootId };
}
