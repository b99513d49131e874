import { describe, expect, test } from "bun:test";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { addDecision, addUserTurn, applyEvent, clearTimeline, emptyTimeline, formatDuration, toggleRun, visibleRows, type TimelineState } from "./timeline.ts";

let sequence = 0;
function event(runId: string, body: Record<string, unknown>): RuntimeEvent {
  return { eventId: crypto.randomUUID(), sequence: ++sequence, timestamp: new Date().toISOString(), runId, ...body } as unknown as RuntimeEvent;
}
const started = (runId: string) => event(runId, { type: "run.started", agent: "build", model: { alias: "fast", provider: "openai", model: "gpt" }, parentRunId: null, rootRunId: runId });
const delta = (runId: string, text: string, type = "message.delta") => event(runId, { type, step: 1, text });
const completed = (runId: string, durationMs = 65_000, extra: Record<string, unknown> = {}) =>
  event(runId, { type: "run.completed", status: "completed", reason: "completed", exitCode: 0, text: "", usage: {}, steps: 2, toolCalls: 1, durationMs, ...extra });

function run(state: TimelineState, events: RuntimeEvent[], now = 1_000_000) {
  for (const e of events) applyEvent(state, e, now);
}

describe("timeline reducer", () => {
  test("streamed deltas grow one entry per run and kind; a tool row follows its call through to its result", () => {
    const state = emptyTimeline();
    addUserTurn(state, "fix the bug", ["src/a.ts"]);
    run(state, [
      started("r1"),
      delta("r1", "Let me ", "reasoning.delta"),
      delta("r1", "look", "reasoning.delta"),
      delta("r1", "Looking"),
      delta("r1", " now."),
      event("r1", { type: "tool.requested", step: 1, callId: "c1", tool: "run", input: { command: "ls" }, risk: "execute", operation: "execute", target: "ls" }),
      event("r1", { type: "tool.started", callId: "c1", tool: "run" }),
      event("r1", { type: "tool.progress", callId: "c1", tool: "run", message: "listing" }),
    ]);
    expect(state.entries.map((e) => e.kind)).toEqual(["user", "reasoning", "assistant", "tool"]);
    expect(state.entries[1]).toMatchObject({ text: "Let me look" });
    expect(state.entries[2]).toMatchObject({ text: "Looking now." });
    expect(state.entries[3]).toMatchObject({ status: "running", progress: "listing", target: "ls" });
    run(state, [event("r1", { type: "tool.completed", callId: "c1", tool: "run", status: "completed", output: "a\nb", truncated: false, durationMs: 12, diff: undefined })]);
    expect(state.entries[3]).toMatchObject({ status: "completed", output: "a\nb", durationMs: 12 });
    expect(state.entries[3]).not.toHaveProperty("progress");
    expect(state.activeRunId).toBe("r1");
  });

  test("a finished run collapses its work under one 'worked' row; the final answer stays; toggling shows it again", () => {
    const state = emptyTimeline();
    addUserTurn(state, "task");
    run(state, [
      started("r1"),
      delta("r1", "thinking", "reasoning.delta"),
      event("r1", { type: "tool.requested", step: 1, callId: "c1", tool: "read", input: { path: "a" }, risk: "read", operation: "read", target: "a" }),
      event("r1", { type: "tool.completed", callId: "c1", tool: "read", status: "completed", output: "x", truncated: false, durationMs: 1 }),
      delta("r1", "The answer."),
      completed("r1", 65_000, { costUsd: 0.25 }),
    ]);
    expect(state.activeRunId).toBeUndefined();
    expect(state.costUsd).toBe(0.25);
    const rows = visibleRows(state);
    expect(rows.map((r) => (r.kind === "worked" ? `worked:${r.hidden}` : r.kind === "footer" ? `footer:${r.run.agent}` : r.entry.kind))).toEqual(["user", "worked:2", "assistant", "footer:build"]);
    toggleRun(state, "r1");
    expect(visibleRows(state).map((r) => (r.kind === "entry" ? r.entry.kind : r.kind))).toEqual(["user", "worked", "reasoning", "tool", "assistant", "footer"]);
    expect(formatDuration(state.runs.r1!.endedAt! - state.runs.r1!.startedAt)).toBe("1m 05s");
  });

  test("a run that only answered has nothing to collapse; a running run is never collapsed", () => {
    const state = emptyTimeline();
    run(state, [started("r1"), delta("r1", "Just text."), completed("r1")]);
    expect(visibleRows(state).map((r) => r.kind)).toEqual(["entry", "footer"]);
    run(state, [started("r2"), delta("r2", "x", "reasoning.delta")]);
    toggleRun(state, "r2");
    expect(state.runs.r2!.collapsed).toBe(false);
  });

  test("children show as rows of their own; their inner events are not the timeline's", () => {
    const state = emptyTimeline();
    run(state, [
      started("r1"),
      event("r1", { type: "agent.spawned", callId: "d1", childRunId: "k1", taskId: "t", taskName: "map the repo", agent: "explore", deliverable: "x", workspaceMode: "shared", permissionMode: "read-only", background: false, followUp: false }),
      event("k1", { type: "message.delta", step: 1, text: "child text", parentRunId: "r1", rootRunId: "r1" }),
      event("r1", { type: "agent.completed", childRunId: "k1", taskId: "t", status: "completed", result: { summary: "found 3 modules" } }),
    ]);
    expect(state.entries).toEqual([{ kind: "child", id: "k1", runId: "r1", agent: "explore", task: "map the repo", status: "completed", summary: "found 3 modules", callId: "d1" }]);
  });

  test("a child run is drawn under the delegate call that started it, even when another call came in between", () => {
    const state = emptyTimeline();
    const spawn = (callId: string, child: string) =>
      event("r1", { type: "agent.spawned", callId, childRunId: child, taskId: child, taskName: `task ${child}`, agent: "explore", deliverable: "x", workspaceMode: "shared", permissionMode: "read-only", background: false, followUp: false });
    const call = (callId: string, tool: string) => event("r1", { type: "tool.requested", step: 1, callId, tool, input: {}, risk: "read", operation: "read", target: null });
    run(state, [started("r1"), call("d1", "delegate"), call("f1", "find"), call("d2", "delegate"), spawn("d1", "k1"), spawn("d2", "k2"), spawn("gone", "k3")]);
    expect(visibleRows(state).map((r) => (r.kind === "entry" ? r.entry.id : r.kind))).toEqual(["d1", "k1", "f1", "d2", "k2", "k3"]);
  });

  test("failures, notices, decisions, the context gauge; clear keeps the run in flight", () => {
    const state = emptyTimeline();
    run(state, [
      started("r1"),
      event("r1", { type: "notice", source: "mcp", message: "server x unavailable" }),
      event("r1", { type: "context.updated", tokens: 1200, window: 200000, percent: 0.6, compacted: false }),
    ]);
    addDecision(state, "run", "always", "r1");
    run(state, [event("r1", { type: "run.failed", error: { kind: "provider", category: "rate_limit", message: "429 slow down", statusCode: 429, retryAfterMs: null, retryable: true } })]);
    expect(state.entries.map((e) => e.kind)).toEqual(["notice", "decision", "error"]);
    expect(state.context).toEqual({ tokens: 1200, window: 200000, percent: 0.6 });
    clearTimeline(state);
    expect(state.entries).toEqual([]);
    expect(state.runs.r1).toBeDefined();
  });

  test("formatDuration", () => {
    expect([formatDuration(0), formatDuration(9_999), formatDuration(60_000), formatDuration(3_725_000)]).toEqual(["0s", "9s", "1m 00s", "1h 02m"]);
  });
});
