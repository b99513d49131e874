import * as z from "zod";
import { workflowGraphProblems } from "./workflows.ts";

// Schemas of ONE configuration file: every field optional where a layer may leave it to a lower
// layer. Every object is strict: a misspelt key is an error, never silently ignored. The types of
// the EFFECTIVE (merged) configuration are written by hand in effective.ts and re-exported below.

export const WORK_DEPTHS = ["flash", "medium", "pro", "ultra"] as const;
export const PERMISSION_MODES = ["read-only", "ask", "accept-edits", "full-access"] as const;
export const PROFILE_TYPES = ["openai", "anthropic", "kimi", "nebius", "openai-compatible"] as const;
export const PROVIDER_TYPES = [
  "openai",
  "anthropic",
  "openai-compatible",
  "kimi",
  "nebius",
  "gateway",
  "openai-codex",
] as const;
export const REASONING_EFFORTS = ["default", "low", "medium", "high", "xhigh", "max", "ultra"] as const;
export const SPEEDS = ["standard", "fast"] as const;
export const CAPABILITIES = ["text", "image", "audio", "file", "tools", "structured-output"] as const;
export const DELIVERABLES = ["analysis", "plan", "patch", "review", "test_result"] as const;
export const WORKSPACE_MODES = ["shared-readonly", "shared-write", "git-worktree", "scratch"] as const;
export const MAX_WORKFLOW_STEP_RETRIES = 3;

export const API_KEY_IN_PROFILE =
  "provider profiles do not accept apiKey; put the key in an environment variable and name it with apiKeyEnv";

const nonEmpty = z.string().min(1);
const posInt = z.number().int().positive();
const nonNegInt = z.number().int().min(0);
const ratio = z.number().gt(0).lt(1);
const bool = z.boolean();

const envVarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    error: "must be the NAME of an environment variable (letters, digits, _), not its value",
  });

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const protocol = new URL(value).protocol;
  return protocol === "http:" || protocol === "https:";
}
const httpUrl = z.string().refine(isHttpUrl, { error: "must be an http:// or https:// URL" });

const headers = z.record(
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "is not a valid HTTP header name" }),
  z.string().regex(/^[^\r\n\0]*$/, { error: "header values cannot contain line breaks" }),
);

/** Names used as keys and references (agents, workflows, profiles): safe in CLI flags and tool names. */
const identifier = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, {
    error: "must start with a letter or digit and use only letters, digits, '.', '_' and '-'",
  });
/** Aliases and skill ids are looser (a model alias may look like `openai/gpt-x`), but never blank. */
const looseName = z.string().regex(/^[^\s\p{Cc}]+$/u, { error: "must be non-empty without spaces" });
const agentName = identifier.refine((name) => name !== "auto", {
  error: '"auto" is reserved for automatic delegate routing',
});
const mcpServerId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, { error: "must use only letters, digits, '_' and '-'" });

/** A present `apiKey` always fails with a message that says where the key belongs instead. */
export const forbiddenApiKey = z.custom<never>(() => false, { error: API_KEY_IN_PROFILE }).optional();

export const providerProfileSchema = z.strictObject({
  type: z.enum(PROFILE_TYPES).optional(),
  baseURL: httpUrl.optional(),
  apiKeyEnv: envVarName.optional(),
  headers: headers.optional(),
  apiKey: forbiddenApiKey,
});

const modelSettingsSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().gt(0).max(1).optional(),
  topK: posInt.optional(),
  maxOutputTokens: posInt.optional(),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  seed: z.number().int().optional(),
  stopSequences: z.array(nonEmpty).optional(),
});

const pricingSchema = z.strictObject({
  inputPerMillionUsd: z.number().min(0),
  outputPerMillionUsd: z.number().min(0),
  cachedInputPerMillionUsd: z.number().min(0).optional(),
});

