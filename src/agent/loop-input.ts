import type { ModelPricing, PermissionMode } from "../config/schema.ts";
import type { ModelRunner } from "../llm/step.ts";
import type { EventBody, StopReason, ToolStatus, Usage } from "../protocol/events.ts";
import type { Message } from "../protocol/messages.ts";
import type { ApprovalBroker } from "../policy/approvals.ts";
import type { Rule } from "../policy/rules.ts";
import type { Redactor } from "../security/redact.ts";
import type { Roots } from "../security/roots.ts";
import type { ArtifactStore } from "../store/artifacts.ts";
import type { AskRequest, Classification, Delegation, McpContentAccess, PlanItem, Tool, ToolResult } from "../tool/define.ts";
import type { WebSearchAccess } from "../tool/search.ts";
import type { NetworkAccess } from "../tool/url-fetch.ts";
import type { Env } from "../util/env.ts";

/** What the loop needs for one run; built by session/run.ts. */
export type LoopLimits = {
  maxSteps: number;
  maxToolCalls: number;
  toolTimeoutMs: number;
  maxAttachmentBytes: number;
  /** The run's token ceiling (agent maxTokens); null or absent: none. */
  maxTokens?: number | null;
};

/** Which campaign cap stopped work, and how it says so. */
export type BudgetStop = { guard: "max_tokens" | "max_cost"; message: string };

/** A model call's admission under a campaign budget: its output allowance, or why it may not run. */
export type ModelCallAdmission = { ok: true; maxOutputTokens?: number; release(): void } | ({ ok: false } & BudgetStop);

/** Counters shared by every run of one root campaign (children charge their root's). */
export type CampaignCharge = {
  charge(spent: { steps?: number; toolCalls?: number; tokens?: number; costMicroUsd?: number }): void;
  /** Why the campaign cannot go on, when one of its limits is spent. */
  exhausted(): BudgetStop | undefined;
  /** A token or cost cap is set: model calls pass the admission queue. */
  readonly capped?: boolean;
  /**
   * Admits one model call (one at a time per campaign while a token or cost cap is set): `release`
   * after its usage was charged. Absent: every call is admitted.
   */
  admitModelCall?(request: { estimatedInputTokens: number; pricing?: ModelPricing; signal: AbortSignal }): Promise<ModelCallAdmission>;
};

/** A tool call as the hooks see it: validated input and the policy's classification. */
export type HookedCall = { callId: string; tool: string; input: unknown; classification: Classification };

/** A tool call as the model proposed it, before validation (what `rewriteCall` sees). */
export type ProposedCall = { callId: string; tool: string; input: unknown };

/** Where a run stands at a step: the step's number and what the run spent so far. */
export type StepState = { step: number; usage: Usage; toolCalls: number };

/** How a call was answered: ran, failed, denied, blocked (failed) or cancelled. */
export type CallAnswer = { status: ToolStatus; output: string; truncated: boolean };

/** What one model step answered, as `afterModel` sees it. */
export type StepResultView = { step: number; text: string; toolCalls: ProposedCall[]; finishReason: string; usage: Usage };

/**
 * Where later features plug into the loop without the loop knowing them:
 * compaction transforms the context, plugins and audit see tool calls,
 * queued user messages and steering arrive between steps.
 */
