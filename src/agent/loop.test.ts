import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { PermissionMode } from "../config/schema.ts";
import type { ModelRunner, StepOutcome, StepRequest, StepToolCall } from "../llm/step.ts";
import { type ApprovalAnswer, type ApprovalRequest, createApprovalBroker } from "../policy/approvals.ts";
import { MODE_RULES } from "../policy/rules.ts";
import type { EventBody, StopReason, Usage } from "../protocol/events.ts";
import type { ModelMessage, ToolResultPart } from "../protocol/messages.ts";
import { createRoots, resolveInRoots } from "../security/roots.ts";
import { createRedactor } from "../security/redact.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { type Tool, defineTool } from "../tool/define.ts";
import { type LoopLimits, type LoopResult, runLoop } from "./loop.ts";

// ---------------------------------------------------------------------------
// Workspace

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempWorkspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "zero-loop-")));
  dirs.push(dir);
  return dir;
}

// ---------------------------------------------------------------------------
// Test tools

type Counters = { edit: number; probe: number; sleepy: number; boom: number; nap: number };

function makeTools(counters: Counters, hooks: { onSleepyStart?: () => void } = {}): Map<string, Tool> {
  const edit = defineTool({
    name: "edit",
    description: "write a file",
    input: z.object({ path: z.string(), content: z.string() }),
    classify: () => ({ risk: "write", operation: "write-edit" }),
    async execute({ path, content }, ctx) {
      counters.edit += 1;
      const checked = resolveInRoots(ctx.roots, path, "write");
      if (!checked.ok) throw new Error(checked.error);
      await writeFile(checked.value.path, content);
      return { output: `wrote ${path}` };
    },
  });
  const probe = defineTool({
    name: "probe",
    description: "echo its input",
    input: z.object({ a: z.number().optional(), b: z.number().optional(), text: z.string().optional() }),
    classify: () => ({ risk: "read", operation: "read" }),
    async execute(input) {
      counters.probe += 1;
      return { output: `probe ${JSON.stringify(input)}` };
    },
  });
  const sleepy = defineTool({
    name: "sleepy",
    description: "waits until stopped",
    input: z.object({}),
    classify: () => ({ risk: "read", operation: "read" }),
    async execute(_input, ctx) {
      counters.sleepy += 1;
      hooks.onSleepyStart?.();
      await new Promise<void>((_resolve, reject) => {
        if (ctx.signal.aborted) reject(new Error("aborted"));
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
      return { output: "woke up (should not happen)" };
    },
  });
  const boom = defineTool({
    name: "boom",
    description: "always throws",
    input: z.object({}),
    classify: () => ({ risk: "read", operation: "read" }),
    async execute() {
      counters.boom += 1;
      throw new Error("kaboom: the disk is on fire");
    },
  });
  const nap = defineTool({
    name: "nap",
    description: "takes 30 ms, then answers",
    input: z.object({}),
    classify: () => ({ risk: "read", operation: "read" }),
    async execute(_input, ctx) {
      counters.nap += 1;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 30);
        ctx.signal.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("aborted"))), { once: true });
      });
      return { output: "rested" };
    },
  });
  return new Map([edit, probe, sleepy, boom, nap].map((tool) => [tool.name, tool]));
}

// ---------------------------------------------------------------------------
// Scripted model

function usageOf(input: number, output: number, reasoning = 0, cached = 0): Usage {
  return { inputTokens: input, outputTokens: output, totalTokens: input + output, reasoningTokens: reasoning, cachedInputTokens: cached };
}

function call(callId: string, tool: string, input: unknown, invalid?: string): StepToolCall {
  return { callId, tool, input, ...(invalid !== undefined ? { invalid } : {}) };
}

/** A model step that makes the given calls (the assistant message carries them, as the SDK's would). */
function toolStep(calls: StepToolCall[], options: { usage?: Usage; text?: string; extra?: ModelMessage[] } = {}): StepOutcome {
  const text = options.text ?? "";
  return {
    ok: true,
    text,
    toolCalls: calls,
    responseMessages: [
      {
        role: "assistant",
        content: [
          ...(text ? [{ type: "text", text }] : []),
          ...calls.map((c) => ({ type: "tool-call", toolCallId: c.callId, toolName: c.tool, input: c.input })),
        ],
      },
      ...(options.extra ?? []),
    ],
    usage: options.usage ?? usageOf(10, 5),
    finishReason: "tool-calls",
  };
}

function finalStep(text = "done", usage: Usage = usageOf(10, 5)): StepOutcome {
  return { ok: true, text, toolCalls: [], responseMessages: [{ role: "assistant", content: text }], usage, finishReason: "stop" };
}

