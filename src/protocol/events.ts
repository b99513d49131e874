import { z } from "zod";

/**
 * The one internal event stream. The runtime emits these; every surface (run
 * --json, stream-json, host, ACP, TUI) is a mapper from them. `zero run --json`
 * writes them verbatim, so changing a field here changes a public output:
 * extend, don't rename.
 */

export const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof usageSchema>;

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: 0, cachedInputTokens: 0 };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
  };
}

/** What a tool call may do, as policy sees it. */
export const riskSchema = z.enum(["read", "write", "execute", "network", "delegate"]);
export type Risk = z.infer<typeof riskSchema>;

/** Finer than risk, so "always allow" for an edit never covers a delete. */
export const operationSchema = z.enum([
  "read",
  "read-secret",
  "write-edit",
  "write-delete",
  "write-move",
  "write-sensitive",
  "execute",
  "network",
  "delegate",
]);
export type Operation = z.infer<typeof operationSchema>;

export const permissionModeSchema = z.enum(["read-only", "ask", "accept-edits", "full-access"]);

export const runStatusSchema = z.enum(["completed", "failed", "limit", "cancelled"]);
export type RunStatus = z.infer<typeof runStatusSchema>;

/** Why a run stopped early; `null` when the model simply finished. */
export const stopReasonSchema = z.enum([
  "max_steps",
  "max_tool_calls",
  "max_tokens",
  /** The campaign's cost cap (limits.maxCostUsd). */
  "max_cost",
  /** Work-depth gates (pro/ultra) still unmet after the preset's repair rounds. */
  "gates",
  "repetition",
  "deadline",
  /** A lifecycle plugin's `shouldStop` ended the run (status limit, exit 4). */
  "plugin",
  "cancelled",
  "provider_error",
  /** The model refused the request (a refusal stop reason or a content filter): exit 3. */
  "refusal",
  "internal_error",
]);
export type StopReason = z.infer<typeof stopReasonSchema>;

export const providerErrorCategorySchema = z.enum([
  "auth",
  "rate_limit",
  /** A spent quota or a billing problem (429 insufficient_quota, 402): not retried. */
  "quota",
  "unavailable",
  "context_overflow",
  "bad_response",
  "invalid_request",
  /** The model refused to answer; the message carries the provider's explanation. */
  "refusal",
]);
export type ProviderErrorCategory = z.infer<typeof providerErrorCategorySchema>;

export const toolStatusSchema = z.enum(["completed", "failed", "denied", "cancelled"]);
export type ToolStatus = z.infer<typeof toolStatusSchema>;

const base = {
  eventId: z.uuid(),
  sequence: z.number().int().positive(),
  timestamp: z.iso.datetime(),
  runId: z.string(),
};

const modelIdentity = z.object({ alias: z.string(), provider: z.string(), model: z.string(), profile: z.string().optional() });

export const runStartedSchema = z.object({
  ...base,
  type: z.literal("run.started"),
  sessionId: z.string(),
  rootRunId: z.string(),
  parentRunId: z.string().nullable(),
  surface: z.enum(["cli", "tui", "acp", "host", "exec"]),
  task: z.string(),
  agent: z.string(),
  model: modelIdentity,
  cwd: z.string(),
  roots: z.array(z.string()),
  permissionMode: permissionModeSchema,
  workDepth: z.enum(["flash", "medium", "pro", "ultra"]),
  depth: z.number().int().nonnegative(),
  reasoningEffort: z.string().nullable(),
  speed: z.string().nullable(),
  budgets: z.object({
    maxSteps: z.number().int().positive(),
    maxToolCalls: z.number().int().nonnegative(),
    toolTimeoutMs: z.number().int().positive(),
    maxTokens: z.number().int().positive().nullable(),
    timeoutMs: z.number().int().positive(),
    deadline: z.iso.datetime(),
  }),
});

export const stepStartedSchema = z.object({ ...base, type: z.literal("step.started"), step: z.number().int().positive() });

export const messageDeltaSchema = z.object({
  ...base,
  type: z.literal("message.delta"),
  step: z.number().int().positive(),
  text: z.string(),
});

export const reasoningDeltaSchema = z.object({
  ...base,
  type: z.literal("reasoning.delta"),
  step: z.number().int().positive(),
  text: z.string(),
});

/**
 * What makes a call risky beyond its operation, for surfaces to show: `shell` (runs a command),
 * `network` (reaches other machines — a URL read, a search, a command like `curl` or `git push`),
 * `secret` (touches a secret-like file).
 */
export const callCategorySchema = z.enum(["shell", "network", "secret"]);
export type CallCategory = z.infer<typeof callCategorySchema>;

