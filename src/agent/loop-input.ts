import type { PermissionMode } from "../config/schema.ts";
import type { ModelRunner } from "../llm/step.ts";
import type { EventBody, StopReason, Usage } from "../protocol/events.ts";
import type { ModelMessage } from "../protocol/messages.ts";
import type { ApprovalBroker } from "../policy/approvals.ts";
import type { Rule } from "../policy/rules.ts";
import type { Redactor } from "../security/redact.ts";
import type { Roots } from "../security/roots.ts";
import type { ArtifactStore } from "../store/artifacts.ts";
import type { Tool } from "../tool/define.ts";
import type { WebSearchAccess } from "../tool/search.ts";
import type { NetworkAccess } from "../tool/url-fetch.ts";
import type { Env } from "../util/env.ts";

/** What the loop needs for one run; built by session/run.ts. */
export type LoopLimits = { maxSteps: number; maxToolCalls: number; toolTimeoutMs: number; maxAttachmentBytes: number };

/** What tools may use besides the roots: the environment, the artifact store, the redactor, the network. */
export type ToolServices = { env: Env; artifacts: ArtifactStore; redactor: Redactor; network?: NetworkAccess; webSearch?: WebSearchAccess };

export type LoopInput = {
  agent: string;
  runner: ModelRunner;
  instructions: string;
  /** Prior history plus the new user message; the loop appends to a copy. */
  history: ModelMessage[];
  /** The agent's allowlisted tools, exactly what the model was offered. */
  tools: ReadonlyMap<string, Tool>;
  permissionMode: PermissionMode;
  rules: readonly Rule[];
  approvals: ApprovalBroker;
  roots: Roots;
  services: ToolServices;
  /** The model's declared capabilities (image, file, audio…): media it lacks is described, not sent. */
  modelCapabilities: readonly string[];
  limits: LoopLimits;
  /** Aborted on cancellation or the run deadline. */
  signal: AbortSignal;
  /** Why `signal` fired: cancelled or deadline. */
  abortReason(): StopReason;
  emit(body: EventBody): void;
  /** Budget already spent by an earlier part of this run (resume of an interrupted run). */
  spent?: { usage: Usage; steps: number; toolCalls: number };
  /** Called after every step whose tool calls are all answered: history is well-formed there. */
  onCheckpoint?(snapshot: { history: ModelMessage[]; usage: Usage; steps: number; toolCalls: number }): void;
};

