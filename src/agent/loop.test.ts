import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ApprovalAnswer, ApprovalRequest } from "../policy/approvals.ts";
import { removeWorkspaces, call, toolStep, finalStep, run, byCall, ofType, lifecycle, lastToolParts, allToolResults, completedFor } from "./loop-test-support.ts";

afterEach(removeWorkspaces);

describe("runLoop: permissions", () => {
  test("headless ask mode denies a write with no-responder, answers the model, and continues", async () => {
    const { ws, counters, requests, events, result } = await run({
      mode: "ask",
      script: [toolStep([call("c1", "edit", { path: "out.txt", content: "hello" })]), finalStep("gave up")],
    });

    expect(lifecycle(events, "c1")).toEqual(["tool.requested", "permission.requested", "permission.decided", "tool.completed"]);
    const requested = ofType(events, "tool.requested")[0]!;
    expect(requested).toMatchObject({ step: 1, tool: "edit", risk: "write", operation: "write-edit", input: { path: "out.txt", content: "hello" } });
    const asked = ofType(events, "permission.requested")[0]!;
    expect(asked).toMatchObject({ tool: "edit", risk: "write", operation: "write-edit", permissionMode: "ask" });
    const decided = ofType(events, "permission.decided")[0]!;
    expect(decided).toMatchObject({ callId: "c1", decision: "deny", source: "no-responder" });
    expect(decided.reason).toContain("--permission-mode");
    const completed = completedFor(events, "c1");
    expect(completed.status).toBe("denied");
    expect(completed.output).toContain(decided.reason);

    // The tool did not run.
    expect(counters.edit).toBe(0);
    expect(existsSync(join(ws, "out.txt"))).toBe(false);

    // The model is told, in the next request, that the call was denied.
    expect(requests).toHaveLength(2);
    const parts = lastToolParts(requests[1]!);
    expect(parts).toEqual([
      { type: "tool-result", callId: "c1", tool: "edit", output: { type: "execution-denied", reason: decided.reason } },
    ]);

    expect(result).toMatchObject({ status: "completed", reason: null, text: "gave up", steps: 2, toolCalls: 1 });
    expect(ofType(events, "step.started").map((e) => e.step)).toEqual([1, 2]);
  });

  test("read-only mode denies a write by mode, without asking", async () => {
    let asked = 0;
    const { ws, counters, events, result, requests } = await run({
      mode: "read-only",
      responder: async () => {
        asked += 1;
        return "always";
      },
      script: [toolStep([call("c1", "edit", { path: "out.txt", content: "x" })]), finalStep()],
    });
    expect(lifecycle(events, "c1")).toEqual(["tool.requested", "permission.decided", "tool.completed"]);
    expect(ofType(events, "permission.requested")).toHaveLength(0);
    const decided = ofType(events, "permission.decided")[0]!;
    expect(decided).toMatchObject({ decision: "deny", source: "mode" });
    expect(decided.reason).toContain("read-only");
    expect(completedFor(events, "c1").status).toBe("denied");
    expect(asked).toBe(0);
    expect(counters.edit).toBe(0);
    expect(existsSync(join(ws, "out.txt"))).toBe(false);
    expect(lastToolParts(requests[1]!)[0]!.output).toEqual({ type: "execution-denied", reason: decided.reason });
    expect(result.status).toBe("completed");
  });

  test("accept-edits runs a write: requested → started → completed, and the file exists", async () => {
    const { ws, events, requests, result } = await run({
      mode: "accept-edits",
      script: [toolStep([call("c1", "edit", { path: "out.txt", content: "hello" })]), finalStep()],
    });
    expect(lifecycle(events, "c1")).toEqual(["tool.requested", "tool.started", "tool.completed"]);
    expect(completedFor(events, "c1")).toMatchObject({ status: "completed", output: "wrote out.txt", truncated: false });
    expect(readFileSync(join(ws, "out.txt"), "utf8")).toBe("hello");
    expect(lastToolParts(requests[1]!)).toEqual([
      { type: "tool-result", callId: "c1", tool: "edit", output: { type: "text", value: "wrote out.txt" } },
    ]);
    expect(result.status).toBe("completed");
  });

  test("a read is allowed in ask mode without any permission event", async () => {
    const { events, counters } = await run({ mode: "ask", script: [toolStep([call("c1", "probe", { text: "hi" })]), finalStep()] });
    expect(lifecycle(events, "c1")).toEqual(["tool.requested", "tool.started", "tool.completed"]);
    expect(counters.probe).toBe(1);
  });

  test("a responder answering 'always' is asked once per target; the same target later is allowed from the session", async () => {
    const seen: ApprovalRequest[] = [];
    const { ws, events, result } = await run({
      mode: "ask",
      responder: async (req) => {
        seen.push(req);
        return "always";
      },
      script: [
        toolStep([call("c1", "edit", { path: "a.txt", content: "A" })]),
        toolStep([call("c2", "edit", { path: "a.txt", content: "AA" })]),
        toolStep([call("c3", "edit", { path: "b.txt", content: "B" })]),
        finalStep(),
      ],
    });
    // Approving edits of a.txt "always" does not approve edits of b.txt.
    expect(seen.map((r) => r.callId)).toEqual(["c1", "c3"]);
    expect(seen[0]).toMatchObject({ tool: "edit", risk: "write", operation: "write-edit", target: "a.txt", input: { path: "a.txt", content: "A" } });
    const decisions = ofType(events, "permission.decided");
    expect(decisions.map((d) => [d.callId, d.decision, d.source])).toEqual([
      ["c1", "allow", "always"],
      ["c2", "allow", "session"],
      ["c3", "allow", "always"],
    ]);
    // Nobody is asked the second time, so no surface should show a prompt for it.
    expect(ofType(events, "permission.requested").map((r) => r.callId)).toEqual(["c1", "c3"]);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("AA");
    expect(readFileSync(join(ws, "b.txt"), "utf8")).toBe("B");
    expect(completedFor(events, "c2").status).toBe("completed");
    expect(result.status).toBe("completed");
  });

  test("a responder answering 'deny' stops the call; 'once' lets it run", async () => {
    const answers: ApprovalAnswer[] = ["deny", "once"];
    const { ws, events } = await run({
      mode: "ask",
      responder: async () => answers.shift() ?? "deny",
      script: [
        toolStep([call("c1", "edit", { path: "a.txt", content: "A" })]),
        toolStep([call("c2", "edit", { path: "b.txt", content: "B" })]),
        finalStep(),
      ],
    });
    expect(completedFor(events, "c1").status).toBe("denied");
    expect(completedFor(events, "c2").status).toBe("completed");
    expect(existsSync(join(ws, "a.txt"))).toBe(false);
    expect(existsSync(join(ws, "b.txt"))).toBe(true);
  });
});