export const modelSchema = z
  .strictObject({
    provider: nonEmpty,
    model: nonEmpty,
    description: z.string().optional(),
    baseURL: httpUrl.optional(),
    apiKeyEnv: envVarName.optional(),
    headers: headers.optional(),
    settings: modelSettingsSchema.optional(),
    contextWindow: posInt.optional(),
    capabilities: z.array(z.enum(CAPABILITIES)).optional(),
    pricing: pricingSchema.optional(),
    reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
    speed: z.enum(SPEEDS).optional(),
    supportedReasoningEfforts: z.array(z.enum(REASONING_EFFORTS)).min(1).optional(),
    supportedSpeeds: z.array(z.enum(SPEEDS)).min(1).optional(),
  })
  .superRefine((model, ctx) => {
    // A configured default must be one the model declares; max/ultra exist only when declared.
    const effort = model.reasoningEffort;
    const efforts = model.supportedReasoningEfforts;
    if (effort !== undefined && efforts !== undefined && !efforts.includes(effort)) {
      ctx.addIssue({ code: "custom", path: ["reasoningEffort"], message: `"${effort}" is not in supportedReasoningEfforts` });
    } else if ((effort === "max" || effort === "ultra") && efforts === undefined) {
      ctx.addIssue({ code: "custom", path: ["reasoningEffort"], message: `"${effort}" requires supportedReasoningEfforts to list it` });
    }
    if (model.speed !== undefined && model.supportedSpeeds !== undefined && !model.supportedSpeeds.includes(model.speed)) {
      ctx.addIssue({ code: "custom", path: ["speed"], message: `"${model.speed}" is not in supportedSpeeds` });
    }
  });

export const agentSchema = z
  .strictObject({
    description: z.string().optional(),
    model: looseName.optional(),
    prompt: nonEmpty.optional(),
    promptFile: nonEmpty.optional(),
    tools: z.array(nonEmpty).optional(),
    skills: z.array(nonEmpty).optional(),
    mcpServers: z.array(nonEmpty).optional(),
    canDelegateTo: z.array(nonEmpty).optional(),
    accepts: z.array(z.enum(DELIVERABLES)).optional(),
    permissionMode: z.enum(PERMISSION_MODES).optional(),
    workspaceMode: z.enum(WORKSPACE_MODES).optional(),
    maxChildren: nonNegInt.optional(),
    maxSteps: posInt.optional(),
    maxToolCalls: nonNegInt.optional(),
    maxTokens: posInt.optional(),
    timeoutMs: posInt.optional(),
  })
  .superRefine((agent, ctx) => {
    if (agent.prompt !== undefined && agent.promptFile !== undefined) {
      ctx.addIssue({ code: "custom", path: ["promptFile"], message: "set either prompt or promptFile, not both" });
    }
  });

const workflowStepSchema = z.strictObject({
  id: identifier,
  agent: nonEmpty,
  dependsOn: z.array(nonEmpty).optional(),
  maxRetries: z.number().int().min(0).max(MAX_WORKFLOW_STEP_RETRIES).optional(),
});

export const workflowSchema = z
  .strictObject({
    description: z.string().optional(),
    // One element union (not a union of two list types) so a bad element is reported where it is.
    steps: z.array(z.union([nonEmpty, workflowStepSchema])).min(1),
  })
  .superRefine((workflow, ctx) => {
    for (const problem of workflowGraphProblems(workflow.steps)) {
      ctx.addIssue({ code: "custom", path: ["steps", ...problem.path], message: problem.message });
    }
  });

const contextModeSchema = z.union([
  z.enum(["none", "summary", "full", "recent"], {
    error: (issue) =>
      `invalid value ${JSON.stringify(issue.input)} (allowed: none, summary, full, recent, or {"type": "recent", "turns": N})`,
  }),
  z.strictObject({ type: z.literal("recent"), turns: posInt }),
]);

const multiAgentSchema = z.strictObject({
  maxDepth: nonNegInt.optional(),
  maxConcurrent: posInt.optional(),
  maxChildrenPerAgent: nonNegInt.optional(),
  defaultContext: contextModeSchema.optional(),
  cancelChildrenWithParent: bool.optional(),
  maxRetries: nonNegInt.optional(),
});

const limitsSchema = z.strictObject({
  maxDepth: nonNegInt.optional(),
  maxChildrenPerRun: nonNegInt.optional(),
  runTimeoutMs: posInt.optional(),
  toolTimeoutMs: posInt.optional(),
  // Not in the original spec: how long a model stream may stay silent (no first token, or a gap) before it is abandoned and retried.
  streamIdleTimeoutMs: posInt.optional(),
  maxAttachmentBytes: posInt.optional(),
  maxCampaignTokens: posInt.optional(),
  maxCostUsd: z.number().positive().optional(),
});

const compactionSchema = z.strictObject({
  enabled: bool.optional(),
  triggerRatio: z.number().gt(0).max(1).optional(),
  targetRatio: ratio.optional(),
  recentFraction: z.number().min(0).lt(1).optional(),
  minimumRecentTurns: nonNegInt.optional(),
  keepRecentTurns: nonNegInt.optional(),
  maxSummaryTokens: posInt.optional(),
  reservedOutputTokens: nonNegInt.optional(),
  safetyBufferTokens: nonNegInt.optional(),
  rebaseAfter: posInt.optional(),
  rebaseAfterValidationFailures: posInt.optional(),
  pruneToolOutputs: bool.optional(),
});

