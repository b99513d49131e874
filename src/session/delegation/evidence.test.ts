import { describe, expect, test } from "bun:test";
import { runtimeEventSchema, type EventBody, type RuntimeEvent } from "../../protocol/events.ts";
import { createEvidenceCollector } from "./evidence.ts";
import { normalizeResult } from "./result.ts";

const CHILD = "run_child_1";
const GRANDCHILD = "run_grandchild_1";
const SHA_A = "a".repeat(64);
const SHA_B = "b".repeat(64);

/** Stamps envelopes and validates against the internal schema, so hand-built events keep the real shape. */
function stamper() {
  let sequence = 0;
  return (body: EventBody, runId = CHILD): RuntimeEvent => {
    sequence++;
    return runtimeEventSchema.parse({
      eventId: `00000000-0000-4000-8000-${String(sequence).padStart(12, "0")}`,
      sequence,
      timestamp: new Date(Date.UTC(2026, 5, 3, 10, 0, sequence)).toISOString(),
      runId,
      ...body,
    });
  };
}

function runStarted(parentRunId = "run_root"): EventBody {
  return {
    type: "run.started",
    sessionId: "zero_20260603100000_abc123",
    rootRunId: "run_root",
    parentRunId,
    surface: "exec",
    task: "fix the bug",
    agent: "implement",
    model: { alias: "default", provider: "openai", model: "gpt-4.1" },
    cwd: "/repo",
    roots: ["/repo"],
    permissionMode: "accept-edits",
    workDepth: "medium",
    depth: 1,
    reasoningEffort: null,
    speed: null,
    budgets: { maxSteps: 50, maxToolCalls: 200, toolTimeoutMs: 120000, maxTokens: null, timeoutMs: 28800000, deadline: "2026-06-03T18:00:00.000Z" },
  };
}

type Call = { callId: string; tool: string; input: unknown; target?: string | null; status?: "completed" | "failed" | "denied" | "cancelled"; output?: string; diff?: string };

/** A tool call as the loop emits it: requested, then completed with a status. */
function call(c: Call): EventBody[] {
  const isWrite = c.tool === "write";
  const requested: EventBody = {
    type: "tool.requested",
    step: 1,
    callId: c.callId,
    tool: c.tool,
    input: c.input,
    risk: isWrite ? "write" : c.tool === "run" ? "execute" : "read",
    operation: isWrite ? "write-edit" : c.tool === "run" ? "execute" : "read",
    target: c.target === undefined ? null : c.target,
    categories: c.tool === "run" ? ["shell"] : [],
  };
  const completed: EventBody = {
    type: "tool.completed",
    callId: c.callId,
    tool: c.tool,
    status: c.status ?? "completed",
    output: c.output ?? "ok",
    truncated: false,
    durationMs: 3,
    ...(c.diff !== undefined ? { diff: c.diff } : {}),
  };
  return [requested, completed];
}

function collect(bodies: Array<EventBody | [EventBody, string]>) {
  const at = stamper();
  const collector = createEvidenceCollector();
  for (const item of bodies) collector.observe(Array.isArray(item) ? at(item[0], item[1]) : at(item));
  return collector.evidence();
}

describe("changed files", () => {
  test("only completed write calls count; denied, failed and cancelled ones changed nothing", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "c1", tool: "write", input: { operation: "edit", path: "src/a.ts", oldText: "x", newText: "y" }, target: "src/a.ts", diff: "--- a/src/a.ts\n+++ b/src/a.ts\n" }),
      ...call({ callId: "c2", tool: "write", input: { operation: "write", path: ".env", content: "X=1" }, target: ".env", status: "denied", output: "denied by policy" }),
      ...call({ callId: "c3", tool: "write", input: { operation: "edit", path: "src/b.ts" }, target: "src/b.ts", status: "failed", output: "oldText not found" }),
      ...call({ callId: "c4", tool: "write", input: { operation: "write", path: "src/c.ts" }, target: "src/c.ts", status: "cancelled" }),
    ]);
    expect(evidence.changedFiles).toEqual(["src/a.ts"]);
    expect(evidence.diffs).toEqual(["--- a/src/a.ts\n+++ b/src/a.ts\n"]);
  });

  test("moves name both paths, deletes and patches count, repeats are kept once in first-seen order", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "c1", tool: "write", input: { operation: "patch", patch: "…" }, target: "src/b.ts\nsrc/a.ts" }),
      ...call({ callId: "c2", tool: "write", input: { operation: "move", path: "old.txt", to: "docs/new.txt" }, target: "old.txt\ndocs/new.txt" }),
      ...call({ callId: "c3", tool: "write", input: { operation: "delete", path: "gone.txt" }, target: "gone.txt" }),
      ...call({ callId: "c4", tool: "write", input: { operation: "edit", path: "src/a.ts" }, target: "src/a.ts" }),
    ]);
    expect(evidence.changedFiles).toEqual(["src/b.ts", "src/a.ts", "old.txt", "docs/new.txt", "gone.txt"]);
  });

  test("mkdir changes no file; a call without a target falls back to its input paths", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "c1", tool: "write", input: { operation: "mkdir", path: "build" }, target: "build" }),
      ...call({ callId: "c2", tool: "write", input: { operation: "move", path: "a.txt", to: "b.txt" }, target: null }),
    ]);
    expect(evidence.changedFiles).toEqual(["a.txt", "b.txt"]);
  });

  test("a completed call whose request was never seen proves nothing about paths", () => {
    const [, completed] = call({ callId: "lost", tool: "write", input: {}, target: "x.ts" });
    expect(collect([runStarted(), completed!]).changedFiles).toEqual([]);
  });
});

