/**
 * The TUI's timeline as data: runtime events (and the user's own actions) → the entries the
 * screen draws. No rendering here and no I/O: `applyEvent` and friends change a state object in
 * place (the view wraps them in Solid's `produce`, tests call them on plain objects), so the
 * whole behaviour of the timeline is unit-tested without a terminal.
 *
 * What it keeps: user turns, streamed answer and reasoning text (consecutive deltas of one run
 * grow one entry), one row per tool call (status, output, diff, progress), one row per delegated
 * child run, notices and errors, and the user's approval decisions. Each root run is summarized
 * (its timer, its final answer); once it ends, its intermediate work collapses under a
 * "Worked for …" row that can be expanded again.
 */
import { isChildEvent } from "../../protocol/child-event.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";

export type ToolStatus = "pending" | "running" | "completed" | "failed" | "denied" | "cancelled";

export type ToolEntry = {
  kind: "tool";
  id: string;
  runId: string;
  tool: string;
  input: unknown;
  operation: string | null;
  target: string | null;
  status: ToolStatus;
  output?: string;
  diff?: string;
  progress?: string;
  durationMs?: number;
};

export type Entry =
  | { kind: "user"; id: string; text: string; attachments: string[] }
  | { kind: "assistant"; id: string; runId: string; text: string }
  | { kind: "reasoning"; id: string; runId: string; text: string }
  | ToolEntry
  | { kind: "child"; id: string; runId: string; agent: string; task: string; status: string; summary?: string; callId?: string }
  | { kind: "notice"; id: string; runId?: string; text: string }
  | { kind: "error"; id: string; runId?: string; text: string }
  | { kind: "decision"; id: string; runId?: string; tool: string; answer: "once" | "always" | "deny" };

export type RunSummary = {
  runId: string;
  agent: string;
  model: string;
  startedAt: number;
  endedAt?: number;
  status: "running" | "completed" | "failed" | "limit" | "cancelled";
  /** The entry that holds its final answer (stays visible when the work collapses). */
  finalEntryId?: string;
  /** Its intermediate work is hidden under the "Worked for …" row. */
  collapsed: boolean;
};

export type ContextGauge = { tokens: number; window: number; percent: number };

export type TimelineState = {
  entries: Entry[];
  runs: Record<string, RunSummary>;
  /** The root run in flight, if any. */
  activeRunId?: string;
  context?: ContextGauge;
  /** What the session's runs cost so far (priced models). */
  costUsd: number;
  /** A counter for ids of entries that have none of their own. */
  serial: number;
};

export function emptyTimeline(): TimelineState {
  return { entries: [], runs: {}, costUsd: 0, serial: 0 };
}

const nextId = (state: TimelineState, prefix: string) => `${prefix}-${++state.serial}`;

/** The user's turn, added when it is sent (before its run starts). */
export function addUserTurn(state: TimelineState, text: string, attachments: string[] = []): void {
  state.entries.push({ kind: "user", id: nextId(state, "user"), text, attachments });
}

export function addNotice(state: TimelineState, text: string): void {
  state.entries.push({ kind: "notice", id: nextId(state, "notice"), text });
}

export function addError(state: TimelineState, text: string): void {
  state.entries.push({ kind: "error", id: nextId(state, "error"), text });
}

/** The user's answer to an approval, recorded in the timeline. */
export function addDecision(state: TimelineState, tool: string, answer: "once" | "always" | "deny", runId?: string): void {
  state.entries.push({ kind: "decision", id: nextId(state, "decision"), tool, answer, ...(runId ? { runId } : {}) });
}

/** `/clear` and Ctrl-L: the visible timeline goes; the conversation (the model's history) stays. */
export function clearTimeline(state: TimelineState): void {
  state.entries = [];
  for (const runId of Object.keys(state.runs)) if (runId !== state.activeRunId) delete state.runs[runId];
}

/** A "Worked for …" row toggled by click or key. */
export function toggleRun(state: TimelineState, runId: string): void {
  const run = state.runs[runId];
  if (run && run.endedAt !== undefined) run.collapsed = !run.collapsed;
}

