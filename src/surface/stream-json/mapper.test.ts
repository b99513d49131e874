import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { runtimeEventSchema, type EventBody, type RuntimeEvent } from "../../protocol/events.ts";
import { outputEventSchema, type OutputEvent } from "../../protocol/stream-json.ts";
import { createRedactor } from "../../security/redact.ts";
import { createStreamJsonMapper, failedBeforeStart } from "./mapper.ts";

const GOLDEN = join(import.meta.dir, "testdata", "transcript.golden.jsonl");
const RUN_ID = "run_20260603_abc123";
const SESSION_ID = "zero_20260603100000_abc123";

/**
 * A GitHub-token-shaped string, built at run time so nothing secret-looking is committed.
 * Random: the golden file can only match if the token never reaches the output.
 */
function githubToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(36));
  return `ghp_${Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("")}`;
}

/** Stamps the envelope with fixed ids/times and checks the event against the internal schema, so hand-built events stay honest. */
function stamper() {
  let sequence = 0;
  return (body: EventBody): RuntimeEvent => {
    sequence++;
    const event = {
      eventId: `00000000-0000-4000-8000-${String(sequence).padStart(12, "0")}`,
      sequence,
      timestamp: new Date(Date.UTC(2026, 5, 3, 10, 0, sequence)).toISOString(),
      runId: RUN_ID,
      ...body,
    };
    return runtimeEventSchema.parse(event);
  };
}

const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output, totalTokens: input + output, reasoningTokens: 0, cachedInputTokens: 0 });

function runStarted(): EventBody {
  return {
    type: "run.started",
    sessionId: SESSION_ID,
    rootRunId: RUN_ID,
    parentRunId: null,
    surface: "exec",
    task: "Inspect this repo.",
    agent: "build",
    model: { alias: "default", provider: "openai", model: "gpt-4.1" },
    cwd: "/repo",
    roots: ["/repo"],
    permissionMode: "ask",
    workDepth: "medium",
    depth: 0,
    reasoningEffort: null,
    speed: null,
    budgets: { maxSteps: 50, maxToolCalls: 200, toolTimeoutMs: 120000, maxTokens: null, timeoutMs: 28800000, deadline: "2026-06-03T18:00:00.000Z" },
  };
}

function runCompleted(overrides: Partial<Extract<EventBody, { type: "run.completed" }>> = {}): EventBody {
  return { type: "run.completed", status: "completed", reason: null, exitCode: 0, text: "", usage: usage(12, 8), steps: 1, toolCalls: 0, durationMs: 1234, ...overrides };
}

/** The transcript of the golden file: an answer with a split token, a headless-denied write, a read. */
function goldenEvents(token: string): RuntimeEvent[] {
  const at = stamper();
  const head = token.slice(0, 10);
  const tail = token.slice(10);
  const answer = `Found a token ${token} in config; rotate it.`;
  const bodies: EventBody[] = [
    runStarted(),
    { type: "step.started", step: 1 },
    { type: "reasoning.delta", step: 1, text: "Looking at the config.\n" },
    { type: "message.delta", step: 1, text: `Found a token ${head}` },
    { type: "message.delta", step: 1, text: `${tail} in config;` },
    { type: "message.delta", step: 1, text: " rotate it." },
    { type: "usage.updated", step: 1, stepUsage: usage(12, 8), usage: usage(12, 8) },
    { type: "step.completed", step: 1, finishReason: "tool-calls", toolCalls: 2 },
    { type: "tool.requested", step: 1, callId: "call_2", tool: "write", input: { operation: "write", path: "notes.txt", content: "hi\n" }, risk: "write", operation: "write-edit" },
    { type: "permission.requested", callId: "call_2", tool: "write", risk: "write", operation: "write-edit", permissionMode: "ask", reason: "ask mode requires approval for editing files" },
    { type: "permission.decided", callId: "call_2", tool: "write", decision: "deny", source: "no-responder", reason: "no one to ask" },
    { type: "tool.completed", callId: "call_2", tool: "write", status: "denied", output: "denied: ask mode requires approval for editing files", truncated: false, durationMs: 0 },
    { type: "tool.requested", step: 1, callId: "call_1", tool: "read", input: { path: "README.md" }, risk: "read", operation: "read" },
    { type: "tool.started", callId: "call_1", tool: "read" },
    { type: "tool.completed", callId: "call_1", tool: "read", status: "completed", output: "1\t# Sample\n", truncated: false, durationMs: 3 },
    runCompleted({ text: answer, steps: 1, toolCalls: 2 }),
  ];
  return bodies.map(at);
}

