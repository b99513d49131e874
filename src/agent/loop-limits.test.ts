import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ApprovalAnswer } from "../policy/approvals.ts";
import { removeWorkspaces, usageOf, call, toolStep, finalStep, run, byCall, ofType, lifecycle, lastToolParts, completedFor } from "./loop-test-support.ts";

// Cancellation, limits and guards, provider failures: split from loop.test.ts by responsibility.
afterEach(removeWorkspaces);

describe("runLoop: cancellation", () => {
  test("aborting while a tool runs cancels it and the run ends cancelled", async () => {
    const controller = new AbortController();
    const { events, result, counters, ws } = await run({
      mode: "full-access",
      controller,
      abortReason: "cancelled",
      onSleepyStart: () => setTimeout(() => controller.abort(), 5),
      script: [toolStep([call("c1", "sleepy", {}), call("c2", "edit", { path: "late.txt", content: "x" })])],
    });
    expect(counters.sleepy).toBe(1);
    expect(lifecycle(events, "c1")).toEqual(["tool.requested", "tool.started", "tool.completed"]);
    expect(completedFor(events, "c1").status).toBe("cancelled");
    // The call after the cancelled one is answered but never runs.
    expect(completedFor(events, "c2").status).toBe("cancelled");
    expect(lifecycle(events, "c2")).toEqual(["tool.requested", "tool.completed"]);
    expect(counters.edit).toBe(0);
    expect(existsSync(join(ws, "late.txt"))).toBe(false);
    expect(result.status).toBe("cancelled");
    expect(result.reason).toBe("cancelled");
    // The history still answers every call, so a resumed session is well-formed.
    expect(lastToolParts(result.history).map((p) => p.callId)).toEqual(["c1", "c2"]);
    expect(result.steps).toBe(1);
  });

  test("the deadline firing while a tool runs ends the run as a limit with reason deadline", async () => {
    const controller = new AbortController();
    const { events, result } = await run({
      mode: "full-access",
      controller,
      abortReason: "deadline",
      onSleepyStart: () => setTimeout(() => controller.abort(), 5),
      script: [toolStep([call("c1", "sleepy", {})])],
    });
    expect(completedFor(events, "c1").status).toBe("cancelled");
    expect(result.status).toBe("limit");
    expect(result.reason).toBe("deadline");
  });

  test("an abort during the model step ends the run cancelled without provider failure", async () => {
    const controller = new AbortController();
    const { events, result } = await run({
      mode: "full-access",
      controller,
      script: [
        () => {
          controller.abort();
          return {
            ok: false,
            aborted: true,
            failure: { category: "unavailable", message: "aborted", statusCode: null, retryAfterMs: null, retryable: false, url: null },
          };
        },
      ],
    });
    expect(result).toMatchObject({ status: "cancelled", reason: "cancelled" });
    expect(ofType(events, "run.failed")).toHaveLength(0);
  });

  test("cancelling while the user is being asked stops the run; the tool never runs", async () => {
    const controller = new AbortController();
    const { result, counters, ws } = await run({
      mode: "ask",
      controller,
      responder: (_req, signal) =>
        new Promise<ApprovalAnswer>((resolve) => {
          signal.addEventListener("abort", () => resolve("deny"), { once: true });
          setTimeout(() => controller.abort(), 5);
        }),
      script: [toolStep([call("c1", "edit", { path: "a.txt", content: "A" })])],
    });
    expect(counters.edit).toBe(0);
    expect(existsSync(join(ws, "a.txt"))).toBe(false);
    expect(result).toMatchObject({ status: "cancelled", reason: "cancelled" });
    expect(lastToolParts(result.history).map((p) => p.callId)).toEqual(["c1"]);
  });

  test("a signal already aborted before the run starts means no model request", async () => {
    const controller = new AbortController();
    controller.abort();
    const { requests, result } = await run({ mode: "full-access", controller, abortReason: "deadline", script: [] });
    expect(requests).toHaveLength(0);
    expect(result).toMatchObject({ status: "limit", reason: "deadline", steps: 0 });
  });
});