describe("runLoop: answering calls", () => {
  test("several calls in one step are answered in call order with matching ids", async () => {
    const { requests, events, counters } = await run({
      mode: "ask",
      script: [
        toolStep([
          call("c1", "probe", { text: "one" }),
          call("c2", "edit", { path: "x.txt", content: "x" }),
          call("c3", "boom", {}),
          call("c4", "probe", { text: "four" }),
        ]),
        finalStep(),
      ],
    });
    const parts = lastToolParts(requests[1]!);
    expect(parts.map((p) => [p.callId, p.tool, p.output.type])).toEqual([
      ["c1", "probe", "text"],
      ["c2", "edit", "execution-denied"],
      ["c3", "boom", "error-text"],
      ["c4", "probe", "text"],
    ]);
    expect(parts[0]!.output).toEqual({ type: "text", value: 'probe {"text":"one"}' });
    expect(parts[3]!.output).toEqual({ type: "text", value: 'probe {"text":"four"}' });
    expect(byCall(ofType(events, "tool.completed")).map((e) => [e.callId, e.status])).toEqual([
      ["c1", "completed"],
      ["c2", "denied"],
      ["c3", "failed"],
      ["c4", "completed"],
    ]);
    expect(counters.probe).toBe(2);
    // The results come right after the assistant message that made the calls, as one tool message.
    const second = requests[1]!;
    expect(second).toHaveLength(3);
    expect(second[1]!.role).toBe("assistant");
  });

  test("a thrown tool error becomes a failed result carrying the message, and the run continues", async () => {
    const { requests, events, result, counters } = await run({
      mode: "full-access",
      script: [toolStep([call("c1", "boom", {})]), finalStep("recovered")],
    });
    expect(counters.boom).toBe(1);
    const completed = completedFor(events, "c1");
    expect(completed.status).toBe("failed");
    expect(completed.output).toContain("kaboom: the disk is on fire");
    expect(lastToolParts(requests[1]!)[0]!.output).toEqual({ type: "error-text", value: completed.output });
    expect(result).toMatchObject({ status: "completed", text: "recovered", steps: 2 });
  });

  test("a call past the per-call timeout fails as timed out and the run continues", async () => {
    const { requests, events, result, counters } = await run({
      mode: "full-access",
      limits: { toolTimeoutMs: 40 },
      script: [toolStep([call("c1", "sleepy", {})]), finalStep("after the timeout")],
    });
    expect(counters.sleepy).toBe(1);
    const completed = completedFor(events, "c1");
    expect(completed.status).toBe("failed");
    expect(completed.output).toContain("timed out");
    expect(completed.output).toContain("40");
    const part = lastToolParts(requests[1]!)[0]!;
    expect(part.output.type).toBe("error-text");
    expect(result).toMatchObject({ status: "completed", reason: null, text: "after the timeout" });
  });

  test("a call that finishes within its timeout completes", async () => {
    const { events } = await run({
      mode: "full-access",
      limits: { toolTimeoutMs: 5_000 },
      script: [toolStep([call("c1", "nap", {})]), finalStep()],
    });
    expect(completedFor(events, "c1")).toMatchObject({ status: "completed", output: "rested" });
  });

  // BUG (src/tool/define.ts, run(): `setTimeout(() => timeout.abort(), ctx.timeoutMs)`): timers
  // take a 32-bit signed delay, so any toolTimeoutMs above 2147483647 (which the config schema
  // accepts: `toolTimeoutMs: posInt`) is clamped to 1 ms and every call that takes longer
  // than a millisecond "times out". The same applies to runTimeoutMs in src/session/run.ts.
  test("a very large toolTimeoutMs (beyond 2^31-1 ms) does not time calls out at once", async () => {
    const { events } = await run({
      mode: "full-access",
      limits: { toolTimeoutMs: 3_000_000_000 },
      script: [toolStep([call("c1", "nap", {})]), finalStep()],
    });
    expect(completedFor(events, "c1")).toMatchObject({ status: "completed", output: "rested" });
  });

  test("invalid calls (unknown or known tool) are answered once, by the loop", async () => {
    const { requests, events, result, counters } = await run({
      mode: "full-access",
      script: [
        toolStep([
          call("bad1", "nosuch", { x: 1 }, "Model tried to call unavailable tool 'nosuch'"),
          call("bad2", "probe", "{not json", "JSON parse error: unexpected token"),
          call("ok1", "probe", { text: "fine" }),
        ]),
        finalStep(),
      ],
    });

    const bad1 = completedFor(events, "bad1");
    expect(bad1.status).toBe("failed");
    expect(bad1.output).toContain("nosuch");
    expect(bad1.output).toContain("probe"); // names what is available
    const bad2 = completedFor(events, "bad2");
    expect(bad2.status).toBe("failed");
    expect(bad2.output).toBe("invalid call to probe: its arguments are not valid JSON");
    expect(completedFor(events, "ok1").status).toBe("completed");
    // Neither invalid call reached a tool, and none got a started event.
    expect(counters.probe).toBe(1);
    expect(lifecycle(events, "bad1")).toEqual(["tool.requested", "tool.completed"]);
    expect(lifecycle(events, "bad2")).toEqual(["tool.requested", "tool.completed"]);
    expect(ofType(events, "tool.requested").find((e) => e.callId === "bad1")).toMatchObject({ risk: null, operation: null });

    // Every call is answered exactly once in what the model is sent next.
    const next = requests[1]!;
    expect(allToolResults(next).map((p) => p.callId)).toEqual(["bad1", "bad2", "ok1"]);
    expect(next.filter((m) => m.role === "tool")).toHaveLength(1);
    // The history records each call's final state on the assistant message that made it.
    const assistant = next.find((m) => m.role === "assistant")!;
    expect(assistant.parts.map((p) => (p.type === "tool-call" ? [p.callId, p.state] : p.type))).toEqual([
      ["bad1", "failed"],
      ["bad2", "failed"],
      ["ok1", "completed"],
    ]);
    expect(result.status).toBe("completed");
  });

  test("a valid call to a tool the agent was not given fails and names the agent", async () => {
    const { events, result } = await run({
      mode: "full-access",
      script: [toolStep([call("c1", "bash", { command: "ls" })]), finalStep()],
    });
    const completed = completedFor(events, "c1");
    expect(completed.status).toBe("failed");
    expect(completed.output).toContain("bash");
    expect(completed.output).toContain("tester");
    expect(result.status).toBe("completed");
  });

  test("input that fails the tool's schema is a failed result naming the field", async () => {
    const { events, counters } = await run({
      mode: "full-access",
      script: [toolStep([call("c1", "edit", { path: 42 })]), finalStep()],
    });
    const completed = completedFor(events, "c1");
    expect(completed.status).toBe("failed");
    expect(completed.output).toContain("path");
    expect(counters.edit).toBe(0);
    expect(ofType(events, "tool.requested")[0]).toMatchObject({ risk: null, operation: null });
  });
});
