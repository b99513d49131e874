import { zeroEnv, type Env } from "../util/env.ts";
import type { AgentFile, ConfigFile } from "./schema.ts";

// The built-in layer: the README's example configuration, with every agent on the one `default`
// alias (decisions.md "Defaults"). Built-in agents carry no prompt: the runtime supplies the
// built-in prompt text by agent name. A fresh object per call, so no caller can mutate another's.

export const DEFAULT_MODEL_ALIAS = "default";
export const DEFAULT_GATEWAY_MODEL = "openai/gpt-5.3-codex";
export const BUILT_IN_AGENT_NAMES = ["build", "plan", "explore", "implement", "verify", "review", "vision"] as const;

/** The per-run emergency ceilings of every agent that sets none; the work depth normally binds first. */
export const EMERGENCY_TOOL_CALLS = 500;
export const DEFAULT_MAX_STEPS = 100;

function specialist(fields: AgentFile): AgentFile {
  return {
    model: DEFAULT_MODEL_ALIAS,
    skills: ["*"],
    maxChildren: 0,
    maxSteps: DEFAULT_MAX_STEPS,
    maxToolCalls: EMERGENCY_TOOL_CALLS,
    ...fields,
  };
}

/** The built-in defaults as a configuration layer; `ZERO_CLI_MODEL` replaces the default alias's model id. */
export function builtInDefaults(env: Env): ConfigFile {
  return {
    version: 2,
    defaultAgent: "build",
    workDepth: "medium",
    permissionMode: "ask",
    providers: {},
    models: {
      [DEFAULT_MODEL_ALIAS]: {
        provider: "gateway",
        model: zeroEnv(env, "MODEL") ?? DEFAULT_GATEWAY_MODEL,
        description: "Vercel AI Gateway model used by every built-in agent",
        capabilities: ["text", "image", "file", "tools"],
      },
    },
    agents: {
      build: specialist({
        description: "General-purpose root orchestrator",
        tools: ["read", "write", "run", "find", "search", "delegate"],
        canDelegateTo: ["plan", "explore", "implement", "verify", "review", "vision"],
        accepts: ["patch", "test_result"],
        workspaceMode: "shared-write",
        maxChildren: 64,
        maxTokens: 200000,
        timeoutMs: 28800000,
      }),
      plan: specialist({
        description: "Read-only planner",
        tools: ["read", "find", "delegate"],
        canDelegateTo: ["explore"],
        accepts: ["plan"],
        permissionMode: "read-only",
        workspaceMode: "shared-readonly",
        maxChildren: 64,
      }),
      explore: specialist({
        description: "Repository explorer",
        tools: ["read", "find"],
        accepts: ["analysis"],
        permissionMode: "read-only",
        workspaceMode: "shared-readonly",
      }),
      implement: specialist({
        description: "Bounded implementation specialist",
        tools: ["read", "write", "find", "run", "search"],
        accepts: ["patch"],
        permissionMode: "accept-edits",
        workspaceMode: "git-worktree",
      }),
      verify: specialist({
        description: "Verification and test specialist",
        tools: ["read", "find", "run"],
        accepts: ["test_result"],
        permissionMode: "ask",
        workspaceMode: "shared-write",
      }),
      review: specialist({
        description: "Independent reviewer",
        tools: ["read", "find"],
        accepts: ["review"],
        permissionMode: "read-only",
        workspaceMode: "shared-readonly",
      }),
      // No `accepts`: a capability specialist reached by media routing, not a generic analyst.
      vision: specialist({
        description: "Image and document specialist",
        tools: ["read"],
        permissionMode: "read-only",
        workspaceMode: "shared-readonly",
      }),
    },
    workflows: {
      feature: { description: "Plan, implement, then review", steps: ["plan", "build", "review"] },
    },
    multiAgent: {
      maxDepth: 8,
      maxConcurrent: 8,
      maxChildrenPerAgent: 64,
      defaultContext: "summary",
      cancelChildrenWithParent: true,
      maxRetries: 1,
    },
    limits: { runTimeoutMs: 28800000, toolTimeoutMs: 120000, streamIdleTimeoutMs: 300000, maxAttachmentBytes: 10485760 },
    context: {
      fallbackWindowTokens: 128000,
      compaction: {
        enabled: true,
        triggerRatio: 0.8,
        targetRatio: 0.45,
        recentFraction: 0.15,
        minimumRecentTurns: 2,
        keepRecentTurns: 6,
        maxSummaryTokens: 4096,
        reservedOutputTokens: 8192,
        safetyBufferTokens: 4096,
        rebaseAfter: 4,
        rebaseAfterValidationFailures: 2,
        pruneToolOutputs: true,
      },
    },
    storage: { enabled: true, path: "zero-cli.db" },
    goals: { enabled: true, maxIterations: 64, maxNoProgressIterations: 3, iterationDelayMs: 0, autoResume: true },
    skills: {},
    mcp: {},
    plugins: [],
    webSearch: { provider: "brave", apiKeyEnv: "BRAVE_SEARCH_API_KEY", safeSearch: "moderate" },
  };
}