function mapAll(events: RuntimeEvent[], knownSecrets: string[] = []): OutputEvent[] {
  const mapper = createStreamJsonMapper(createRedactor({ knownSecrets }));
  return events.flatMap((event) => mapper.map(event));
}

/** Every key path in a JSON value, for deep checks. */
function keysDeep(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysDeep);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysDeep(inner)]);
}

function expectValid(lines: OutputEvent[]): void {
  for (const line of lines) {
    const parsed = outputEventSchema.safeParse(line);
    if (!parsed.success) throw new Error(`invalid stream-json line ${JSON.stringify(line)}: ${parsed.error.message}`);
    expect(keysDeep(line)).not.toContain("violation");
    expect(line.schemaVersion).toBe(2);
    expect(line.runId).toBe(RUN_ID);
  }
}

describe("the golden transcript", () => {
  const token = githubToken();
  const lines = mapAll(goldenEvents(token));
  const serialized = lines.map((line) => JSON.stringify(line));

  test("matches testdata/transcript.golden.jsonl (UPDATE_GOLDEN=1 rewrites it)", () => {
    if (process.env.UPDATE_GOLDEN === "1") {
      mkdirSync(dirname(GOLDEN), { recursive: true });
      writeFileSync(GOLDEN, `${serialized.join("\n")}\n`);
    }
    if (!existsSync(GOLDEN)) throw new Error(`${GOLDEN} is missing: run with UPDATE_GOLDEN=1 to create it`);
    const golden = readFileSync(GOLDEN, "utf8").split("\n").filter((line) => line !== "");
    // Line by line, so a change in the mapping shows as a readable diff of the lines.
    expect(serialized).toEqual(golden);
  });

  test("every line validates against the public schema and none has a violation key", () => {
    expect(lines.length).toBeGreaterThan(0);
    expectValid(lines);
  });

  test("the token split across two deltas never appears whole; the marker does, in text and final", () => {
    for (const line of serialized) expect(line).not.toContain(token);
    const text = lines.filter((l) => l.type === "text").map((l) => (l as { delta: string }).delta).join("");
    expect(text).toBe("Found a token [REDACTED:github-token] in config; rotate it.");
    const final = lines.find((l) => l.type === "final") as { text: string } | undefined;
    expect(final?.text).toBe("Found a token [REDACTED:github-token] in config; rotate it.");
  });

  test("headless: the no-responder decision is not a permission_decision; the denial shows in tool_result", () => {
    expect(lines.map((l) => l.type)).not.toContain("permission_decision");
    const request = lines.findIndex((l) => l.type === "permission_request");
    const result = lines.findIndex((l) => l.type === "tool_result" && l.id === "call_2");
    expect(request).toBeGreaterThan(-1);
    expect(result).toBe(request + 1);
    expect(lines[result]).toMatchObject({ status: "denied" });
  });

  test("first run_start, last run_end success/0", () => {
    expect(lines[0]).toMatchObject({ type: "run_start", sessionId: SESSION_ID, cwd: "/repo", provider: "openai", model: "default", apiModel: "gpt-4.1" });
    expect(lines.at(-1)).toEqual({ schemaVersion: 2, runId: RUN_ID, type: "run_end", status: "success", exitCode: 0 });
    expect(lines.filter((l) => l.type === "run_end")).toHaveLength(1);
  });
});

