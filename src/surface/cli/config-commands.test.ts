import { afterEach, describe, expect, test } from "bun:test";
import { configSandbox, removeConfigSandboxes } from "../../config/config-test-support.ts";
import { NOT_YET_ENFORCED, PROFILE_CORE_TOOLS, toolMark } from "../../config/enforcement.ts";
import { loadConfig } from "../../config/load.ts";
import { unavailableCoreTools } from "../../session/tool-sources.ts";
import { CORE_TOOL_NAMES } from "../../tool/registry.ts";
import { formatAgents } from "./config-commands.ts";

afterEach(removeConfigSandboxes);

describe("the not-yet-enforced table matches what is built", () => {
  test("config's core tool names are the tool layer's", () => {
    expect([...PROFILE_CORE_TOOLS]).toEqual([...CORE_TOOL_NAMES]);
  });

  test("exactly the core tools that no source offers are marked unavailable", () => {
    const marked: string[] = CORE_TOOL_NAMES.filter((name) => toolMark(name) !== undefined);
    expect(marked).toEqual(unavailableCoreTools());
    expect(NOT_YET_ENFORCED.tools.filter((entry) => !entry.startsWith("mcp:"))).toEqual(unavailableCoreTools());
  });
});

describe("zero agents", () => {
  function agentsOutput(userConfig?: string): string {
    const { ws, env, userFile } = configSandbox();
    if (userConfig !== undefined) userFile(userConfig);
    return formatAgents(loadConfig({ workspace: ws, env }));
  }

  test("the built-in profiles keep their shape; what nothing enforces yet is marked", () => {
    const [build, ...rest] = agentsOutput().split("\n\n")[0]!.split(/\n(?=\S)/);
    expect(build).toBe(
      [
        "build (root) - General-purpose root orchestrator",
        "  model: default → gateway openai/gpt-5.3-codex",
        "  tools: read, write, run, find, search, delegate (not yet available)",
        "  permissionMode: ask (default)  workspaceMode: shared-write",
        "  canDelegateTo: plan, explore, implement, verify, review, vision (not yet enforced)",
        "  skills: * (not yet available)",
        "  accepts: patch, test_result (not yet enforced)",
        "  budgets: maxSteps 100, maxToolCalls 500, maxTokens 200000, timeoutMs 28800000, maxChildren 64 (not yet enforced)",
      ].join("\n"),
    );
    expect(rest.map((block) => block.split("\n")[0])).toEqual([
      "explore - Repository explorer",
      "implement - Bounded implementation specialist",
      "plan - Read-only planner",
      "review - Independent reviewer",
      "verify - Verification and test specialist",
      "vision - Image and document specialist",
    ]);
    const implement = rest.find((block) => block.startsWith("implement"))!;
    expect(implement).toContain("  tools: read, write, find, run, search\n");
    expect(implement).toContain("  permissionMode: accept-edits  workspaceMode: git-worktree (not yet enforced)\n");
  });

  test("a custom profile: live settings unmarked, MCP tools and servers marked", () => {
    const out = agentsOutput(`{
      "mcp": { "docs": { "type": "stdio", "command": "docs-mcp" } },
      "agents": { "x": { "tools": ["read", "mcp:docs:*"], "mcpServers": ["docs"], "skills": ["notes"], "workspaceMode": "scratch",
                         "permissionMode": "full-access", "maxSteps": 7, "maxToolCalls": 9, "maxTokens": 1000, "timeoutMs": 5000 } } }`);
    const x = out.split("\n\n")[0]!.slice(out.indexOf("\nx\n") + 1).split(/\n(?=\S)/)[0]!;
    expect(x).toBe(
      [
        "x",
        "  model: default → gateway openai/gpt-5.3-codex",
        "  tools: read, mcp:docs:* (not yet available)",
        "  permissionMode: full-access  workspaceMode: scratch (not yet enforced)",
        "  skills: notes (not yet available)",
        "  mcpServers: docs (not yet available)",
        "  budgets: maxSteps 7, maxToolCalls 9, maxTokens 1000, timeoutMs 5000, maxChildren - (not yet enforced)",
      ].join("\n"),
    );
  });
});