describe("verification", () => {
  test("each completed run call is listed with its command; only `exit code 0` passes", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "r1", tool: "run", input: { command: "bun test auth" }, target: "bun test auth", output: "exit code 1\n2 fail" }),
      ...call({ callId: "r2", tool: "run", input: { command: "sleep 999" }, output: "timed out after 1000 ms; the process group was terminated\n(no output)" }),
      ...call({ callId: "r3", tool: "run", input: { command: "yes" }, output: "killed by signal SIGTERM\ny" }),
      ...call({ callId: "r4", tool: "run", input: { command: "make" }, output: "exit code 10\n" }),
      ...call({ callId: "r5", tool: "run", input: { command: "serve &" }, output: "exit code 0; processes it left running in the background were terminated\n(no output)" }),
      ...call({ callId: "r6", tool: "run", input: { command: "bun test auth" }, output: "exit code 0\n12 pass\nexit code 1" }),
    ]);
    expect(evidence.verification).toEqual([
      { command: "bun test auth", status: "failed" },
      { command: "sleep 999", status: "failed" },
      { command: "yes", status: "failed" },
      { command: "make", status: "failed" },
      { command: "serve &", status: "passed" },
      { command: "bun test auth", status: "passed" },
    ]);
  });

  test("denied or failed run calls are not verification", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "r1", tool: "run", input: { command: "bun test" }, status: "denied", output: "exit code 0\n(pretend)" }),
      ...call({ callId: "r2", tool: "run", input: { command: "bun test" }, status: "failed", output: "cwd does not exist" }),
    ]);
    expect(evidence.verification).toEqual([]);
  });
});

describe("artifacts", () => {
  test("references in completed outputs are collected once; failed outputs are not evidence", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "r1", tool: "run", input: { command: "bun test" }, output: `exit code 0\n…output cut; full text: artifact://${SHA_A}` }),
      ...call({ callId: "c2", tool: "read", input: { path: `artifact://${SHA_A}` }, output: `see artifact://${SHA_A} and artifact://${SHA_B}.` }),
      ...call({ callId: "c3", tool: "read", input: { path: "x" }, status: "failed", output: `artifact://${"c".repeat(64)} is not in the artifact store` }),
      ...call({ callId: "c4", tool: "read", input: { path: "y" }, output: "artifact://short and artifact://ABC" }),
    ]);
    expect(evidence.artifacts).toEqual([`artifact://${SHA_A}`, `artifact://${SHA_B}`]);
  });
});

describe("run identity", () => {
  test("events of another run (a grandchild relayed through the stream) are ignored", () => {
    const evidence = collect([
      runStarted(),
      ...call({ callId: "c1", tool: "write", input: { operation: "edit", path: "mine.ts" }, target: "mine.ts" }),
      [runStarted(CHILD), GRANDCHILD],
      ...call({ callId: "g1", tool: "write", input: { operation: "edit", path: "theirs.ts" }, target: "theirs.ts" }).map((body): [EventBody, string] => [body, GRANDCHILD]),
      ...call({ callId: "g2", tool: "run", input: { command: "bun test" }, output: "exit code 0\n" }).map((body): [EventBody, string] => [body, GRANDCHILD]),
      // A second run.started of the same run (a `send` follow-up turn) keeps the identity.
      runStarted(),
      ...call({ callId: "c2", tool: "write", input: { operation: "edit", path: "later.ts" }, target: "later.ts" }),
    ]);
    expect(evidence.changedFiles).toEqual(["mine.ts", "later.ts"]);
    expect(evidence.verification).toEqual([]);
  });

  test("evidence() returns copies: changing them does not change what was collected", () => {
    const at = stamper();
    const collector = createEvidenceCollector();
    for (const body of [runStarted(), ...call({ callId: "r1", tool: "run", input: { command: "bun test" }, output: "exit code 0\n" })]) collector.observe(at(body));
    const first = collector.evidence();
    first.verification[0]!.status = "failed";
    first.changedFiles.push("forged.ts");
    expect(collector.evidence()).toEqual({ changedFiles: [], verification: [{ command: "bun test", status: "passed" }], artifacts: [], diffs: [] });
  });
});

test("DEL-17: a child that ran `bun test` and answered in free text gets an envelope from its evidence", () => {
  const evidence = collect([
    runStarted(),
    ...call({ callId: "r1", tool: "run", input: { command: "bun test" }, output: "exit code 1\n1 fail" }),
    ...call({ callId: "c1", tool: "write", input: { operation: "edit", path: "src/sum.ts" }, target: "src/sum.ts", diff: "diff" }),
    ...call({ callId: "r2", tool: "run", input: { command: "bun test" }, output: "exit code 0\n3 pass" }),
  ]);
  const result = normalizeResult({
    deliverable: "test_result",
    run: { status: "completed", reason: null, text: "Fixed the off-by-one; all tests pass now." },
    evidence,
    readOnly: false,
  });
  expect(result.status).toBe("completed");
  expect(result.summary).toBe("Fixed the off-by-one; all tests pass now.");
  expect(result.findings).toEqual([]);
  expect(result.changedFiles).toEqual(["src/sum.ts"]);
  expect(result.verification).toEqual([
    { command: "bun test", status: "failed" },
    { command: "bun test", status: "passed" },
  ]);
});
