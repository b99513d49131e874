/**
 * Work-depth gates (pro and ultra): a root run that changed the workspace may not finish until a
 * verification run passes and a separately configured review profile approves the current
 * revision. When the model answers without tool calls, the gate runs what is missing as children
 * (a test_result child, then a review child, routed among the root's canDelegateTo); their
 * findings go back to the model as the next user message, and it gets another round. A later
 * change makes earlier gates stale; a failing command invalidates an earlier pass. Bounded by the
 * preset's repair rounds.
 *
 * Changes are observed, never claimed: in a git repository the revision is a fingerprint of HEAD,
 * the index and working-tree changes (so shell commands and shared-write children count too); out
 * of git only the write tool's completed calls are seen (documented).
 */
import { createHash } from "node:crypto";
import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { FinishVerdict, HookedCall } from "../agent/loop-input.ts";
import type { AgentProfile, Deliverable, EffectiveConfig, WorkDepth } from "../config/schema.ts";
import { WORK_DEPTH_PRESETS, type DepthPolicy } from "../config/work-depth.ts";
import { userMessage } from "../protocol/messages.ts";
import type { ToolResult } from "../tool/define.ts";
import type { Env } from "../util/env.ts";
import { filterOverrides, locateGit, runGit, type Git } from "./delegation/git.ts";
import type { AgentResult } from "./delegation/result.ts";
import { chooseProfile } from "./delegation/routing.ts";
import type { RunDelegation } from "./delegation/types.ts";

/** The gates of a root run at this depth; undefined where the preset has none (flash, medium). */
export function gatesFor(depth: WorkDepth, options: Omit<GateOptions, "policy">): Gates | undefined {
  const policy = WORK_DEPTH_PRESETS[depth];
  return policy.gates.length > 0 ? createGates({ ...options, policy }) : undefined;
}

export type GateOptions = {
  policy: DepthPolicy;
  config: EffectiveConfig;
  root: AgentProfile;
  workspace: string;
  env: Env;
  task: string;
  delegation: RunDelegation;
  /** Notes for people (the coordinator's own text on the run's stream). */
  say(line: string): void;
};

export type Gates = {
  /** Settles once the starting fingerprint is taken: no tool may change the workspace before that. */
  ready(): Promise<void>;
  /** Called after each of the root's tool calls: writes and failing commands move the gates. */
  afterToolCall(call: HookedCall, result: ToolResult): void;
  beforeFinish(signal: AbortSignal): Promise<FinishVerdict>;
};

const GATE_ACCEPTANCE: Record<"test_result" | "review", string> = {
  test_result: "Run the checks that prove the current changes work and report each command with its result",
  review: "Give a verdict (approve or request_changes) on the current changes, with located issues",
};

/** Untracked files hashed by content up to this size; larger ones by size and modification time. */
const UNTRACKED_CONTENT_BYTES = 1024 * 1024;
const MAX_UNTRACKED = 2_000;
/** The most untracked bytes read for one fingerprint; past it, size and time stand in. */
const UNTRACKED_TOTAL_BYTES = 16 * 1024 * 1024;
/** git output is bounded: a diff past this is hashed as far as it goes (the fingerprint still changes with it). */
const MAX_GIT_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * A fingerprint of the workspace's git state — HEAD, the index and working-tree changes, and the
 * untracked files' contents (git's diff does not show those); undefined outside git.
 */