export const toolRequestedSchema = z.object({
  ...base,
  type: z.literal("tool.requested"),
  step: z.number().int().positive(),
  callId: z.string(),
  tool: z.string(),
  input: z.unknown(),
  risk: riskSchema.nullable(),
  operation: operationSchema.nullable(),
  /** What the call acts on (a canonical path, a command, a URL's origin and path); `null` when unknown. */
  target: z.string().nullable().optional(),
  categories: z.array(callCategorySchema).nullable().optional(),
});

export const permissionRequestedSchema = z.object({
  ...base,
  type: z.literal("permission.requested"),
  callId: z.string(),
  tool: z.string(),
  risk: riskSchema,
  operation: operationSchema,
  permissionMode: permissionModeSchema,
  reason: z.string(),
  /** What the call acts on; an "always" answer covers this target only. */
  target: z.string().optional(),
  categories: z.array(callCategorySchema).optional(),
});

export const permissionDecidedSchema = z.object({
  ...base,
  type: z.literal("permission.decided"),
  callId: z.string(),
  tool: z.string(),
  decision: z.enum(["allow", "deny"]),
  /** `scope`: outside a delegated task's path scope; `mode`: decided by the permission mode; `once`/`always`: a responder answered; `session`: an earlier "always"; `no-responder`: headless; `failed`: asking failed. */
  source: z.enum(["mode", "once", "always", "session", "no-responder", "failed", "scope"]),
  reason: z.string(),
});

export const toolStartedSchema = z.object({ ...base, type: z.literal("tool.started"), callId: z.string(), tool: z.string() });

export const toolProgressSchema = z.object({
  ...base,
  type: z.literal("tool.progress"),
  callId: z.string(),
  tool: z.string(),
  message: z.string(),
});

export const toolCompletedSchema = z.object({
  ...base,
  type: z.literal("tool.completed"),
  callId: z.string(),
  tool: z.string(),
  status: toolStatusSchema,
  /** The text the model receives (bounded). */
  output: z.string(),
  truncated: z.boolean(),
  durationMs: z.number().nonnegative(),
  /** A unified diff of what the call changed (write), for surfaces to show. */
  diff: z.string().optional(),
  /** How many secrets the redaction pass removed from this result, and of which kinds. */
  redactions: z.object({ count: z.number().int().positive(), kinds: z.record(z.string(), z.number().int().positive()) }).optional(),
});

export const guardTriggeredSchema = z.object({
  ...base,
  type: z.literal("guard.triggered"),
  guard: z.enum(["max_steps", "max_tool_calls", "max_tokens", "max_cost", "gates", "repetition", "deadline", "plugin"]),
  message: z.string(),
});

export const usageUpdatedSchema = z.object({
  ...base,
  type: z.literal("usage.updated"),
  step: z.number().int().positive(),
  stepUsage: usageSchema,
  usage: usageSchema,
  /** What the run's calls cost so far, in USD (priced models only: configured `pricing`). */
  costUsd: z.number().nonnegative().optional(),
});

export const stepCompletedSchema = z.object({
  ...base,
  type: z.literal("step.completed"),
  step: z.number().int().positive(),
  finishReason: z.string(),
  toolCalls: z.number().int().nonnegative(),
});

export const providerRetrySchema = z.object({
  ...base,
  type: z.literal("provider.retry"),
  step: z.number().int().positive(),
  /** The attempt about to be made (2 = the first retry). */
  attempt: z.number().int().min(2),
  maxAttempts: z.number().int().min(2),
  delayMs: z.number().nonnegative(),
  /**
   * True when the failed attempt had already streamed deltas (text, reasoning): surfaces showed
   * output that the retry discards (no tool ran: tools run after a step). Always set by this
   * version; absent in events recorded before it.
   */
  discardedOutput: z.boolean().optional(),
  error: z.object({
    category: providerErrorCategorySchema,
    message: z.string(),
    statusCode: z.number().int().nullable(),
  }),
});

export const runFailedSchema = z.object({
  ...base,
  type: z.literal("run.failed"),
  error: z.object({
    kind: z.enum(["provider", "internal"]),
    category: providerErrorCategorySchema.nullable(),
    message: z.string(),
    statusCode: z.number().int().nullable(),
    retryAfterMs: z.number().nonnegative().nullable(),
    retryable: z.boolean(),
  }),
});

export const runCompletedSchema = z.object({
  ...base,
  type: z.literal("run.completed"),
  status: runStatusSchema,
  reason: stopReasonSchema.nullable(),
  exitCode: z.number().int(),
  /** The final answer: the text of the last model step. */
  text: z.string(),
  usage: usageSchema,
  steps: z.number().int().nonnegative(),
  toolCalls: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  /** What this run's calls cost, in USD (priced models only). */
  costUsd: z.number().nonnegative().optional(),
  /** A root run: what its whole campaign spent (itself, every child, retries). */
  campaign: z.object({ runs: z.number().int().nonnegative(), tokens: z.number().int().nonnegative(), costUsd: z.number().nonnegative().optional() }).optional(),
});

