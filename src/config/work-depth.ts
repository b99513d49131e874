import type { AgentProfile, EffectiveConfig, MultiAgentSettings, WorkDepth } from "./effective.ts";

// Work depth is an allowance, not a quota: each preset only NARROWS what the agent profiles and the
// global multiAgent/limits settings already allow. Every function here takes the smaller of the
// preset value and the configured ceiling, so no preset can widen an administrator's cap.

/** The bounded runtime policy one work-depth preset selects. */
export type DepthPolicy = {
  /** Model steps per run. */
  steps: number;
  /** Tool-call attempts per run. */
  toolCalls: number;
  /** Implementation/verification cycles the gate controller may start after findings. */
  repairRounds: number;
  /** Runs in the whole campaign: the root, child launches, retries and resumed children. */
  totalRuns: number;
  concurrentChildren: number;
  delegationDepth: number;
  /** Wall-clock length of the whole campaign. */
  campaignMs: number;
  /** What must pass after observed changes before the root may finish. */
  gates: Array<"verification" | "review">;
};

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

function preset(policy: DepthPolicy): DepthPolicy {
  Object.freeze(policy.gates);
  return Object.freeze(policy);
}

export const WORK_DEPTH_PRESETS: Readonly<Record<WorkDepth, DepthPolicy>> = Object.freeze({
  flash: preset({ steps: 8, toolCalls: 32, repairRounds: 1, totalRuns: 1, concurrentChildren: 1, delegationDepth: 0, campaignMs: 2 * MINUTE_MS, gates: [] }),
  medium: preset({ steps: 24, toolCalls: 96, repairRounds: 2, totalRuns: 6, concurrentChildren: 3, delegationDepth: 2, campaignMs: 30 * MINUTE_MS, gates: [] }),
  pro: preset({ steps: 64, toolCalls: 256, repairRounds: 6, totalRuns: 24, concurrentChildren: 6, delegationDepth: 4, campaignMs: 2 * HOUR_MS, gates: ["verification", "review"] }),
  ultra: preset({ steps: 100, toolCalls: 500, repairRounds: 12, totalRuns: 64, concurrentChildren: 8, delegationDepth: 8, campaignMs: 8 * HOUR_MS, gates: ["verification", "review"] }),
});

/** The smaller of a preset value and an optional configured cap (an unset cap leaves the preset). */
function capped(presetValue: number, cap: number | undefined): number {
  return cap === undefined ? presetValue : Math.min(presetValue, cap);
}

/**
 * Per-run ceilings of one run of `agent` at `depth`: the agent's own maxSteps/maxToolCalls when
 * smaller than the preset (an explicit administrator cap), else the preset.
 */
export function runCeilings(agent: Pick<AgentProfile, "maxSteps" | "maxToolCalls">, depth: WorkDepth): { maxSteps: number; maxToolCalls: number } {
  const policy = WORK_DEPTH_PRESETS[depth];
  return { maxSteps: capped(policy.steps, agent.maxSteps), maxToolCalls: capped(policy.toolCalls, agent.maxToolCalls) };
}

/**
 * Root-wide ceilings of one campaign. Total runs come from the preset alone (no global setting
 * bounds them); concurrency, delegation depth and duration are the smaller of the preset and the
 * global multiAgent.maxConcurrent, multiAgent.maxDepth and limits.runTimeoutMs.
 */
export function campaignCeilings(
  config: Pick<EffectiveConfig, "multiAgent" | "limits">,
  depth: WorkDepth,
): { totalRuns: number; concurrentChildren: number; delegationDepth: number; durationMs: number } {
  const policy = WORK_DEPTH_PRESETS[depth];
  return {
    totalRuns: policy.totalRuns,
    concurrentChildren: Math.min(policy.concurrentChildren, config.multiAgent.maxConcurrent),
    delegationDepth: Math.min(policy.delegationDepth, config.multiAgent.maxDepth),
    durationMs: Math.min(policy.campaignMs, config.limits.runTimeoutMs),
  };
}

/** How many children one run of `agent` may start: its maxChildren intersected with multiAgent.maxChildrenPerAgent. */
export function childCeiling(agent: Pick<AgentProfile, "maxChildren">, multiAgent: MultiAgentSettings): number {
  return capped(multiAgent.maxChildrenPerAgent, agent.maxChildren);
}