const contextSchema = z.strictObject({
  fallbackWindowTokens: posInt.optional(),
  compaction: compactionSchema.optional(),
});

const storageSchema = z.strictObject({ enabled: bool.optional(), path: nonEmpty.optional() });

const goalsSchema = z.strictObject({
  enabled: bool.optional(),
  maxIterations: posInt.optional(),
  maxNoProgressIterations: posInt.optional(),
  iterationDelayMs: nonNegInt.optional(),
  autoResume: bool.optional(),
});

const skillSchema = z.union([nonEmpty, z.strictObject({ path: nonEmpty.optional(), enabled: bool.optional() })]);

const oauthSchema = z.union([
  bool,
  z.strictObject({
    clientId: nonEmpty.optional(),
    clientSecretEnv: envVarName.optional(),
    scopes: z.array(nonEmpty).optional(),
    callbackPort: z.number().int().min(1).max(65535).optional(),
    allowLegacyDiscovery: bool.optional(),
    allowPrivateNetwork: bool.optional(),
  }),
]);

// command/url are optional per file so a higher layer can flip `enabled` alone; the merged entry
// must have them (checked after merging).
const mcpServerSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("stdio"),
    command: nonEmpty.optional(),
    args: z.array(z.string()).optional(),
    cwd: nonEmpty.optional(),
    env: z.record(envVarName, z.string()).optional(),
    enabled: bool.optional(),
    startupTimeoutMs: posInt.optional(),
  }),
  z.strictObject({
    type: z.literal("http"),
    url: httpUrl.optional(),
    headers: headers.optional(),
    enabled: bool.optional(),
    startupTimeoutMs: posInt.optional(),
    oauth: oauthSchema.optional(),
  }),
]);

const webSearchSchema = z.strictObject({
  provider: z.literal("brave").optional(),
  apiKeyEnv: envVarName.optional(),
  safeSearch: z.enum(["off", "moderate", "strict"]).optional(),
  country: nonEmpty.optional(),
  searchLang: nonEmpty.optional(),
  uiLang: nonEmpty.optional(),
  count: z.number().int().min(1).max(20).optional(),
});

export const configFileSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal([1, 2]).optional(),
  defaultAgent: agentName.optional(),
  workDepth: z.enum(WORK_DEPTHS).optional(),
  permissionMode: z.enum(PERMISSION_MODES).optional(),
  providers: z.record(identifier, providerProfileSchema).optional(),
  models: z.record(looseName, modelSchema).optional(),
  agents: z.record(agentName, agentSchema).optional(),
  workflows: z.record(identifier, workflowSchema).optional(),
  multiAgent: multiAgentSchema.optional(),
  limits: limitsSchema.optional(),
  context: contextSchema.optional(),
  storage: storageSchema.optional(),
  goals: goalsSchema.optional(),
  skills: z.record(looseName, skillSchema).optional(),
  mcp: z.record(mcpServerId, mcpServerSchema).optional(),
  plugins: z.array(nonEmpty).optional(),
  webSearch: webSearchSchema.optional(),
});

/** One configuration file as validated (before migration, path resolution and merging). */
export type ConfigFile = z.infer<typeof configFileSchema>;
export type ProviderProfileFile = z.infer<typeof providerProfileSchema>;
export type ModelFile = z.infer<typeof modelSchema>;
export type AgentFile = z.infer<typeof agentSchema>;
export type WorkflowFile = z.infer<typeof workflowSchema>;
export type WorkflowStepFile = z.infer<typeof workflowStepSchema>;
export type SkillFile = z.infer<typeof skillSchema>;
export type McpServerFile = z.infer<typeof mcpServerSchema>;

// The effective (merged) configuration types live in effective.ts; they are part of this module's API.
export type {
  WorkDepth,
  PermissionMode,
  ProviderType,
  ProviderProfileType,
  ReasoningEffort,
  Speed,
  ModelCapability,
  Deliverable,
  WorkspaceMode,
  ModelSettings,
  ModelPricing,
  ResolvedModel,
  AgentProfile,
  WorkflowStep,
  Workflow,
  ProviderProfile,
  DefaultContext,
  MultiAgentSettings,
  Limits,
  CompactionSettings,
  ContextSettings,
  GoalSettings,
  McpOAuthSettings,
  McpStdioServer,
  McpHttpServer,
  McpServer,
  WebSearchSettings,
  EffectiveConfig,
} from "./effective.ts";
