import type { EffectiveConfig } from "../config/schema.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../policy/approvals.ts";
import type { SessionSurface, Store } from "../store/store.ts";
import type { EventListener } from "./emitter.ts";
import type { RunOutcome, RunOverrides } from "./run.ts";
import type { ToolSource } from "./tool-sources.ts";
import type { LoopHooks } from "../agent/loop-input.ts";
import type { RunHooks } from "../agent/run-hooks.ts";
import type { MediaPart } from "../tool/define.ts";
import type { Env } from "../util/env.ts";

/** What the session service takes and gives: every surface programs against these. */

/** The store as the service sees it: opened only when something must be written or read. */
export type StoreAccess = {
  /** Opens (creating the state directory on first use); undefined when storage is disabled. */
  open(): Store | undefined;
  /** Whether a database already exists (so a resume can fail without creating one). */
  exists(): boolean;
  enabled: boolean;
};

export type SessionServiceOptions = {
  config: EffectiveConfig;
  env: Env;
  workspace: string;
  extraDirs: string[];
  surface: SessionSurface;
  overrides: RunOverrides;
  store: StoreAccess;
  /** Interactive surfaces answer approvals through `answerApproval`; headless sessions deny what needs asking. */
  interactive?: boolean;
  /** Notices for people (waiting for another process); stderr on the CLI. */
  log?(line: string): void;
  toolSources?: readonly ToolSource[];
  /** Lifecycle hooks every run of the service gets, delegated children included (plugins). */
  runHooks?: RunHooks;
  /** How often a session busy in another process is checked again (ms). */
  claimPollMs?: number;
  /** Where isolated child workspaces (git worktrees, scratch dirs) are made; default: the OS temp dir. */
  tempRoot?: string;
};

export type OpenRequest =
  /** `durable`: the session is stored at once, before its first turn (ACP lists it from then on). */
  | { kind: "new"; durable?: boolean }
  /** `--resume <id|latest>`. */
  | { kind: "resume"; ref: string }
  /** `--resume-run <id|latest>`: the interrupted run itself continues. */
  | { kind: "resume-run"; ref: string }
  /** A session the surface names itself (host): continued when it exists, created when not. */
  | { kind: "named"; sessionId: string };

export type RunHandle = {
  /** Settles when the run ended (or was refused before it started: then it rejects). */
  done: Promise<RunOutcome>;
  cancel(): void;
};

export type PendingApproval = ApprovalRequest & { sessionId: string };

export type SendOptions = {
  listeners?: EventListener[];
  hooks?: LoopHooks;
  workflow?: string;
  /** `--attach` paths. */
  attach?: readonly string[];
  /** Media the surface received with the prompt (ACP images and audio), validated by the surface. */
  media?: readonly MediaPart[];
  /** This turn's choices (ACP config options), over the service's. */
  overrides?: RunOverrides;
};

export type Session = {
  readonly id: string;
  /** Queues a user turn; turns of one session run one at a time, in order. */
  send(task: string, options?: SendOptions): RunHandle;
  /** Events of every run of this session, live; `after` replays stored events after that store order first. */
  subscribe(listener: EventListener, options?: { after?: number }): () => void;
  /** Answers a pending approval of an interactive session. */
  answerApproval(callId: string, answer: ApprovalAnswer): boolean;
  /** Approval requests waiting for an answer (interactive sessions). */
  pendingApprovals(): PendingApproval[];
  /** Called with each approval request once it waits for `answerApproval` (interactive sessions); returns the unsubscribe. */
  onApprovalPending(listener: (request: PendingApproval) => void): () => void;
  /** Compacts the conversation before the next turn's first request (the TUI's /compact; ACP). */
  compact(): void;
  /** Whether a turn of it is queued or running, or a child run it started is unfinished. */
  busy(): boolean;
  /** Cancels the running turn and every queued one. */
  cancel(): void;
  close(): void;
};