describe("permission decisions from a responder", () => {
  for (const [source, decision, granted] of [
    ["once", "allow", true],
    ["always", "allow", true],
    ["once", "deny", false],
  ] as const) {
    test(`source ${source}, ${decision} → permission_decision permissionGranted ${granted}`, () => {
      const at = stamper();
      const lines = mapAll([
        at(runStarted()),
        at({ type: "permission.decided", callId: "call_7", tool: "run", decision, source, reason: "approved in TUI" }),
      ]);
      expectValid(lines);
      expect(lines[1]).toEqual({
        schemaVersion: 2,
        runId: RUN_ID,
        type: "permission_decision",
        id: "call_7",
        name: "run",
        action: decision,
        permission: "prompt",
        permissionGranted: granted,
        decisionReason: "approved in TUI",
      });
    });
  }

  test("a mode verdict is not a decision either", () => {
    const at = stamper();
    const lines = mapAll([at(runStarted()), at({ type: "permission.decided", callId: "c", tool: "run", decision: "deny", source: "mode", reason: "read-only" })]);
    expect(lines.map((l) => l.type)).toEqual(["run_start"]);
  });
});

describe("permission requests: risk and categories come from the call, never from the tool's name", () => {
  type Requested = Extract<EventBody, { type: "permission.requested" }>;
  const request = (fields: Partial<Requested>): Requested => ({
    type: "permission.requested",
    callId: "c1",
    tool: "anything",
    risk: "execute",
    operation: "execute",
    permissionMode: "ask",
    reason: "ask mode requires approval for running commands",
    ...fields,
  });
  const map = (fields: Partial<Requested>) => {
    const at = stamper();
    const lines = mapAll([at(runStarted()), at(request(fields))]);
    expectValid(lines);
    return lines[1] as Extract<OutputEvent, { type: "permission_request" }>;
  };

  test("a shell command that reaches the network: the protocol's example shape (critical, network)", () => {
    const line = map({ tool: "bash", target: "curl https://example.com", categories: ["shell", "network"], reason: "network access requires approval" });
    expect(line).toEqual({
      schemaVersion: 2,
      runId: RUN_ID,
      type: "permission_request",
      id: "c1",
      name: "bash",
      action: "prompt",
      permission: "prompt",
      permissionMode: "ask",
      sideEffect: "shell",
      reason: "network access requires approval",
      risk: { level: "critical", categories: ["network"] },
      block: { code: "network", toolName: "bash", action: "prompt", risk: { level: "critical", categories: ["network"] }, reason: "network access requires approval", recoverable: true },
    });
  });

  test("a local shell command: high, shell", () => {
    const line = map({ categories: ["shell"] });
    expect(line.sideEffect).toBe("shell");
    expect(line.risk).toEqual({ level: "high", categories: ["shell"] });
    expect(line.block?.code).toBe("shell");
  });

  test("a URL read: network side effect, critical", () => {
    const line = map({ tool: "read", risk: "network", operation: "network", categories: ["network"] });
    expect(line.sideEffect).toBe("network");
    expect(line.risk).toEqual({ level: "critical", categories: ["network"] });
  });

  test("a secret read: read side effect, high, secret", () => {
    const line = map({ tool: "read", risk: "read", operation: "read-secret", categories: ["secret"] });
    expect(line.sideEffect).toBe("read");
    expect(line.risk).toEqual({ level: "high", categories: ["secret"] });
    expect(line.block?.code).toBe("secret");
  });

  test("an edit: no structured risk", () => {
    const line = map({ tool: "write", risk: "write", operation: "write-edit", categories: [] });
    expect(line.risk).toBeUndefined();
    expect(line.block).toBeUndefined();
  });

  test("events without categories (written before them) get those their operation implies", () => {
    expect(map({}).risk).toEqual({ level: "high", categories: ["shell"] });
    expect(map({ risk: "network", operation: "network" }).risk).toEqual({ level: "critical", categories: ["network"] });
    expect(map({ risk: "write", operation: "write-sensitive" }).risk).toEqual({ level: "high", categories: ["secret"] });
    expect(map({ risk: "write", operation: "write-edit" }).risk).toBeUndefined();
  });

  test("tool_call: the side effect follows the risk; an unclassified call has none, whatever its name", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "tool.requested", step: 1, callId: "a", tool: "custom", input: {}, risk: "execute", operation: "execute", target: "ls", categories: ["shell"] }),
      at({ type: "tool.requested", step: 1, callId: "b", tool: "run", input: { nope: 1 }, risk: null, operation: null, target: null, categories: null }),
      at({ type: "tool.requested", step: 1, callId: "c", tool: "search", input: {}, risk: null, operation: null }),
    ]);
    expectValid(lines);
    expect(lines.slice(1).map((line) => (line as { sideEffect: string }).sideEffect)).toEqual(["shell", "read", "read"]);
  });
});

