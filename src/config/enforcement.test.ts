import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { configSandbox, loadError, removeConfigSandboxes } from "./config-test-support.ts";
import { fieldMark, mcpToolServer, NOT_YET_ENFORCED, PROFILE_CORE_TOOLS, toolMark, workspaceModeMark } from "./enforcement.ts";
import { toolNameProblem } from "./finalize.ts";
import { loadConfig } from "./load.ts";

afterEach(removeConfigSandboxes);

/** A user file and a project file applied through the ephemeral trust override. */
function sandbox() {
  const base = configSandbox({ ZERO_CLI_TRUST_PROJECT_CONFIG: "1" });
  return {
    user: base.userFile,
    project: (text: string) => base.write(join(base.ws, "zero-cli.jsonc"), text),
    load: () => loadConfig({ workspace: base.ws, env: base.env }),
  };
}

const ALLOWED = "allowed: read, write, run, find, search, delegate, mcp:<server>:<tool>, mcp:<server>:*";

describe("tool names in profiles", () => {
  test("an unknown tool points at its element in the file and names the allowed names", () => {
    const s = sandbox();
    const file = s.user(`{\n  "agents": {\n    "build": { "tools": ["read", "grep"] }\n  }\n}\n`);
    const error = loadError(() => s.load());
    expect([error.file, error.line, error.column, error.keyPath]).toEqual([file, 3, 34, "agents.build.tools[1]"]);
    expect(error.message).toBe(
      `${file}:3:34: agents.build.tools[1]: unknown tool "grep" (${ALLOWED}; no MCP server is configured under "mcp")`,
    );
  });

  test("the error points at the file that set the list, not at a later layer that left it alone", () => {
    const s = sandbox();
    const user = s.user(`{ "agents": { "x": {\n  "tools": [\n    "read",\n    "Write"\n  ] } } }`);
    s.project(`{ "agents": { "x": { "description": "d" } } }`);
    const error = loadError(() => s.load());
    expect([error.file, error.line, error.column]).toEqual([user, 4, 5]);
    expect(error.problem).toStartWith(`unknown tool "Write"`);
  });

  test("the six core names are accepted, delegate included", () => {
    const s = sandbox();
    s.user(`{ "agents": { "x": { "tools": ${JSON.stringify(PROFILE_CORE_TOOLS)} } } }`);
    expect(s.load().config.agents.x?.tools).toEqual([...PROFILE_CORE_TOOLS]);
  });

  test("MCP tool names need a server configured under mcp, in any layer", () => {
    const s = sandbox();
    s.user(`{ "agents": { "x": { "tools": ["read", "mcp:docs:*", "mcp:docs:search_pages"] } } }`);
    const missing = loadError(() => s.load());
    expect(missing.keyPath).toBe("agents.x.tools[1]");
    expect(missing.problem).toBe(`unknown MCP server "docs" in "mcp:docs:*" (no MCP server is configured under "mcp")`);

    s.project(`{ "mcp": { "docs": { "type": "stdio", "command": "docs-mcp" }, "issues": { "type": "http", "url": "https://mcp.example.com" } } }`);
    // An `mcp:` entry narrows a server the agent may use; it does not grant the server.
    const notAllowed = loadError(() => s.load());
    expect(notAllowed.keyPath).toBe("agents.x.tools[1]");
    expect(notAllowed.problem).toBe(`"mcp:docs:*" names MCP server "docs", which is not in agents.x.mcpServers (add it there to let the agent use the server)`);
    s.user(`{ "agents": { "x": { "tools": ["read", "mcp:docs:*", "mcp:docs:search_pages"], "mcpServers": ["docs"] } } }`);
    expect(s.load().config.agents.x?.tools).toEqual(["read", "mcp:docs:*", "mcp:docs:search_pages"]);
    s.user(`{ "agents": { "x": { "mcpServers": ["docs", "nope"] } } }`);
    const unknownServer = loadError(() => s.load());
    expect(unknownServer.keyPath).toBe("agents.x.mcpServers[1]");
    expect(unknownServer.problem).toBe(`unknown MCP server "nope" (MCP servers: docs, issues)`);

    s.user(`{ "agents": { "x": { "tools": ["mcp:ghost:*"] } } }`);
    expect(loadError(() => s.load()).problem).toBe(`unknown MCP server "ghost" in "mcp:ghost:*" (MCP servers: docs, issues)`);
    s.user(`{ "agents": { "x": { "tools": ["mcp:docs"] } } }`);
    expect(loadError(() => s.load()).problem).toBe(`unknown tool "mcp:docs" (${ALLOWED}; MCP servers: docs, issues)`);
  });

  test("a version 1 name in a version 2 file gets a hint", () => {
    expect(toolNameProblem("exec", [])).toEndWith(`; "exec" is the version 1 name of "run"`);
    expect(toolNameProblem("apply_patch", [])).toContain(`version 1 name of "write"`);
    expect(toolNameProblem("constructor", [])).toBe(`unknown tool "constructor" (${ALLOWED}; no MCP server is configured under "mcp")`);
  });

  test("in a version 1 file the error still points at the written element after renaming", () => {
    const s = sandbox();
    const file = s.user(`{ "version": 1, "agents": { "old": { "tools": ["search", "find", "grep"] } } }`);
    const error = loadError(() => s.load());
    expect(error.keyPath).toBe("agents.old.tools[2]");
    expect(error.message).toStartWith(`${file}:1:66: agents.old.tools[2]: unknown tool "grep"`);
    s.user(`{ "version": 1, "agents": { "old": { "tools": ["search", "find", "exec", "read"] } } }`);
    expect(s.load().config.agents.old?.tools).toEqual(["find", "run", "read"]);
  });

  test("mcpToolServer reads the server of mcp:<server>:<tool> and mcp:<server>:*", () => {
    expect(mcpToolServer("mcp:docs:*")).toBe("docs");
    expect(mcpToolServer("mcp:docs:search")).toBe("docs");
    for (const name of ["mcp:docs", "mcp::x", "mcp:docs:", "mcp:a:b:c", "mcp:a b:c", "read"]) expect(mcpToolServer(name)).toBeUndefined();
  });
});

describe("what is not enforced yet", () => {
  test("tools: MCP tool entries and the six core tools are all live", () => {
    expect(toolMark("mcp:docs:*")).toBeUndefined();
    for (const tool of PROFILE_CORE_TOOLS) expect(toolMark(tool)).toBeUndefined();
  });

  test("fields: all are live — skills, MCP servers, delegation settings, model, mode and budgets", () => {
    expect(NOT_YET_ENFORCED.fields).toEqual({});
    const live = ["skills", "mcpServers", "model", "permissionMode", "tools", "maxSteps", "maxToolCalls", "maxTokens", "timeoutMs", "prompt", "promptFile", "canDelegateTo", "accepts", "maxChildren", "workspaceMode"] as const;
    for (const field of live) expect(fieldMark(field)).toBeUndefined();
  });

  test("workspace modes: all four are enforced", () => {
    for (const mode of ["shared-readonly", "shared-write", "git-worktree", "scratch"] as const) expect(workspaceModeMark(mode)).toBeUndefined();
    expect(NOT_YET_ENFORCED.workspaceModes).toEqual([]);
  });
});