type Script = StepOutcome | ((request: StepRequest) => StepOutcome | Promise<StepOutcome>);

function scriptedRunner(script: Script[]) {
  const requests: ModelMessage[][] = [];
  const runner: ModelRunner = {
    identity: { alias: "fake", provider: "fake", model: "fake-1" },
    async step(request) {
      // The loop keeps appending to the array it passed; keep what the model saw at this moment.
      requests.push(structuredClone(request.messages));
      const next = script.shift();
      if (next === undefined) throw new Error(`model called more often than scripted (request ${requests.length})`);
      return typeof next === "function" ? next(request) : next;
    },
  };
  return { runner, requests };
}

// ---------------------------------------------------------------------------
// Running the loop

type RunOptions = {
  script: Script[];
  mode?: PermissionMode;
  responder?: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;
  limits?: Partial<LoopLimits>;
  controller?: AbortController;
  abortReason?: StopReason;
  onSleepyStart?: () => void;
  history?: ModelMessage[];
};

async function run(options: RunOptions) {
  const ws = tempWorkspace();
  const counters: Counters = { edit: 0, probe: 0, sleepy: 0, boom: 0, nap: 0 };
  const tools = makeTools(counters, { onSleepyStart: options.onSleepyStart });
  const { runner, requests } = scriptedRunner(options.script);
  const events: EventBody[] = [];
  const controller = options.controller ?? new AbortController();
  const mode = options.mode ?? "ask";
  const history: ModelMessage[] = options.history ?? [{ role: "user", content: "please do the thing" }];
  const historyBefore = structuredClone(history);
  const result: LoopResult = await runLoop({
    agent: "tester",
    runner,
    instructions: "you are a test",
    history,
    tools,
    permissionMode: mode,
    rules: MODE_RULES[mode],
    approvals: createApprovalBroker(options.responder),
    roots: createRoots({ workspace: ws }),
    services: { env: {}, artifacts: createArtifactStore(join(ws, ".artifacts")), redactor: createRedactor() },
    modelCapabilities: ["text", "tools"],
    limits: { maxSteps: 10, maxToolCalls: 50, toolTimeoutMs: 10_000, maxAttachmentBytes: 1024 * 1024, ...options.limits },
    signal: controller.signal,
    abortReason: () => options.abortReason ?? "cancelled",
    emit: (body) => events.push(body),
  });
  return { ws, counters, requests, events, result, history, historyBefore };
}

/** Read-only calls run in parallel, so completions interleave: compare them in call order. */
function byCall<E extends { callId: string }>(events: E[]): E[] {
  return [...events].sort((a, b) => a.callId.localeCompare(b.callId, "en", { numeric: true }));
}

function ofType<T extends EventBody["type"]>(events: EventBody[], type: T): Extract<EventBody, { type: T }>[] {
  return events.filter((e): e is Extract<EventBody, { type: T }> => e.type === type);
}

/** The lifecycle of one call, as event types in order. */
function lifecycle(events: EventBody[], callId: string): string[] {
  return events.filter((e) => "callId" in e && e.callId === callId).map((e) => e.type);
}

function lastToolParts(messages: ModelMessage[]): ToolResultPart[] {
  const last = messages.at(-1);
  if (!last || last.role !== "tool") throw new Error(`expected the history to end with a tool message, got ${JSON.stringify(last)}`);
  return last.content;
}

function allToolResults(messages: ModelMessage[]): ToolResultPart[] {
  return messages.flatMap((m) => (m.role === "tool" ? m.content : []));
}

function completedFor(events: EventBody[], callId: string) {
  const found = ofType(events, "tool.completed").filter((e) => e.callId === callId);
  expect(found).toHaveLength(1);
  return found[0]!;
}