describe("runs that do not succeed", () => {
  test("a provider failure: held text, error provider_error, run_end error/3, no final", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "message.delta", step: 1, text: "partial" }),
      at({
        type: "run.failed",
        error: { kind: "provider", category: "unavailable", message: "provider unavailable (HTTP 500)", statusCode: 500, retryAfterMs: null, retryable: true },
      }),
      at(runCompleted({ status: "failed", reason: "provider_error", exitCode: 3, text: "partial" })),
    ]);
    expectValid(lines);
    expect(lines.map((l) => l.type)).toEqual(["run_start", "text", "error", "run_end"]);
    expect(lines[1]).toMatchObject({ delta: "partial" });
    expect(lines[2]).toMatchObject({ code: "provider_error", message: "provider unavailable (HTTP 500)", recoverable: false });
    expect(lines[3]).toMatchObject({ status: "error", exitCode: 3 });
  });

  test("an internal failure: error internal, run_end error/1", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "run.failed", error: { kind: "internal", category: null, message: "boom", statusCode: null, retryAfterMs: null, retryable: false } }),
      at(runCompleted({ status: "failed", reason: "internal_error", exitCode: 1 })),
    ]);
    expectValid(lines);
    expect(lines.slice(1)).toMatchObject([
      { type: "error", code: "internal", message: "boom" },
      { type: "run_end", status: "error", exitCode: 1 },
    ]);
  });

  test("a limit stop: error limit_reached with the guard's message, run_end 4, no final", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "guard.triggered", guard: "max_steps", message: "the run reached its step limit (50)" }),
      at(runCompleted({ status: "limit", reason: "max_steps", exitCode: 4, text: "half" })),
    ]);
    expectValid(lines);
    expect(lines.map((l) => l.type)).toEqual(["run_start", "error", "run_end"]);
    expect(lines[1]).toMatchObject({ code: "limit_reached", message: "the run reached its step limit (50)", recoverable: false });
    expect(lines[2]).toMatchObject({ status: "error", exitCode: 4 });
  });

  test("a limit stop without a guard event still names the limit", () => {
    const at = stamper();
    const lines = mapAll([at(runStarted()), at(runCompleted({ status: "limit", reason: "max_tool_calls", exitCode: 4 }))]);
    expectValid(lines);
    expect(lines[1]).toMatchObject({ type: "error", code: "limit_reached" });
    expect((lines[1] as { message: string }).message).toContain("max_tool_calls");
  });

  test("a deadline stop: error timeout, run_end 4", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "guard.triggered", guard: "deadline", message: "the run passed its deadline (1.5 s)" }),
      at(runCompleted({ status: "limit", reason: "deadline", exitCode: 4 })),
    ]);
    expectValid(lines);
    expect(lines.map((l) => l.type)).toEqual(["run_start", "error", "run_end"]);
    expect(lines[1]).toMatchObject({ code: "timeout", message: "the run passed its deadline (1.5 s)" });
    expect(lines[2]).toMatchObject({ status: "error", exitCode: 4 });
  });

  test("a cancelled run: held text first, error cancelled, run_end 130, no final", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "message.delta", step: 1, text: "partial answ" }),
      at(runCompleted({ status: "cancelled", reason: "cancelled", exitCode: 130, text: "partial answ" })),
    ]);
    expectValid(lines);
    expect(lines.map((l) => l.type)).toEqual(["run_start", "text", "text", "error", "run_end"]);
    expect(lines.filter((l) => l.type === "text").map((l) => (l as { delta: string }).delta).join("")).toBe("partial answ");
    expect(lines[3]).toMatchObject({ code: "cancelled", recoverable: false });
    expect(lines[4]).toMatchObject({ status: "error", exitCode: 130 });
  });
});

