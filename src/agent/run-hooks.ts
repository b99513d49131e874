import type { PermissionMode, WorkDepth } from "../config/schema.ts";
import type { EventBody, RunStatus, StopReason, Usage } from "../protocol/events.ts";
import type { LoopHooks } from "./loop-input.ts";

/**
 * Lifecycle hooks of whole runs (plugins), as the session calls them: the session knows this
 * shape only, never what implements it. Types only; the plugin layer implements them.
 */

/** A run as lifecycle hooks see it: who runs, where, on what. Plain data. */
export type RunInfo = {
  runId: string;
  sessionId: string;
  rootRunId: string;
  /** The run that delegated this one; null for a root run. */
  parentRunId: string | null;
  /** 0 for a root run, 1 for its children, … */
  depth: number;
  agent: string;
  /** The model alias the run uses. */
  model: string;
  task: string;
  workspace: string;
  permissionMode: PermissionMode;
  workDepth: WorkDepth;
  surface: string;
};

/** How a run ended (what `run.completed` says). */
export type RunEnd = {
  status: RunStatus;
  reason: StopReason | null;
  exitCode: number;
  text: string;
  usage: Usage;
  steps: number;
  toolCalls: number;
};

/** Why a run failed: the provider's classified failure, or an error of zero itself. */
export type RunFailure =
  | { kind: "provider"; category: string; message: string; statusCode: number | null }
  | { kind: "internal"; error: unknown };

/** What a run hands its hooks: where to report (a run event), and the signal that ends any wait for them. */
export type RunHookIo = {
  emit(body: EventBody): void;
  signal: AbortSignal;
  /** The run that delegated this one, when it is a child. */
  parent?: RunInfo;
};

/** The hooks of one run. Never throw: a failing hook is reported as a `notice` and the run goes on. */
export type AttachedRunHooks = {
  /** After `run.started`: a child's spawn first, then the run's start. */
  start(): Promise<void>;
  /** The loop's lifecycle hook points (beforeStep, beforeModel, afterModel, rewriteCall, afterCall, shouldStop). */
  loop: LoopHooks;
  /** The run failed (before `end`). */
  failed(failure: RunFailure): Promise<void>;
  /** Before `run.completed` is emitted. */
  end(result: RunEnd): Promise<void>;
};

export type RunHooks = {
  /** Settles when the hooks are loaded; rejects with an error the user must fix (exit 2). */
  ready(): Promise<void>;
  attach(run: RunInfo, io: RunHookIo): AttachedRunHooks;
};