describe("runLoop: limits and guards", () => {
  test("maxSteps stops the run after that many model steps", async () => {
    const { requests, events, result } = await run({
      mode: "full-access",
      limits: { maxSteps: 2 },
      script: [
        toolStep([call("c1", "probe", { text: "1" })]),
        toolStep([call("c2", "probe", { text: "2" })]),
        toolStep([call("c3", "probe", { text: "3" })]),
      ],
    });
    expect(requests).toHaveLength(2);
    expect(result).toMatchObject({ status: "limit", reason: "max_steps", steps: 2, toolCalls: 2 });
    const guards = ofType(events, "guard.triggered");
    expect(guards).toHaveLength(1);
    expect(guards[0]!.guard).toBe("max_steps");
    expect(guards[0]!.message).toContain("2");
  });

  test("maxToolCalls: the over-limit call and later calls in the step are answered 'not executed'", async () => {
    const { requests, events, result, counters } = await run({
      mode: "full-access",
      limits: { maxToolCalls: 2 },
      script: [
        toolStep([
          call("c1", "probe", { text: "1" }),
          call("c2", "probe", { text: "2" }),
          call("c3", "probe", { text: "3" }),
          call("c4", "probe", { text: "4" }),
        ]),
        finalStep(),
      ],
    });
    expect(counters.probe).toBe(2);
    expect(requests).toHaveLength(1); // the run stopped; the model was not asked again
    expect(result).toMatchObject({ status: "limit", reason: "max_tool_calls", toolCalls: 2, steps: 1 });
    expect(byCall(ofType(events, "tool.completed")).map((e) => [e.callId, e.status])).toEqual([
      ["c1", "completed"],
      ["c2", "completed"],
      ["c3", "failed"],
      ["c4", "failed"],
    ]);
    expect(completedFor(events, "c3").output).toContain("not executed");
    expect(completedFor(events, "c3").output).toContain("tool-call limit");
    expect(completedFor(events, "c4").output).toContain("not executed");
    expect(ofType(events, "guard.triggered").map((g) => g.guard)).toEqual(["max_tool_calls"]);
    // Every call is still answered in the history the run hands back.
    expect(lastToolParts(result.history).map((p) => p.callId)).toEqual(["c1", "c2", "c3", "c4"]);
    expect(lifecycle(events, "c3")).toEqual(["tool.requested", "tool.completed"]);
  });

  test("maxToolCalls counts across steps", async () => {
    const { result, counters } = await run({
      mode: "full-access",
      limits: { maxToolCalls: 2 },
      script: [
        toolStep([call("c1", "probe", { text: "1" })]),
        toolStep([call("c2", "probe", { text: "2" })]),
        toolStep([call("c3", "probe", { text: "3" })]),
        finalStep(),
      ],
    });
    expect(counters.probe).toBe(2);
    expect(result).toMatchObject({ status: "limit", reason: "max_tool_calls", steps: 3 });
  });

  test("denied calls count toward maxToolCalls too", async () => {
    const { result, counters } = await run({
      mode: "read-only",
      limits: { maxToolCalls: 1 },
      script: [toolStep([call("c1", "edit", { path: "a", content: "a" }), call("c2", "probe", { text: "x" })]), finalStep()],
    });
    expect(counters.probe).toBe(0);
    expect(result).toMatchObject({ status: "limit", reason: "max_tool_calls" });
  });

  test("the third identical consecutive call is refused (key order in args does not matter)", async () => {
    const { events, result, counters, requests } = await run({
      mode: "full-access",
      script: [
        toolStep([call("c1", "probe", { a: 1, b: 2 })]),
        toolStep([call("c2", "probe", { b: 2, a: 1 })]),
        toolStep([call("c3", "probe", { a: 1, b: 2 })]),
        finalStep(),
      ],
    });
    expect(counters.probe).toBe(2);
    expect(requests).toHaveLength(3);
    expect(result).toMatchObject({ status: "limit", reason: "repetition", steps: 3 });
    const c3 = completedFor(events, "c3");
    expect(c3.status).toBe("failed");
    expect(c3.output).toContain("not executed");
    expect(ofType(events, "guard.triggered").map((g) => g.guard)).toEqual(["repetition"]);
  });

  test("identical calls interrupted by a different one do not trip the repetition guard", async () => {
    const { result, counters } = await run({
      mode: "full-access",
      script: [
        toolStep([call("c1", "probe", { a: 1 }), call("c2", "probe", { a: 1 })]),
        toolStep([call("c3", "probe", { a: 2 })]),
        toolStep([call("c4", "probe", { a: 1 }), call("c5", "probe", { a: 1 })]),
        finalStep(),
      ],
    });
    expect(counters.probe).toBe(5);
    expect(result).toMatchObject({ status: "completed", reason: null });
  });

  test("a different tool with the same input is not a repetition", async () => {
    const { result } = await run({
      mode: "full-access",
      script: [
        toolStep([call("c1", "probe", {}), call("c2", "boom", {}), call("c3", "probe", {}), call("c4", "boom", {})]),
        finalStep(),
      ],
    });
    expect(result.status).toBe("completed");
  });
});