export type LoopHooks = {
  /** The messages the next request sends (the stored history is unchanged). */
  transformContext?(history: readonly Message[]): Message[] | Promise<Message[]>;
  /** After policy allowed a call, before it runs; `block` answers it as failed with that reason. */
  beforeToolCall?(call: HookedCall): Promise<{ block?: string } | void> | { block?: string } | void;
  afterToolCall?(call: HookedCall, result: ToolResult): Promise<void> | void;
  /** User messages queued while the run was busy; taken before each model step. */
  pendingInput?(): Message[];
  /**
   * The model answered without calling tools: may the run finish? (Work-depth gates: after
   * observed changes, verification and an approving review first.) `continueWith` refuses, with
   * what the model is told; `stop` ends the run by a limit.
   */
  beforeFinish?(signal: AbortSignal): Promise<FinishVerdict>;
  /** A step's usage came back (compaction calibrates its estimate with the reported input tokens). */
  afterStep?(usage: Usage): void;
  /** The provider reported a context overflow: true when the context was compacted and the step may be retried (once). */
  onContextOverflow?(history: readonly Message[]): Promise<boolean>;
  // Lifecycle hooks (plugins): each is awaited where it sits; none of them can skip a check.
  /** A model step is about to be made (after the limits were checked). */
  beforeStep?(state: StepState): Promise<void> | void;
  /**
   * The step's request, after `transformContext`: another system text and messages may be
   * returned for this one request (the stored history is unchanged).
   */
  beforeModel?(request: { step: number; instructions: string; messages: readonly Message[] }): Promise<{ instructions: string; messages: Message[] } | void>;
  /** A step answered (before its calls are admitted). */
  afterModel?(result: StepResultView, state: StepState): Promise<void> | void;
  /**
   * Before a call is checked at all: another call may be returned (tool and input), which is then
   * allowlisted, validated, classified, approved and run as if the model had made it; `block`
   * answers it as failed without running it. The guards count the model's own call.
   */
  rewriteCall?(call: ProposedCall, state: StepState): Promise<{ tool: string; input: unknown } | { block: string } | void>;
  /** Every call `rewriteCall` was asked about, once answered (with the call that was judged). */
  afterCall?(call: ProposedCall, answer: CallAnswer, state: StepState): Promise<void> | void;
  /** After a step whose calls were all answered: a message ends the run there (status limit, reason `plugin`). */
  shouldStop?(state: StepState): Promise<string | undefined>;
};

export type FinishVerdict = { finish: true } | { continueWith: Message[] } | { stop: string };

/** What tools may use besides the roots: the environment, the artifact store, the redactor, the network. */
export type ToolServices = {
  env: Env;
  artifacts: ArtifactStore;
  redactor: Redactor;
  network?: NetworkAccess;
  webSearch?: WebSearchAccess;
  /** Child runs of this run (the delegate tool); absent where the run may not delegate. */
  delegation?: Delegation;
  /** The run's progress ledger changed (todo tool). */
  updatePlan?(items: PlanItem[]): void;
  /** Resources and prompts of the agent's MCP servers (`read mcp://content/…`). */
  mcpContent?: McpContentAccess;
};

export type LoopInput = {
  agent: string;
  runner: ModelRunner;
  instructions: string;
  /** Prior history plus the new user message; the loop appends to a copy. */
  history: Message[];
  /** The agent's allowlisted tools, exactly what the model was offered. */
  tools: ReadonlyMap<string, Tool>;
  permissionMode: PermissionMode;
  rules: readonly Rule[];
  approvals: ApprovalBroker;
  /** A question for the user from a tool (the session's approval path); headless: declined. */
  ask(question: AskRequest, signal: AbortSignal): Promise<boolean>;
  hooks?: LoopHooks;
  campaign?: CampaignCharge;
  roots: Roots;
  /**
   * A task scope narrower than the roots (a path-scoped child): says why a call is outside it,
   * before policy is asked. Only ever narrows.
   */
  scope?(call: { tool: string; operation: string; target: string }): string | undefined;
  /** Files the configuration reads as instructions or code: writing one is write-sensitive. */
  sensitiveFiles?: readonly string[];
  services: ToolServices;
  /** The model's prices (per million tokens), when configured: what a step costs the campaign. */
  pricing?: ModelPricing;
  /** Characters every request carries besides the messages (tool schemas): part of the input estimate. */
  requestOverheadChars?: number;
  /** The model's declared capabilities (image, file, audio…): media it lacks is described, not sent. */
  modelCapabilities: readonly string[];
  limits: LoopLimits;
  /** Aborted on cancellation or the run deadline. */
  signal: AbortSignal;
  /** Why `signal` fired: cancelled or deadline. */
  abortReason(): StopReason;
  emit(body: EventBody): void;
  /**
   * The artifact references this run may open (zero adds each one it hands out). Shared with the
   * caller when given: delegation reads and extends it.
   */
  knownArtifacts?: Set<string>;
  /** False: do not treat references in the history as known (the caller seeded `knownArtifacts`). */
  learnArtifactsFromHistory?: boolean;
  /** Budget already spent by an earlier part of this run (resume of an interrupted run). */
  spent?: { usage: Usage; steps: number; toolCalls: number; costMicroUsd?: number };
  /** Called when a step's calls are about to run: the history then ends with the calls. */
  onHistory?(history: Message[]): void;
  /** Called after every step whose tool calls are all answered: history is well-formed there. */
  onCheckpoint?(snapshot: { history: Message[]; usage: Usage; steps: number; toolCalls: number; costMicroUsd?: number }): void;
};

