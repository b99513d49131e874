import { expect, test } from "bun:test";
import { runtimeEventSchema } from "../../src/protocol/events.ts";
import { RUN_ID_PATTERN, SESSION_ID_PATTERN } from "../../src/protocol/ids.ts";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { jsonLines, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

test("--json writes every runtime event as one valid JSON line, in order", async () => {
  fake.script([
    { reasoning: "look at the readme", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_1" }], usage: { input: 100, output: 20 } },
    { text: ["The answer ", "is 42."], usage: { input: 150, output: 10, reasoning: 3 } },
  ]);
  const result = await runZero(["run", "--json", "what is the answer?"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stderr).toBe("");
  const lines = result.stdout.trimEnd().split("\n");
  const events = lines.map((line) => runtimeEventSchema.parse(JSON.parse(line)));
  for (const event of jsonLines(result.stdout)) {
    expect(event).not.toHaveProperty("jsonrpc");
    expect(event).not.toHaveProperty("schemaVersion");
  }

  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
  expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
  expect(new Set(events.map((e) => e.runId)).size).toBe(1);
  for (const event of events) expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false);

  const first = events[0]!;
  if (first.type !== "run.started") throw new Error("first event must be run.started");
  expect(first.runId).toMatch(RUN_ID_PATTERN);
  expect(first.sessionId).toMatch(SESSION_ID_PATTERN);
  expect(first.model).toEqual({ alias: "fake", provider: "openai-compatible", model: "fake-1", profile: "fake" });
  expect(first.cwd).toBe(sandbox.workspace);
  expect(first.permissionMode).toBe("ask");
  expect(first.agent).toBe("build");

  const types = events.map((e) => e.type).filter((t) => t !== "message.delta" && t !== "reasoning.delta");
  expect(types).toEqual([
    "run.started",
    // Before each request: its estimated size against the context window.
    "context.updated",
    "step.started",
    "usage.updated",
    "step.completed",
    "tool.requested",
    "tool.started",
    "tool.completed",
    "context.updated",
    "step.started",
    "usage.updated",
    "step.completed",
    "run.completed",
  ]);
  const reasoning = events.filter((e) => e.type === "reasoning.delta").map((e) => (e as { text: string }).text);
  expect(reasoning.join("")).toBe("look at the readme");
  const text = events.filter((e) => e.type === "message.delta").map((e) => (e as { text: string }).text);
  expect(text).toEqual(["The answer ", "is 42."]);

  const completedTool = events.find((e) => e.type === "tool.completed")!;
  expect(completedTool).toMatchObject({ callId: "call_1", tool: "read", status: "completed", truncated: false });
  const last = events.at(-1)!;
  if (last.type !== "run.completed") throw new Error("last event must be run.completed");
  expect(last).toMatchObject({ status: "completed", reason: null, exitCode: 0, text: "The answer is 42.", steps: 2, toolCalls: 1 });
  expect(last.usage).toEqual({ inputTokens: 250, outputTokens: 30, totalTokens: 280, reasoningTokens: 3, cachedInputTokens: 0 });
});

test("a provider failure still ends with exactly one run.completed", async () => {
  fake.script([{ kind: "error", status: 401 }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(3);
  const events = jsonLines(result.stdout).map((e) => runtimeEventSchema.parse(e));
  expect(events.filter((e) => e.type === "run.completed")).toHaveLength(1);
  expect(events.at(-1)!.type).toBe("run.completed");
  expect(events.at(-2)!.type).toBe("run.failed");
});

test("--json keeps model text exactly, escapes included", async () => {
  fake.script([{ text: "a\x1b[31mb" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  const deltas = jsonLines(result.stdout).filter((e) => e.type === "message.delta");
  expect(deltas.map((e) => e.text).join("")).toBe("a\x1b[31mb");
});
