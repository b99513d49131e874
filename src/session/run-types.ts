/**
 * The shapes a run is asked for and answers with: what a surface or the delegation coordinator
 * hands `prepareRun`, what the session hands `execute`, and what comes back.
 */
import type { AgentProfile, EffectiveConfig, PermissionMode, ReasoningEffort, ResolvedModel, Speed, WorkDepth } from "../config/schema.ts";
import type { Store } from "../store/store.ts";
import type { LoopHooks } from "../agent/loop-input.ts";
import type { RunHooks, RunInfo } from "../agent/run-hooks.ts";
import type { RuntimeEvent, StopReason } from "../protocol/events.ts";
import type { Message } from "../protocol/messages.ts";
import type { ApprovalBroker } from "../policy/approvals.ts";
import type { Redactor } from "../security/redact.ts";
import type { AskRequest, MediaPart } from "../tool/define.ts";
import type { Env } from "../util/env.ts";
import type { CompactionState } from "./compaction/compactor.ts";
import type { PathScope } from "./delegation/contract.ts";
import type { Lease } from "./delegation/slots.ts";
import type { ChildMeta, DelegationProvider } from "./delegation/types.ts";
import type { EventListener } from "./emitter.ts";
import type { Campaign } from "./run-context.ts";
import type { Continuation } from "./resume.ts";
import type { ToolSource } from "./tool-sources.ts";

export type Surface = "cli" | "tui" | "acp" | "host" | "exec";

export type RunOverrides = {
  model?: string;
  permissionMode?: PermissionMode;
  reasoningEffort?: ReasoningEffort;
  speed?: Speed;
  depth?: WorkDepth;
};

export type RunRequest = {
  config: EffectiveConfig;
  env: Env;
  /** Canonical workspace directory. */
  workspace: string;
  extraDirs?: string[];
  task: string;
  surface: Surface;
  overrides?: RunOverrides;
  /** Earlier work this run continues (`--resume`, `--resume-run`); its history comes with `execute`. */
  continuation?: Continuation;
  /** Where the run's tools come from (default: the core tools). */
  toolSources?: readonly ToolSource[];
  /** Lifecycle hooks (plugins): attached to the run, its loop and its children's runs. */
  runHooks?: RunHooks;
  /** Set for a child run: who started it, and the campaign it charges (delegation fills this). */
  parent?: ParentLink;
  /** The profile to run; default: the configured default agent (a child names its own). */
  agentName?: string;
  /** A child's own settings: its id, scope, tools it must not have, and what its checkpoints keep. */
  child?: ChildSetup;
  /** Gives the run its delegation capability (the session's coordinator). */
  delegation?: DelegationProvider;
  /** `--workflow <name>`: the run coordinates the workflow's phases instead of calling a model. */
  workflow?: string;
  /** `--attach` paths (a root run's task's `@path` mentions are attached too). */
  attach?: readonly string[];
  /** Media a child's first turn carries (attachments routed to it by its parent). */
  media?: readonly MediaPart[];
};

/** How a child run differs from a root run (see session/delegation). */
export type ChildSetup = {
  /** The child's run id; a follow-up turn (`send`) keeps it. */
  runId: string;
  /** The last event sequence of earlier turns: a follow-up continues the numbering. */
  startSequence: number;
  /** Tools removed from its profile's list (a path-scoped child has no `run`). */
  withoutTools: readonly string[];
  scope?: PathScope;
  /** Kept in its checkpoints, so it can be inspected and continued after a restart. */
  meta(): ChildMeta;
  /** What it holds (a concurrency slot, a writer gate), lent back while it waits on its own children. */
  leases: Lease[];
  /** The artifact references it may open: what its parent handed it, plus what its own tools make. */
  knownArtifacts: Set<string>;
};

/** A child run's link to its parent: its events name parent and root, and it spends the root's campaign. */
export type ParentLink = {
  runId: string;
  rootId: string;
  depth: number;
  campaign: Campaign;
  /** The user's session the tree belongs to. */
  sessionId: string;
  /** The parent as lifecycle hooks saw it (for `onAgentSpawn`). */
  info?: RunInfo;
};

/** What the session hands a prepared run when its turn comes (the session is claimed by then). */
export type RunExecution = {
  sessionId: string;
  listeners: EventListener[];
  /** The session's history before this run's task, read after the claim. */
  history: Message[];
  /** The part of `history` the store already holds unchanged. */
  stored: Message[];
  /** Where events, runs and messages are recorded; absent when storage is disabled. */
  store?: Store;
  /** Session-scoped: an "always" answer outlives this run. */
  approvals: ApprovalBroker;
  ask(question: AskRequest, signal: AbortSignal): Promise<boolean>;
  /** Redacts everything the run emits, once, before it is stored or published. */
  redactor: Redactor;
  hooks?: LoopHooks;
  /** The session's earlier compaction (resume continues from it), and a manual request to compact first. */
  compaction?: { state?: CompactionState; compactFirst?: boolean };
};

export type RunOutcome = {
  runId: string;
  sessionId: string;
  status: Extract<RuntimeEvent, { type: "run.completed" }>["status"];
  reason: StopReason | null;
  exitCode: number;
  text: string;
  history: Message[];
  /** Set when recording to the store failed: the run finished without full persistence. */
  persistWarning?: string;
};

export type PreparedRun = {
  runId: string;
  agent: AgentProfile;
  model: ResolvedModel;
  /** Runs to completion; never throws for provider trouble (that is an event). */
  execute(execution: RunExecution): Promise<RunOutcome>;
  /** Cancels the run: the model request and running tools are aborted. */
  cancel(): void;
};
