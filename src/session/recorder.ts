import type { RuntimeEvent, Usage } from "../protocol/events.ts";
import type { Message } from "../protocol/messages.ts";
import type { MessageWrite, RunRow, SessionSurface, Store } from "../store/store.ts";
import type { Redactor } from "../security/redact.ts";
import { errorMessage } from "../util/errors.ts";

/** Checkpoint format version: 2 = the history lives in message rows, the checkpoint is a marker. */
export const CHECKPOINT_VERSION = 2;

/** What a later `--resume`/`--resume-run` needs besides the history. */
export type CheckpointMeta = {
  /** `workflow`: a workflow's coordinator, which no resume continues. */
  mode: "agent" | "workflow";
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
  /** What the run's model calls cost so far (priced models): a resumed run keeps counting from it. */
  costMicroUsd?: number;
  /** A root run: what its whole campaign (children included) has spent, restored by --resume-run. */
  campaign?: { runs: number; tokens: number; costMicroUsd: number };
};

export type RunRecorder = {
  /** Writes an event; called before the event is published to any surface. */
  event(event: RuntimeEvent): void;
  /** Writes the messages that changed since the last write (no consistency marker). */
  messages(history: Message[]): void;
  /** Writes the messages that changed since the last write, then a marker for this consistent point. */
  checkpoint(history: Message[], meta: CheckpointMeta): void;
  finish(patch: Pick<RunRow, "status" | "reason" | "usage" | "steps" | "toolCalls">): void;
  /** The first storage failure, if any: the run went on without persistence from there. */
  failure(): string | undefined;
};

/**
 * Records one run in the store: its row, every event (before publication),
 * the conversation as message rows (only what a step added or changed) with a
 * checkpoint marker at each consistent point, and its end. A storage failure
 * never stops the run; it is remembered once and reported by the surface.
 *
 * `stored` is the session's history as it is in the store when the run starts
 * (positions 0..n-1); rows past it were left by an interrupted step and are
 * replaced.
 */
export function createRunRecorder(
  store: Store,
  run: RunRow,
  session: { surface: SessionSurface; title: string },
  stored: readonly Message[],
  redactor?: Redactor,
): RunRecorder {
  let failed: string | undefined;
  const persisted: Message[] = [...stored];
  // Rows past what stays (an interrupted step's) are replaced by the first write, in its own
  // transaction, never dropped ahead of it: a crash before that write loses nothing.
  let truncateFrom: number | undefined = stored.length;
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

  /** Messages are replaced, never mutated, so a changed one is a different object. */
  function changes(history: readonly Message[]): MessageWrite[] {
    const writes: MessageWrite[] = [];
    for (let position = 0; position < history.length; position++) {
      if (persisted[position] !== history[position]) writes.push({ position, message: history[position]! });
    }
    return writes;
  }
  /** What goes to disk: the model's own text redacted (see storedForm). */
  const toDisk = (writes: MessageWrite[]): MessageWrite[] =>
    redactor ? writes.map(({ position, message }) => ({ position, message: storedForm(message, redactor) })) : writes;

  function remember(history: readonly Message[], writes: MessageWrite[]): void {
    for (const { position, message } of writes) persisted[position] = message;
    persisted.length = history.length;
  }
  function sync(history: readonly Message[]): void {
    const writes = changes(history);
    store.writeMessages(run.sessionId, run.id, toDisk(writes), truncateFrom);
    truncateFrom = undefined;
    remember(history, writes);
  }

  return {
    event(event) {
      guard(() => store.appendEvent(event as RuntimeEvent & Record<string, unknown>));
    },
    messages(history) {
      guard(() => sync(history));
    },
    checkpoint(history, meta) {
      guard(() => {
        // One transaction: the step's messages, the marker and the run's progress.
        const writes = changes(history);
        store.saveCheckpoint(
          {
            runId: run.id,
            sessionId: run.sessionId,
            version: CHECKPOINT_VERSION,
            createdAt: new Date().toISOString(),
            messageCount: history.length,
            meta: meta as unknown as Record<string, unknown>,
          },
          { messages: toDisk(writes), run: { usage: { ...meta.usage }, steps: meta.steps, toolCalls: meta.toolCalls }, ...(truncateFrom !== undefined ? { truncateFrom } : {}) },
        );
        truncateFrom = undefined;
        remember(history, writes);
      });
    },
    finish(patch) {
      const endedAt = new Date().toISOString();
      guard(() => store.updateRun(run.id, { ...patch, endedAt }));
      guard(() => store.touchSession(run.sessionId, endedAt));
    },
    failure: () => failed,
  };
}

/**
 * A model message as it is stored: secrets in the model's own text, unsigned reasoning and tool
 * call arguments redacted, like everything the run emits (the model repeating a key it was given
 * must not leave it on disk). Reasoning that carries provider data (a thinking signature,
 * encrypted reasoning) stays exact: the provider checks it on the next request, and zero's tools
 * only ever showed the model redacted text, so a secret can reach it only from the user's task.
 */
export function storedForm(message: Message, redactor: Redactor): Message {
  if (message.role !== "assistant") return message;
  let changed = false;
  const scrub = (text: string) => {
    const redacted = redactor.redact(text);
    if (redacted.count > 0) changed = true;
    return redacted.text;
  };
  const deep = (value: unknown): unknown =>
    typeof value === "string"
      ? scrub(value)
      : Array.isArray(value)
        ? value.map(deep)
        : value !== null && typeof value === "object"
          ? Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, deep(item)]))
          : value;
  const parts = message.parts.map((part) => {
    if (part.type === "text" || (part.type === "reasoning" && !part.provider)) return { ...part, text: scrub(part.text) };
    if (part.type === "tool-call") return { ...part, input: deep(part.input) };
    return part;
  });
  return changed ? { role: "assistant", parts } : message;
}

/** A short session title from the first task. */
export function titleFrom(task: string): string {
  const line = task.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