describe("runLoop: provider failures, usage and history", () => {
  test("a provider failure emits run.failed and ends the run failed (provider_error)", async () => {
    const failure = {
      category: "auth" as const,
      message: "invalid api key",
      statusCode: 401,
      retryAfterMs: null,
      retryable: false,
      url: "http://127.0.0.1:1/v1/chat/completions",
    };
    const { events, result } = await run({
      mode: "full-access",
      script: [toolStep([call("c1", "probe", { text: "1" })]), { ok: false, aborted: false, failure }],
    });
    const failed = ofType(events, "run.failed");
    expect(failed).toHaveLength(1);
    const { url: _url, ...reported } = failure;
    expect(failed[0]!.error).toEqual({ kind: "provider", ...reported });
    expect(result.status).toBe("failed");
    expect(result.reason).toBe("provider_error");
    expect(result.failure).toEqual(failure);
    expect(result.steps).toBe(2);
  });

  test("usage accumulates across steps in usage.updated events and the result", async () => {
    const u1 = usageOf(100, 20, 5, 10);
    const u2 = usageOf(150, 30, 0, 90);
    const u3 = usageOf(7, 3, 1, 0);
    const { events, result } = await run({
      mode: "full-access",
      script: [
        toolStep([call("c1", "probe", { text: "1" })], { usage: u1 }),
        toolStep([call("c2", "probe", { text: "2" })], { usage: u2 }),
        finalStep("done", u3),
      ],
    });
    const updates = ofType(events, "usage.updated");
    expect(updates.map((u) => u.step)).toEqual([1, 2, 3]);
    expect(updates.map((u) => u.stepUsage)).toEqual([u1, u2, u3]);
    expect(updates[0]!.usage).toEqual(u1);
    expect(updates[1]!.usage).toEqual({ inputTokens: 250, outputTokens: 50, totalTokens: 300, reasoningTokens: 5, cachedInputTokens: 100 });
    const total = { inputTokens: 257, outputTokens: 53, totalTokens: 310, reasoningTokens: 6, cachedInputTokens: 100 };
    expect(updates[2]!.usage).toEqual(total);
    expect(result.usage).toEqual(total);
  });

  test("the model's text and reasoning stream as deltas, and the last step's text is the answer", async () => {
    const { events, result } = await run({
      mode: "full-access",
      script: [
        (req) => {
          req.onReasoning("thinking");
          req.onText("let me look");
          return toolStep([call("c1", "probe", { text: "1" })], { text: "let me look" });
        },
        (req) => {
          req.onText("all ");
          req.onText("done");
          return finalStep("all done");
        },
      ],
    });
    expect(ofType(events, "reasoning.delta").map((e) => [e.step, e.text])).toEqual([[1, "thinking"]]);
    expect(ofType(events, "message.delta").map((e) => [e.step, e.text])).toEqual([
      [1, "let me look"],
      [2, "all "],
      [2, "done"],
    ]);
    expect(result.text).toBe("all done");
  });

  test("each request carries the growing history; the caller's array is not mutated", async () => {
    const { requests, result, history, historyBefore } = await run({
      mode: "full-access",
      script: [toolStep([call("c1", "probe", { text: "1" })]), finalStep("bye")],
    });
    expect(requests[0]).toEqual([{ role: "user", parts: [{ type: "text", text: "please do the thing" }] }]);
    expect(requests[1]!.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(result.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(result.history.at(-1)).toEqual({ role: "assistant", parts: [{ type: "text", text: "bye" }] });
    expect(history).toEqual(historyBefore);
  });

  test("a model that calls no tools completes in one step", async () => {
    const { events, result } = await run({ mode: "ask", script: [finalStep("hi")] });
    expect(result).toMatchObject({ status: "completed", reason: null, text: "hi", steps: 1, toolCalls: 0 });
    expect(events.map((e) => e.type)).toEqual(["step.started", "usage.updated", "step.completed"]);
    expect(ofType(events, "step.completed")[0]).toMatchObject({ step: 1, finishReason: "stop", toolCalls: 0 });
  });
});
