import type { CampaignCharge } from "../agent/loop-input.ts";
import type { AgentProfile } from "../config/schema.ts";
import type { Roots } from "../security/roots.ts";

/**
 * Where a run sits: its own id, its session, its parent and root, its depth,
 * and the budget it shares with every run of its root campaign. A root run
 * is its own root at depth 0; the delegation issue starts children from here.
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

/** What a campaign may spend in total; null = no limit of that kind. */
export type CampaignLimits = { steps: number | null; toolCalls: number | null; tokens: number | null; runs: number | null; deadline: Date };
export type CampaignSpent = { steps: number; toolCalls: number; tokens: number; runs: number };

/** Counters shared by the root run and all its children (one object, passed by reference). */
export type Campaign = CampaignCharge & { limits: CampaignLimits; spent: CampaignSpent; admitRun(): string | undefined };

export function createCampaign(limits: CampaignLimits, spent: Partial<CampaignSpent> = {}): Campaign {
  const total: CampaignSpent = { steps: 0, toolCalls: 0, tokens: 0, runs: 0, ...spent };
  return {
    limits,
    spent: total,
    charge(delta) {
      total.steps += delta.steps ?? 0;
      total.toolCalls += delta.toolCalls ?? 0;
      total.tokens += delta.tokens ?? 0;
    },
    exhausted() {
      if (limits.tokens !== null && total.tokens > limits.tokens) return `the campaign spent ${total.tokens} tokens, past its limit of ${limits.tokens}`;
      return undefined;
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
