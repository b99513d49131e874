import type { ToolSource } from "../tool-sources.ts";
import type { RunHooks, RunInfo } from "../../agent/run-hooks.ts";
import type { MediaPart } from "../../tool/define.ts";
import type { AgentProfile, EffectiveConfig, PermissionMode, WorkDepth, WorkspaceMode } from "../../config/schema.ts";
import type { EventBody, StopReason } from "../../protocol/events.ts";
import type { Message } from "../../protocol/messages.ts";
import type { ApprovalBroker } from "../../policy/approvals.ts";
import type { Redactor } from "../../security/redact.ts";
import type { Roots } from "../../security/roots.ts";
import type { ArtifactStore } from "../../store/artifacts.ts";
import type { Store } from "../../store/store.ts";
import type { AskRequest, Delegation } from "../../tool/define.ts";
import type { Env } from "../../util/env.ts";
import type { EventListener } from "../emitter.ts";
import type { Campaign } from "../run-context.ts";
import type { SessionSurface } from "../../store/store.ts";
import type { DependencyResult, PathScope, TaskContract } from "./contract.ts";
import type { Deliverable } from "../../config/schema.ts";
import type { AgentResult } from "./result.ts";
import type { Lease } from "./slots.ts";
import type { ChildWorkspace } from "./workspaces.ts";

/** What a run tells the coordinator about itself when it may delegate. */
export type ParentPlace = {
  runId: string;
  rootId: string;
  depth: number;
  /** The user's session (children's conversations hang below it). */
  sessionId: string;
  agent: AgentProfile;
  permissionMode: PermissionMode;
  workDepth: WorkDepth;
  roots: Roots;
  workspace: string;
  extraDirs: string[];
  campaign: Campaign;
  scope?: PathScope;
  /** The parent's conversation so far (for context modes and artifact checks). */
  history(): readonly Message[];
  /** Emits on the parent's own event stream (agent.spawned, agent.completed). */
  emit(body: EventBody): void;
  /** Where the parent's events go: child events go there too, so every client sees one tree. */
  listeners: EventListener[];
  artifacts: ArtifactStore;
  /** The artifact references the parent may open (its loop's set): a spawn may pass only these; results add theirs. */
  knownArtifacts: Set<string>;
  /** What the parent holds while it runs as a child itself (lent back while it waits for its own children). */
  leases: Lease[];
  /** The parent as lifecycle hooks saw it (a child's spawn names its parent). */
  info?: RunInfo;
};

/** One phase of a workflow, as its coordinator run starts it. */
export type PhaseSpec = {
  id: string;
  agent: AgentProfile;
  goal: string;
  deliverable: Deliverable;
  acceptanceCriteria: string[];
  dependencies: DependencyResult[];
  /** `--model`: every phase runs it instead of its agent's model. */
  modelOverride?: string;
  /** Media the child receives with its task (attachments routed to a specialist). */
  media?: MediaPart[];
};

/** The delegation a run gets: the tool capability, completions to inject, and its end. */
export type RunDelegation = {
  delegation: Delegation;
  /** Runs one workflow phase as a child and waits for it (the workflow chose its agent). */
  phase(spec: PhaseSpec, signal: AbortSignal): Promise<{ childRunId: string; result: AgentResult & { childRunId: string; taskId: string; agent: string }; stopReason: StopReason | null }>;
  /** Completions of background children not yet seen by the model, as user messages. */
  pendingInput(): Message[];
  /** The parent run ends: its unfinished children are cancelled (cancelChildrenWithParent) and awaited. */
  end(): Promise<void>;
};

export type DelegationProvider = { forRun(place: ParentPlace): RunDelegation };

/** What the coordinator needs from its session and process. */
export type CoordinatorDeps = {
  config: EffectiveConfig;
  env: Env;
  surface: SessionSurface;
  /** The store, opened (undefined when storage is disabled). */
  store(): Store | undefined;
  redactor: Redactor;
  approvals: ApprovalBroker;
  ask(question: AskRequest, signal: AbortSignal): Promise<boolean>;
  /** Where isolated workspaces are created (a private temp dir). */
  tempRoot: string;
  /** Removes isolated workspaces at shutdown. */
  workspaces: { add(ws: ChildWorkspace): void; delete(ws: ChildWorkspace): void };
  log?(line: string): void;
  /** The session's tool sources (core, MCP): a child takes from them what its own profile allows. */
  toolSources?: readonly ToolSource[];
  /** The session's lifecycle hooks (plugins): a child's run gets them too. */
  runHooks?: RunHooks;
};

export type ChildStatus = "queued" | "running" | "completed" | "failed" | "blocked" | "cancelled" | "skipped";

/** What a child's checkpoints keep so it can be inspected and continued after a restart. */
export type ChildMeta = {
  taskId: string;
  contract: TaskContract;
  workspaceMode: WorkspaceMode;
  permissionMode: PermissionMode;
  /** The effective scope (an inherited one included), normalized. */
  scopeGlobs?: string[];
  retriesUsed: number;
  result: AgentResult | null;
};

export type ChildRecord = {
  runId: string;
  taskId: string;
  contract: TaskContract;
  agent: AgentProfile;
  parentRunId: string;
  rootId: string;
  depth: number;
  permissionMode: PermissionMode;
  workDepth: WorkDepth;
  /** The conversation the child's messages and checkpoints live in. */
  childSessionId: string;
  scope?: PathScope;
  withoutTools: string[];
  workspace?: ChildWorkspace;
  /** Canonical directory the child works in, and its other roots. */
  cwd: string;
  extraDirs: string[];
  status: ChildStatus;
  result?: AgentResult;
  /** The model history without storage (with storage, the child session holds it). */
  history: Message[];
  lastSequence: number;
  retriesUsed: number;
  startedAt: string;
  endedAt?: string;
  /** Settles when the current turn ends (never rejects). */
  done: Promise<AgentResult>;
  cancel(): void;
  /** The completion was handed to the parent's model (by wait, send, a foreground reply or injection). */
  delivered: boolean;
  /** Where a background completion goes. */
  parent: ParentPlace;
  /** The references the child may open: those its parent handed it, plus what its tools made. */
  knownArtifacts: Set<string>;
  /** The part of `knownArtifacts` it was handed (the rest its own tools produced). */
  handedArtifacts: ReadonlySet<string>;
  /** A child rebuilt from the store after a restart. */
  rehydrated: boolean;
  /** A workflow phase under `--model`: the alias it runs instead of its profile's. */
  modelOverride?: string;
  /** Media its first turn carries with the task (attachments routed to it). */
  media?: MediaPart[];
  /** A workflow phase: the workflow chose its agent; without a mode of its own it runs at its coordinator's. */
  phase?: boolean;
  /** Why its last turn's run stopped early (a limit, cancellation), when it did. */
  stopReason?: StopReason | null;
};