async function gitRevision(git: Git | undefined, workspace: string, signal: AbortSignal): Promise<string | undefined> {
  if (!git) return undefined;
  try {
    // A hostile repository's filter drivers must not run (status and diff would start them); no
    // optional locks, so a fingerprint never contends with the user's own git.
    const base = { cwd: workspace, signal, maxOutputBytes: MAX_GIT_OUTPUT_BYTES };
    const filters = await filterOverrides(git, base);
    if (typeof filters === "string") return undefined;
    const call = { ...base, config: filters };
    const status = await runGit(git, ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all"], call);
    if (status.code !== 0) return undefined;
    const hash = createHash("sha256").update(status.stdout);
    hash.update((await runGit(git, ["rev-parse", "--verify", "-q", "HEAD"], call)).stdout);
    hash.update((await runGit(git, ["--no-optional-locks", "diff", "--binary", "--no-ext-diff", "--no-textconv", "HEAD", "--"], call)).stdout);
    const untracked = (await runGit(git, ["--no-optional-locks", "ls-files", "--others", "--exclude-standard", "-z"], call)).stdout;
    let budget = UNTRACKED_TOTAL_BYTES;
    for (const path of new TextDecoder().decode(untracked).split("\0").filter(Boolean).slice(0, MAX_UNTRACKED)) {
      const file = join(workspace, path);
      try {
        const info = await lstat(file);
        const whole = info.isFile() && info.size <= UNTRACKED_CONTENT_BYTES && info.size <= budget;
        if (whole) budget -= info.size;
        hash.update(path).update(whole ? await readFile(file) : `${info.size}:${info.mtimeMs}`);
      } catch {
        hash.update(`${path}:gone`);
      }
    }
    return hash.digest("hex").slice(0, 16);
  } catch {
    return undefined;
  }
}

export function createGates(options: GateOptions): Gates {
  const { policy, config, root } = options;
  const git = locateGit(options.env, options.workspace);
  // The state the run started from: taken now, while the model thinks about its first step.
  const baseline = gitRevision(git, options.workspace, new AbortController().signal);
  /** Out of git: a counter of observed writes stands for the revision. */
  let writes = 0;
  let verified: string | undefined;
  let approved: string | undefined;
  let rounds = 0;
  const used = new Map<string, number>();

  const revision = async (signal: AbortSignal): Promise<string> => (await gitRevision(git, options.workspace, signal)) ?? `writes:${writes}`;

  async function runGateChild(deliverable: "test_result" | "review", signal: AbortSignal): Promise<AgentResult | string> {
    const route = chooseProfile({ deliverable, parent: root, agents: config.agents, used });
    if (!route.ok) return `no profile can do the ${deliverable === "review" ? "review" : "verification"} gate: ${route.error}`;
    used.set(route.agent.name, (used.get(route.agent.name) ?? 0) + 1);
    options.say(`▸ gate: ${deliverable === "review" ? "review" : "verification"} (${route.agent.name})`);
    try {
      const { result } = await options.delegation.phase(
        {
          id: `gate-${deliverable === "review" ? "review" : "verify"}-${rounds}`,
          agent: route.agent,
          goal: `The task was: ${options.task}\nThe workspace has changed; ${deliverable === "review" ? "review the current changes independently" : "verify the current changes"}.`,
          deliverable: deliverable as Deliverable,
          acceptanceCriteria: [GATE_ACCEPTANCE[deliverable]],
          dependencies: [],
        },
        signal,
      );
      return result;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  const describe = (result: AgentResult) =>
    [
      result.summary,
      ...result.verification.map((v) => `- ${v.command}: ${v.status}`),
      ...(result.issues ?? []).map((issue) => `- [${issue.severity}] ${issue.path ? `${issue.path}${issue.line ? `:${issue.line}` : ""}: ` : ""}${issue.description}`),
      ...(result.problems ?? []).map((p) => `- ${p}`),
    ].join("\n");

  return {
    ready: () => baseline.then(() => undefined),
    afterToolCall(call, result) {
      // Out of git, what the policy classed as a write (the write tool, write-risk extensions) is what is seen.
      if (call.classification.risk === "write" && result.status === "completed") writes += 1;
      // A failing command invalidates an earlier pass (the revision it passed on may be the same).
      if (call.tool === "run" && result.status === "completed" && !/^exit code 0\b/.test(result.output)) verified = undefined;
    },
    async beforeFinish(signal) {
      if (policy.gates.length === 0) return { finish: true };
      const start = await baseline;
      const now = await revision(signal);
      // Nothing changed (a greeting, a read-only answer): no ceremony. Without a starting
      // fingerprint (git failed then), only observed writes count.
      if (now === (start ?? "writes:0") || (start === undefined && writes === 0)) return { finish: true };
      if ((!policy.gates.includes("verification") || verified === now) && (!policy.gates.includes("review") || approved === now)) return { finish: true };
      rounds += 1;
      if (rounds > policy.repairRounds) {
        return { stop: `the work-depth gates (verification and review of the current changes) were not met after ${policy.repairRounds} repair rounds` };
      }
      if (policy.gates.includes("verification") && verified !== now) {
        const result = await runGateChild("test_result", signal);
        if (typeof result === "string") return { stop: result };
        if (result.status !== "completed") {
          return { continueWith: [userMessage(`[gate] Your changes are not verified yet: the verification did not pass (${result.status}).\n${describe(result)}\nFix what it found, then finish again.`)] };
        }
        verified = await revision(signal);
        if (verified !== now) return { continueWith: [userMessage("[gate] The verification changed the workspace; the gates start over for the new state. Review what changed, then finish again.")] };
      }
      if (policy.gates.includes("review") && approved !== now) {
        const result = await runGateChild("review", signal);
        if (typeof result === "string") return { stop: result };
        if (result.status !== "completed" || result.verdict !== "approve") {
          return { continueWith: [userMessage(`[gate] The independent review did not approve the current changes (${result.verdict ?? result.status}).\n${describe(result)}\nAddress the findings, then finish again.`)] };
        }
        approved = now;
      }
      options.say("✓ gates: verified and approved");
      return { finish: true };
    },
  };
}