describe("redaction outside streamed text", () => {
  test("tool args, tool output, error messages and known secrets are scrubbed", () => {
    const token = githubToken();
    const known = `local-${"k".repeat(12)}x${Date.now()}`;
    const at = stamper();
    const lines = mapAll(
      [
        at(runStarted()),
        at({ type: "tool.requested", step: 1, callId: "c1", tool: "run", input: { command: `echo ${token}` }, risk: "execute", operation: "execute" }),
        at({ type: "tool.completed", callId: "c1", tool: "run", status: "completed", output: `exit code 0\n${token}\n${known}\n`, truncated: false, durationMs: 1 }),
        at({ type: "run.failed", error: { kind: "provider", category: "auth", message: `bad key ${known}`, statusCode: 401, retryAfterMs: null, retryable: false } }),
        at(runCompleted({ status: "failed", reason: "provider_error", exitCode: 3 })),
      ],
      [known],
    );
    expectValid(lines);
    for (const line of lines) {
      expect(JSON.stringify(line)).not.toContain(token);
      expect(JSON.stringify(line)).not.toContain(known);
    }
    expect(lines[1]).toMatchObject({ type: "tool_call", args: { command: "echo [REDACTED:github-token]" }, sideEffect: "shell" });
  });
});

describe("ordering of held streams", () => {
  test("reasoning still held when the answer starts goes out before the answer text", () => {
    const at = stamper();
    const lines = mapAll([
      at(runStarted()),
      at({ type: "reasoning.delta", step: 1, text: "Planning" }),
      at({ type: "message.delta", step: 1, text: "Hello world" }),
      at({ type: "usage.updated", step: 1, stepUsage: usage(1, 1), usage: usage(1, 1) }),
    ]);
    expectValid(lines);
    expect(lines.slice(1).map((l) => [l.type, (l as { delta?: string }).delta])).toEqual([
      ["reasoning", "Planning"],
      ["text", "Hello "],
      ["text", "world"],
      ["usage", undefined],
    ]);
  });
});

describe("failedBeforeStart", () => {
  test("an error then run_end with the given exit code, both valid", () => {
    const lines = failedBeforeStart(RUN_ID, "invalid_input", "line 1: malformed JSON", 2);
    expectValid(lines);
    expect(lines).toEqual([
      { schemaVersion: 2, runId: RUN_ID, type: "error", code: "invalid_input", message: "line 1: malformed JSON", recoverable: false },
      { schemaVersion: 2, runId: RUN_ID, type: "run_end", status: "error", exitCode: 2 },
    ]);
  });
});

describe("delegated children", () => {
  test("only the root run is mapped: a child's events (even its run.completed) write nothing", () => {
    const at = stamper();
    const mapper = createStreamJsonMapper();
    const child = (body: EventBody): RuntimeEvent => ({ ...at(body), runId: "run_20260603_child1", parentRunId: RUN_ID, rootRunId: RUN_ID }) as RuntimeEvent;
    const out = [
      at(runStarted()),
      at({ type: "agent.spawned", callId: "c1", childRunId: "run_20260603_child1", taskId: "t-1", taskName: "t", agent: "explore", deliverable: "analysis", workspaceMode: "shared-readonly", permissionMode: "read-only", background: false, followUp: false }),
      child({ ...runStarted(), parentRunId: RUN_ID, depth: 1 } as EventBody),
      child({ type: "message.delta", step: 1, text: "child words" }),
      child(runCompleted({ text: "child words" })),
      at({ type: "agent.completed", childRunId: "run_20260603_child1", taskId: "t-1", status: "completed", result: { summary: "s" } }),
      at({ type: "message.delta", step: 2, text: "root words" }),
      at(runCompleted({ text: "root words" })),
    ].flatMap((event) => mapper.map(event));
    expect([...new Set(out.map((line) => line.type))]).toEqual(["run_start", "text", "final", "run_end"]);
    expect(out.flatMap((line) => (line.type === "text" ? [line.delta] : [])).join("")).toBe("root words");
    expect(out.every((line) => line.runId === RUN_ID)).toBe(true);
    expect(JSON.stringify(out)).not.toContain("child words");
  });
});