// ---------------------------------------------------------------------------

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
      { type: "tool-result", toolCallId: "c1", toolName: "edit", output: { type: "execution-denied", reason: decided.reason } },
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
      { type: "tool-result", toolCallId: "c1", toolName: "edit", output: { type: "text", value: "wrote out.txt" } },
    ]);
    expect(result.status).toBe("completed");
  });

  test("a read is allowed in ask mode without any permission event", async () => {
    const { events, counters } = await run({ mode: "ask", script: [toolStep([call("c1", "probe", { text: "hi" })]), finalStep()] });
    expect(lifecycle(events, "c1")).toEqual(["tool.requested", "tool.started", "tool.completed"]);
    expect(counters.probe).toBe(1);
  });

  test("a responder answering 'always' is asked once; the same operation later is allowed from the session", async () => {
    const seen: ApprovalRequest[] = [];
    const { ws, events, result } = await run({
      mode: "ask",
      responder: async (req) => {
        seen.push(req);
        return "always";
      },
      script: [
        toolStep([call("c1", "edit", { path: "a.txt", content: "A" })]),
        toolStep([call("c2", "edit", { path: "b.txt", content: "B" })]),
        finalStep(),
      ],
    });
    expect(seen.map((r) => r.callId)).toEqual(["c1"]);
    expect(seen[0]).toMatchObject({ tool: "edit", risk: "write", operation: "write-edit", input: { path: "a.txt", content: "A" } });
    const decisions = ofType(events, "permission.decided");
    expect(decisions.map((d) => [d.callId, d.decision, d.source])).toEqual([
      ["c1", "allow", "always"],
      ["c2", "allow", "session"],
    ]);
    // Nobody is asked the second time, so no surface should show a prompt for it.
    expect(ofType(events, "permission.requested").map((r) => r.callId)).toEqual(["c1"]);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("A");
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
    expect(parts.map((p) => [p.toolCallId, p.toolName, p.output.type])).toEqual([
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

  test("invalid calls (unknown or known tool) are answered once, by the loop, and the SDK's answers are dropped", async () => {
    const sdkAnswers: ModelMessage = {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "bad1", toolName: "nosuch", output: { type: "error-text", value: "SDK: no such tool" } },
        { type: "tool-result", toolCallId: "bad2", toolName: "probe", output: { type: "error-text", value: "SDK: bad JSON" } },
      ],
    };
    const { requests, events, result, counters } = await run({
      mode: "full-access",
      script: [
        toolStep(
          [
            call("bad1", "nosuch", { x: 1 }, "Model tried to call unavailable tool 'nosuch'"),
            call("bad2", "probe", "{not json", "JSON parse error: unexpected token"),
            call("ok1", "probe", { text: "fine" }),
          ],
          { extra: [sdkAnswers] },
        ),
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

    // Every call is answered exactly once in what the model is sent next, and never by the SDK.
    const next = requests[1]!;
    const results = allToolResults(next);
    expect(results.map((p) => p.toolCallId)).toEqual(["bad1", "bad2", "ok1"]);
    expect(JSON.stringify(next)).not.toContain("SDK:");
    // The SDK's tool message, emptied, is gone entirely.
    expect(next.filter((m) => m.role === "tool")).toHaveLength(1);
    expect(result.status).toBe("completed");
  });

  test("the SDK's answers for other call ids are kept when invalid ones are removed", async () => {
    const mixed: ModelMessage = {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "bad1", toolName: "nosuch", output: { type: "error-text", value: "SDK: drop me" } },
        { type: "tool-result", toolCallId: "provider1", toolName: "web", output: { type: "text", value: "SDK: keep me" } },
      ],
    };
    const { requests } = await run({
      mode: "full-access",
      script: [toolStep([call("bad1", "nosuch", {}, "unavailable")], { extra: [mixed] }), finalStep()],
    });
    const results = allToolResults(requests[1]!);
    expect(results.map((p) => p.toolCallId).sort()).toEqual(["bad1", "provider1"]);
    expect(JSON.stringify(requests[1])).toContain("SDK: keep me");
    expect(JSON.stringify(requests[1])).not.toContain("SDK: drop me");
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
    expect(lastToolParts(result.history).map((p) => p.toolCallId)).toEqual(["c1", "c2"]);
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
    expect(lastToolParts(result.history).map((p) => p.toolCallId)).toEqual(["c1"]);
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
    expect(lastToolParts(result.history).map((p) => p.toolCallId)).toEqual(["c1", "c2", "c3", "c4"]);
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
    expect(requests[0]).toEqual([{ role: "user", content: "please do the thing" }]);
    expect(requests[1]!.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(result.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(result.history.at(-1)).toEqual({ role: "assistant", content: "bye" });
    expect(history).toEqual(historyBefore);
  });

  test("a model that calls no tools completes in one step", async () => {
    const { events, result } = await run({ mode: "ask", script: [finalStep("hi")] });
    expect(result).toMatchObject({ status: "completed", reason: null, text: "hi", steps: 1, toolCalls: 0 });
    expect(events.map((e) => e.type)).toEqual(["step.started", "usage.updated", "step.completed"]);
    expect(ofType(events, "step.completed")[0]).toMatchObject({ step: 1, finishReason: "stop", toolCalls: 0 });
  });
});
