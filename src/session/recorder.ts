import type { RuntimeEvent, Usage } from "../protocol/events.ts";
import type { ModelMessage } from "../protocol/messages.ts";
import type { RunRow, SessionSurface, Store } from "../store/store.ts";
import { errorMessage } from "../util/errors.ts";

/** Checkpoint format version: bump when the meta shape changes incompatibly. */
export const CHECKPOINT_VERSION = 1;

/** What a later `--resume`/`--resume-run` needs besides the history. */
export type CheckpointMeta = {
  mode: "agent";
  surface: SessionSurface;
  workspace: string;
  agent: string;
  model: { alias: string; provider: string; model: string };
  workDepth: string;
  permissionMode: string;
  deadline: string;
  usage: Usage;
  steps: number;
  toolCalls: number;
};

export type RunRecorder = {
  /** Writes an event; called before the event is published to any surface. */
  event(event: RuntimeEvent): void;
  checkpoint(history: ModelMessage[], meta: CheckpointMeta): void;
  finish(patch: Pick<RunRow, "status" | "reason" | "usage" | "steps" | "toolCalls">): void;
  /** The first storage failure, if any: the run went on without persistence from there. */
  failure(): string | undefined;
};

/**
 * Records one run in the store: its row, every event (before publication),
 * checkpoints at consistent points, and its end. A storage failure never
 * stops the run; it is remembered once and reported by the surface.
 */
export function createRunRecorder(store: Store, run: RunRow, session: { surface: SessionSurface; title: string }): RunRecorder {
  let failed: string | undefined;
  const guard = (action: () => void) => {
    if (failed !== undefined) return;
    try {
      action();
    } catch (error) {
      failed = `persistence stopped: ${errorMessage(error)}`;
    }
  };
  guard(() => {
    // Whether the session exists is the store's answer, not the caller's guess (a session can
    // exist without a checkpoint, e.g. after a crash before its first step).
    if (!store.getSession(run.sessionId)) {
      store.createSession({ id: run.sessionId, surface: session.surface, workspace: run.workspace, title: session.title, createdAt: run.startedAt });
    }
    if (store.getRun(run.id)) store.updateRun(run.id, { status: "running", reason: null, endedAt: null, pid: process.pid });
    else store.createRun(run);
    store.touchSession(run.sessionId, run.startedAt);
  });
  return {
    event(event) {
      guard(() => store.appendEvent(event as RuntimeEvent & Record<string, unknown>));
    },
    checkpoint(history, meta) {
      guard(() =>
        store.saveCheckpoint({
          runId: run.id,
          sessionId: run.sessionId,
          version: CHECKPOINT_VERSION,
          createdAt: new Date().toISOString(),
          history,
          meta: meta as unknown as Record<string, unknown>,
        }),
      );
      guard(() => store.updateRun(run.id, { usage: { ...meta.usage }, steps: meta.steps, toolCalls: meta.toolCalls }));
    },
    finish(patch) {
      const endedAt = new Date().toISOString();
      guard(() => store.updateRun(run.id, { ...patch, endedAt }));
      guard(() => store.touchSession(run.sessionId, endedAt));
    },
    failure: () => failed,
  };
}

/** A short session title from the first task. */
export function titleFrom(task: string): string {
  const line = task.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