/** Applies one runtime event of the session (a root run's or a delegated child's). */
export function applyEvent(state: TimelineState, event: RuntimeEvent, now = Date.now()): void {
  // A child's own work is its parent's delegate row and child row; only its lifecycle is shown.
  if (isChildEvent(event)) return;
  switch (event.type) {
    case "run.started":
      state.runs[event.runId] = { runId: event.runId, agent: event.agent, model: event.model.alias, startedAt: now, status: "running", collapsed: false };
      state.activeRunId = event.runId;
      return;
    case "message.delta":
      return appendText(state, "assistant", event.runId, event.text);
    case "reasoning.delta":
      return appendText(state, "reasoning", event.runId, event.text);
    case "tool.requested":
      state.entries.push({
        kind: "tool",
        id: event.callId,
        runId: event.runId,
        tool: event.tool,
        input: event.input,
        operation: event.operation,
        target: event.target ?? null,
        status: "pending",
      });
      return;
    case "tool.started":
      return updateTool(state, event.callId, (tool) => (tool.status = "running"));
    case "tool.progress":
      return updateTool(state, event.callId, (tool) => (tool.progress = event.message));
    case "tool.completed":
      return updateTool(state, event.callId, (tool) => {
        tool.status = event.status;
        tool.output = event.output;
        tool.durationMs = event.durationMs;
        if (event.diff !== undefined) tool.diff = event.diff;
        delete tool.progress;
      });
    case "agent.spawned":
      if (event.followUp) {
        const child = state.entries.find((entry) => entry.kind === "child" && entry.id === event.childRunId);
        if (child && child.kind === "child") child.status = "running";
        return;
      }
      state.entries.push({ kind: "child", id: event.childRunId, runId: event.runId, agent: event.agent, task: event.taskName, status: "running", callId: event.callId });
      return;
    case "agent.completed": {
      const child = state.entries.find((entry) => entry.kind === "child" && entry.id === event.childRunId);
      if (child && child.kind === "child") {
        child.status = event.status;
        if (typeof event.result.summary === "string") child.summary = event.result.summary;
      }
      return;
    }
    case "context.updated":
      state.context = { tokens: event.tokens, window: event.window, percent: event.percent };
      return;
    case "notice":
      state.entries.push({ kind: "notice", id: nextId(state, "notice"), runId: event.runId, text: event.message });
      return;
    case "run.failed":
      state.entries.push({ kind: "error", id: nextId(state, "error"), runId: event.runId, text: event.error.message });
      return;
    case "run.completed":
      return finishRun(state, event);
    default:
      return;
  }
}

function appendText(state: TimelineState, kind: "assistant" | "reasoning", runId: string, text: string): void {
  if (text === "") return;
  const last = state.entries.at(-1);
  if (last && last.kind === kind && last.runId === runId) {
    last.text += text;
    return;
  }
  state.entries.push({ kind, id: nextId(state, kind), runId, text });
}

function updateTool(state: TimelineState, callId: string, change: (tool: ToolEntry) => void): void {
  // The call is near the end: search backwards.
  for (let i = state.entries.length - 1; i >= 0; i--) {
    const entry = state.entries[i]!;
    if (entry.kind === "tool" && entry.id === callId) return change(entry);
  }
}

function finishRun(state: TimelineState, event: Extract<RuntimeEvent, { type: "run.completed" }>): void {
  const run = state.runs[event.runId];
  if (state.activeRunId === event.runId) delete state.activeRunId;
  if (event.costUsd !== undefined) state.costUsd += event.costUsd;
  if (!run) return;
  run.endedAt = run.startedAt + event.durationMs;
  run.status = event.status;
  // The final answer: the run's last answer text (the last model step's).
  const last = [...state.entries].reverse().find((entry) => entry.kind === "assistant" && entry.runId === event.runId);
  if (last) run.finalEntryId = last.id;
  // Work worth hiding: anything of the run beside its final answer.
  run.collapsed = state.entries.some((entry) => "runId" in entry && entry.runId === event.runId && entry.id !== run.finalEntryId && entry.kind !== "error");
}

/** A row of the screen: an entry, or the "Worked for …" summary that stands in for a run's hidden work. */
export type Row = { kind: "entry"; entry: Entry } | { kind: "worked"; run: RunSummary; hidden: number } | { kind: "footer"; run: RunSummary };

/**
 * What the screen shows, in order: every entry, except that a finished, collapsed run's
 * intermediate work is replaced by one "worked" row where that work began. Its final answer
 * and errors stay visible, the answer followed by an agent · model footer.
 */
export function visibleRows(state: TimelineState): Row[] {
  const rows: Row[] = [];
  const placed = new Set<string>();
  const hiddenCount = new Map<string, number>();
  // A child run is drawn right under the delegate call that started it, even when that step made
  // other calls in between (its entry is added when it spawns, after all of them).
  const calls = new Set(state.entries.flatMap((entry) => (entry.kind === "tool" ? [entry.id] : [])));
  const childrenOf = new Map<string, Entry[]>();
  for (const entry of state.entries) {
    if (entry.kind === "child" && entry.callId !== undefined && calls.has(entry.callId)) childrenOf.set(entry.callId, [...(childrenOf.get(entry.callId) ?? []), entry]);
  }
  const place = (entry: Entry): void => {
    const run = "runId" in entry && entry.runId ? state.runs[entry.runId] : undefined;
    const hidden = run !== undefined && run.endedAt !== undefined && entry.id !== run.finalEntryId && entry.kind !== "error";
    if (run && run.endedAt !== undefined && hidden && !placed.has(run.runId)) {
      placed.add(run.runId);
      rows.push({ kind: "worked", run, hidden: 0 });
    }
    if (hidden && run) hiddenCount.set(run.runId, (hiddenCount.get(run.runId) ?? 0) + 1);
    if (!(hidden && run?.collapsed)) {
      rows.push({ kind: "entry", entry });
      // Under a finished run's final answer: which agent and model gave it.
      if (run && run.endedAt !== undefined && entry.id === run.finalEntryId) rows.push({ kind: "footer", run });
    }
    if (entry.kind === "tool") for (const child of childrenOf.get(entry.id) ?? []) place(child);
  };
  for (const entry of state.entries) {
    if (entry.kind === "child" && entry.callId !== undefined && calls.has(entry.callId)) continue; // placed under its call
    place(entry);
  }
  for (const row of rows) if (row.kind === "worked") row.hidden = hiddenCount.get(row.run.runId) ?? 0;
  return rows;
}

/** "Worked for 1m 05s", "Working for 12s": a duration as the timeline shows it. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}