/** A child run was started (or a follow-up queued) by one of this run's delegate calls. */
export const agentSpawnedSchema = z.object({
  ...base,
  type: z.literal("agent.spawned"),
  callId: z.string(),
  childRunId: z.string(),
  taskId: z.string(),
  taskName: z.string(),
  agent: z.string(),
  deliverable: z.string(),
  workspaceMode: z.string(),
  permissionMode: permissionModeSchema,
  background: z.boolean(),
  /** A `send` follow-up on an existing child rather than a new one. */
  followUp: z.boolean(),
});

/** A child run of this run ended; `result` is its validated AgentResult envelope. */
export const agentCompletedSchema = z.object({
  ...base,
  type: z.literal("agent.completed"),
  childRunId: z.string(),
  taskId: z.string(),
  status: z.string(),
  result: z.record(z.string(), z.unknown()),
});

/** The estimated size of the request about to be sent, against the model's context window. */
export const contextUpdatedSchema = z.object({
  ...base,
  type: z.literal("context.updated"),
  tokens: z.number().int().nonnegative(),
  window: z.number().int().positive(),
  percent: z.number().nonnegative(),
  /** The request shows a compacted view (a summary, then the recent tail). */
  compacted: z.boolean(),
});

/** The active model view was compacted: messages before `cut` are now `summary`. The durable record a resume continues from. */
export const contextCompactedSchema = z.object({
  ...base,
  type: z.literal("context.compacted"),
  reason: z.enum(["auto", "manual", "overflow"]),
  /** Position in the session's history where the verbatim tail starts. */
  cut: z.number().int().nonnegative(),
  replacedMessages: z.number().int().nonnegative(),
  summary: z.string(),
  /** The checkpoint model call failed or was invalid: a deterministic summary stands in. */
  fallback: z.boolean(),
  beforeTokens: z.number().int().nonnegative(),
  afterTokens: z.number().int().nonnegative(),
});

/** The run's progress ledger (todo) as it now stands. */
export const planUpdatedSchema = z.object({
  ...base,
  type: z.literal("plan.updated"),
  items: z.array(z.object({ content: z.string(), status: z.enum(["pending", "in_progress", "completed"]) })),
});

/** Something the run wants a person to know that is not an error of the run (an MCP server that is unavailable). */
export const noticeSchema = z.object({
  ...base,
  type: z.literal("notice"),
  /** What the notice is about: `mcp` for MCP servers, `plugin` for a lifecycle plugin's hook that failed. */
  source: z.string(),
  message: z.string(),
});

export const runtimeEventSchema = z.discriminatedUnion("type", [
  runStartedSchema,
  stepStartedSchema,
  messageDeltaSchema,
  reasoningDeltaSchema,
  toolRequestedSchema,
  permissionRequestedSchema,
  permissionDecidedSchema,
  toolStartedSchema,
  toolProgressSchema,
  toolCompletedSchema,
  guardTriggeredSchema,
  usageUpdatedSchema,
  stepCompletedSchema,
  providerRetrySchema,
  runFailedSchema,
  runCompletedSchema,
  agentSpawnedSchema,
  agentCompletedSchema,
  planUpdatedSchema,
  contextUpdatedSchema,
  contextCompactedSchema,
  noticeSchema,
]);

export type RuntimeEvent = z.infer<typeof runtimeEventSchema>;
export type RuntimeEventType = RuntimeEvent["type"];
export type EventOf<T extends RuntimeEventType> = Extract<RuntimeEvent, { type: T }>;

/** An event before the emitter stamps its envelope (id, sequence, time, run). */
export type EventBody = RuntimeEvent extends infer E
  ? E extends RuntimeEvent
    ? Omit<E, "eventId" | "sequence" | "timestamp" | "runId">
    : never
  : never;

export { isChildEvent } from "./child-event.ts";

/** Exit codes shared by every surface (decisions.md). */
export const EXIT = { ok: 0, internal: 1, usage: 2, provider: 3, limit: 4, cancelled: 130 } as const;

export function exitCodeFor(status: RunStatus, reason: StopReason | null): number {
  switch (status) {
    case "completed":
      return EXIT.ok;
    case "limit":
      return EXIT.limit;
    case "cancelled":
      return EXIT.cancelled;
    case "failed":
      return reason === "provider_error" || reason === "refusal" ? EXIT.provider : EXIT.internal;
  }
}
