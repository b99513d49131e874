import type {
  CAPABILITIES,
  DELIVERABLES,
  PERMISSION_MODES,
  PROFILE_TYPES,
  PROVIDER_TYPES,
  REASONING_EFFORTS,
  SPEEDS,
  WORK_DEPTHS,
  WORKSPACE_MODES,
} from "./schema.ts";

// The EFFECTIVE configuration the runtime consumes: all layers merged, defaults applied, relative
// paths absolute and provider profiles materialized into concrete models. Re-exported by schema.ts.

export type WorkDepth = (typeof WORK_DEPTHS)[number];
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export type ProviderType = (typeof PROVIDER_TYPES)[number];
export type ProviderProfileType = (typeof PROFILE_TYPES)[number];
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
export type Speed = (typeof SPEEDS)[number];
export type ModelCapability = (typeof CAPABILITIES)[number];
export type Deliverable = (typeof DELIVERABLES)[number];
export type WorkspaceMode = (typeof WORKSPACE_MODES)[number];

export type ModelSettings = {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  stopSequences?: string[];
};

export type ModelPricing = {
  inputPerMillionUsd: number;
  outputPerMillionUsd: number;
  cachedInputPerMillionUsd?: number;
};

export type ResolvedModel = {
  alias: string;
  type: ProviderType;
  /** The provider profile the model named, when it named one instead of a built-in type. */
  profile?: string;
  model: string;
  description?: string;
  baseURL?: string;
  apiKeyEnv?: string;
  headers: Record<string, string>;
  settings: ModelSettings;
  contextWindow?: number;
  capabilities: ModelCapability[];
  pricing?: ModelPricing;
  reasoningEffort?: ReasoningEffort;
  speed?: Speed;
  supportedReasoningEfforts?: ReasoningEffort[];
  supportedSpeeds?: Speed[];
};

export type AgentProfile = {
  name: string;
  description?: string;
  model: string;
  prompt?: string;
  /** Absolute. */
  promptFile?: string;
  tools: string[];
  skills: string[];
  mcpServers: string[];
  canDelegateTo: string[];
  accepts: Deliverable[];
  permissionMode?: PermissionMode;
  workspaceMode: WorkspaceMode;
  maxChildren?: number;
  maxSteps?: number;
  maxToolCalls?: number;
  maxTokens?: number;
  timeoutMs?: number;
};

export type WorkflowStep = { id: string; agent: string; dependsOn: string[]; maxRetries: number };
export type Workflow = { description?: string; steps: WorkflowStep[] };

export type ProviderProfile = {
  type: ProviderProfileType;
  baseURL?: string;
  apiKeyEnv?: string;
  headers: Record<string, string>;
};

/** `"recent"` in a file is normalized to six turns, as the spec describes. */
export type DefaultContext = "none" | "summary" | "full" | { type: "recent"; turns: number };

export type MultiAgentSettings = {
  maxDepth: number;
  maxConcurrent: number;
  maxChildrenPerAgent: number;
  defaultContext: DefaultContext;
  cancelChildrenWithParent: boolean;
  maxRetries: number;
};

export type Limits = {
  runTimeoutMs: number;
  toolTimeoutMs: number;
  streamIdleTimeoutMs: number;
  maxAttachmentBytes: number;
  maxCampaignTokens?: number;
  maxCostUsd?: number;
};

export type CompactionSettings = {
  enabled: boolean;
  triggerRatio: number;
  targetRatio: number;
  recentFraction: number;
  minimumRecentTurns: number;
  keepRecentTurns: number;
  maxSummaryTokens: number;
  reservedOutputTokens: number;
  safetyBufferTokens: number;
  rebaseAfter: number;
  rebaseAfterValidationFailures: number;
  pruneToolOutputs: boolean;
};

export type ContextSettings = { fallbackWindowTokens: number; compaction: CompactionSettings };

export type GoalSettings = {
  enabled: boolean;
  maxIterations: number;
  maxNoProgressIterations: number;
  iterationDelayMs: number;
  autoResume: boolean;
};

export type McpOAuthSettings = {
  clientId?: string;
  clientSecretEnv?: string;
  scopes?: string[];
  callbackPort?: number;
  allowLegacyDiscovery?: boolean;
  allowPrivateNetwork?: boolean;
};

export type McpStdioServer = {
  type: "stdio";
  /** Absolute when the file wrote `./…` or `../…`; a bare name is looked up on the safe PATH. */
  command: string;
  args: string[];
  /** Absolute; the declaring file's directory when the file gave none. */
  cwd: string;
  env: Record<string, string>;
  enabled: boolean;
  /** How long it may take to start and list its tools (default 10 s); a run goes on without it after that. */
  startupTimeoutMs?: number;
};

export type McpHttpServer = {
  type: "http";
  url: string;
  headers: Record<string, string>;
  enabled: boolean;
  startupTimeoutMs?: number;
  oauth: boolean | McpOAuthSettings;
};

export type McpServer = McpStdioServer | McpHttpServer;

export type WebSearchSettings = {
  provider: "brave";
  apiKeyEnv: string;
  safeSearch: "off" | "moderate" | "strict";
  country?: string;
  searchLang?: string;
  uiLang?: string;
  count?: number;
};

export type EffectiveConfig = {
  version: 2;
  defaultAgent: string;
  workDepth: WorkDepth;
  permissionMode: PermissionMode;
  providers: Record<string, ProviderProfile>;
  models: Record<string, ResolvedModel>;
  agents: Record<string, AgentProfile>;
  workflows: Record<string, Workflow>;
  multiAgent: MultiAgentSettings;
  limits: Limits;
  context: ContextSettings;
  /** `path` is a bare file name inside the private state directory. */
  storage: { enabled: boolean; path: string };
  goals: GoalSettings;
  /** `path` is absolute. */
  skills: Record<string, { path: string; enabled: boolean }>;
  mcp: Record<string, McpServer>;
  /** Absolute paths, in layer order, without duplicates. */
  plugins: string[];
  webSearch: WebSearchSettings;
};
