import { afterEach, describe, expect, test } from "bun:test";
import { configSandbox, removeConfigSandboxes } from "../../config/config-test-support.ts";
import { loadConfig } from "../../config/load.ts";
import type { PendingApproval } from "../../session/service.ts";
import { approvalLines, formatTokens, statusLine, toolTitle } from "./presenters.ts";

afterEach(removeConfigSandboxes);

function config() {
  const box = configSandbox();
  box.userFile(JSON.stringify({ models: { fast: { provider: "openai", model: "gpt-x" } }, agents: { build: { model: "fast" } } }));
  return loadConfig({ workspace: box.ws, env: box.env }).config;
}

describe("status line", () => {
  test("model · depth · reasoning · speed, then context, cost and queue when present", () => {
    const c = config();
    expect(statusLine(c, {}, { costUsd: 0, queued: 0 })).toBe(`fast · ${c.workDepth} · reasoning default · speed default`);
    expect(statusLine(c, { model: "fast", depth: "pro", reasoning: "high", speed: "fast" }, { context: { tokens: 12_345, window: 200_000, percent: 6.17 }, costUsd: 0.0123, queued: 2 })).toBe(
      "fast · pro · reasoning high · speed fast · 12k ctx (6%) · $0.012 · 2 queued",
    );
    expect(statusLine(c, { workflow: "feature" }, { costUsd: 0, queued: 0 })).toStartWith("workflow feature · ");
    expect([formatTokens(999), formatTokens(1_500), formatTokens(25_000)]).toEqual(["999", "1.5k", "25k"]);
  });
});

describe("tool titles", () => {
  test("one per tool, on one line, terminal controls removed", () => {
    expect(toolTitle({ tool: "run", input: { command: "npm test\n--watch" }, target: null })).toBe("run $ npm test --watch");
    expect(toolTitle({ tool: "write", input: { operation: "move", path: "a.ts", to: "b.ts" }, target: null })).toBe("write move a.ts → b.ts");
    expect(toolTitle({ tool: "read", input: { path: "src/\u001b[31mx.ts" }, target: null })).not.toContain("\u001b");
    expect(toolTitle({ tool: "mcp__docs__search", input: {}, target: "mcp:docs:search" })).toBe("mcp__docs__search mcp:docs:search");
  });
});

describe("approval prompt", () => {
  const pending = (over: Partial<PendingApproval>): PendingApproval => ({ callId: "c", sessionId: "s", tool: "run", risk: "execute", operation: "execute", reason: "ask mode asks before commands", input: {}, ...over });
  test("the exact command, the cwd and the keys", () => {
    const lines = approvalLines(pending({ input: { command: "rm -rf build" }, target: "rm -rf build", categories: ["shell"] }), "/ws");
    expect(lines).toEqual(["run wants to execute (risk: execute, shell)", "$ rm -rf build", "in /ws", "ask mode asks before commands", "[Y] allow once   [A] allow for this session   [N/Esc] deny"]);
  });
  test("an edit shows the replaced and the new text", () => {
    const lines = approvalLines(pending({ tool: "write", risk: "write", operation: "write-edit", target: "/ws/a.ts", input: { operation: "edit", path: "a.ts", oldText: "one", newText: "two" } }), "/ws");
    expect(lines).toContain("- one");
    expect(lines).toContain("+ two");
    expect(lines).toContain("/ws/a.ts");
  });
});
