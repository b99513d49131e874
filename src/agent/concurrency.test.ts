import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { ModelRunner, StepOutcome } from "../llm/step.ts";
import { createApprovalBroker } from "../policy/approvals.ts";
import { MODE_RULES } from "../policy/rules.ts";
import type { EventBody } from "../protocol/events.ts";
import { createRoots } from "../security/roots.ts";
import { createRedactor } from "../security/redact.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { defineTool, type Tool } from "../tool/define.ts";
import { runLoop } from "./loop.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Span = { id: string; start: number; end: number };

/** A tool that waits `ms` and records when it ran; `read` or `write-edit` as asked. */
function timedTool(name: string, operation: "read" | "write-edit", spans: Span[], ms = 150): Tool {
  return defineTool({
    name,
    description: name,
    input: z.object({ id: z.string() }),
    classify: ({ id }) => (operation === "read" ? { risk: "read", operation, target: id } : { risk: "write", operation, target: id }),
    async execute({ id }) {
      const start = performance.now();
      await Bun.sleep(ms);
      spans.push({ id, start, end: performance.now() });
      return { output: id };
    },
  });
}

test("read-only calls of a step run side by side; a mutating call runs alone, in order", async () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "zero-conc-")));
  dirs.push(ws);
  const spans: Span[] = [];
  const tools = new Map([timedTool("look", "read", spans), timedTool("change", "write-edit", spans)].map((t) => [t.name, t]));
  const calls = [
    { callId: "c1", tool: "look", input: { id: "r1" } },
    { callId: "c2", tool: "look", input: { id: "r2" } },
    { callId: "c3", tool: "change", input: { id: "w" } },
    { callId: "c4", tool: "look", input: { id: "r3" } },
  ];
  const script: StepOutcome[] = [
    {
      ok: true,
      text: "",
      toolCalls: calls,
      responseMessages: [{ role: "assistant", parts: calls.map((c) => ({ type: "tool-call" as const, callId: c.callId, tool: c.tool, input: c.input, state: "pending" as const })) }],
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, reasoningTokens: 0, cachedInputTokens: 0 },
      finishReason: "tool-calls",
    },
    { ok: true, text: "done", toolCalls: [], responseMessages: [{ role: "assistant", parts: [{ type: "text", text: "done" }] }], usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, reasoningTokens: 0, cachedInputTokens: 0 }, finishReason: "stop" },
  ];
  const seen: unknown[] = [];
  const runner: ModelRunner = {
    identity: { alias: "t", provider: "t", model: "t" },
    async step(request) {
      seen.push(structuredClone(request.messages));
      return script.shift()!;
    },
  };
  const events: EventBody[] = [];
  const result = await runLoop({
    agent: "tester",
    runner,
    instructions: "",
    history: [{ role: "user", parts: [{ type: "text", text: "go" }] }],
    tools,
    permissionMode: "full-access",
    rules: MODE_RULES["full-access"],
    approvals: createApprovalBroker(undefined),
    ask: async () => false,
    roots: createRoots({ workspace: ws }),
    services: { env: {}, artifacts: createArtifactStore(join(ws, ".artifacts")), redactor: createRedactor() },
    modelCapabilities: ["text", "tools"],
    limits: { maxSteps: 5, maxToolCalls: 10, toolTimeoutMs: 5000, maxAttachmentBytes: 1024 },
    signal: new AbortController().signal,
    abortReason: () => "cancelled",
    emit: (e) => events.push(e),
  });
  expect(result.status).toBe("completed");
  const span = (id: string) => spans.find((s) => s.id === id)!;
  // r1 and r2 overlap; the write starts after both ended; r3 starts after the write ended.
  expect(span("r2").start).toBeLessThan(span("r1").end);
  expect(span("w").start).toBeGreaterThanOrEqual(Math.max(span("r1").end, span("r2").end));
  expect(span("r3").start).toBeGreaterThanOrEqual(span("w").end);
  // The model still gets the results in its own call order.
  const toolMessage = (seen[1] as Array<{ role: string; parts: Array<{ callId: string }> }>).at(-1)!;
  expect(toolMessage.parts.map((p) => p.callId)).toEqual(["c1", "c2", "c3", "c4"]);
});
