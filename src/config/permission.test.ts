import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { configSandbox, removeConfigSandboxes } from "./config-test-support.ts";
import { loadConfig, type LoadedConfig } from "./load.ts";
import { isWiderThan, PERMISSION_ORDER } from "./permission.ts";

afterEach(removeConfigSandboxes);

/** A user file (optional) and a project file applied through the ephemeral trust override. */
function load(project: string, user?: string): LoadedConfig & { projectFile: string } {
  const { ws, env, write, userFile } = configSandbox({ ZERO_CLI_TRUST_PROJECT_CONFIG: "1" });
  if (user !== undefined) userFile(user);
  const projectFile = write(join(ws, "zero-cli.jsonc"), project);
  return { ...loadConfig({ workspace: ws, env }), projectFile };
}

describe("a project file may narrow the permission mode, never widen it", () => {
  test("the order is read-only < ask < accept-edits < full-access", () => {
    expect([...PERMISSION_ORDER]).toEqual(["read-only", "ask", "accept-edits", "full-access"]);
    expect(isWiderThan("full-access", "ask")).toBe(true);
    expect(isWiderThan("ask", "ask")).toBe(false);
    expect(isWiderThan("read-only", "ask")).toBe(false);
  });

  test("a top-level mode wider than the built-in ask is ignored with a warning at file:line:column; a narrower one applies", () => {
    const wide = load(`{\n  "workDepth": "flash",\n  "permissionMode": "full-access"\n}`);
    expect(wide.config.permissionMode).toBe("ask");
    expect(wide.config.workDepth).toBe("flash"); // the rest of the file applies
    expect(wide.ignoredPermissions.map((entry) => entry.message)).toEqual([
      `${wide.projectFile}:3:21: permissionMode "full-access" ignored: a project file may narrow the permission mode, never widen it beyond your default (ask); only your user config or --permission-mode can widen it`,
    ]);
    const narrow = load(`{ "permissionMode": "read-only" }`);
    expect(narrow.config.permissionMode).toBe("read-only");
    expect(narrow.ignoredPermissions).toEqual([]);
    expect(load(`{ "permissionMode": "ask" }`).ignoredPermissions).toEqual([]);
  });

  test("the user's own default is the ceiling", () => {
    const widened = load(`{ "permissionMode": "accept-edits" }`, `{ "permissionMode": "accept-edits" }`);
    expect(widened.config.permissionMode).toBe("accept-edits");
    expect(widened.ignoredPermissions).toEqual([]);
    const beyond = load(`{ "permissionMode": "full-access" }`, `{ "permissionMode": "accept-edits" }`);
    expect(beyond.config.permissionMode).toBe("accept-edits");
    expect(beyond.ignoredPermissions[0]?.ceiling).toBe("accept-edits");
    const strictUser = load(`{ "permissionMode": "ask" }`, `{ "permissionMode": "read-only" }`);
    expect(strictUser.config.permissionMode).toBe("read-only");
    expect(strictUser.ignoredPermissions.map((entry) => entry.keyPath)).toEqual(["permissionMode"]);
  });

  test("agent profiles: wider than the user's default is ignored, unless the agent already had that mode", () => {
    const loaded = load(`{
      "agents": {
        "x": { "permissionMode": "full-access" },
        "build": { "permissionMode": "accept-edits" },
        "implement": { "permissionMode": "accept-edits" },
        "plan": { "permissionMode": "ask" },
        "verify": { "permissionMode": "read-only" }
      }
    }`);
    expect(loaded.config.agents.x?.permissionMode).toBeUndefined(); // falls back to the top-level ask
    expect(loaded.config.agents.build?.permissionMode).toBeUndefined();
    expect(loaded.config.agents.implement?.permissionMode).toBe("accept-edits"); // the built-in mode, re-stated
    expect(loaded.config.agents.plan?.permissionMode).toBe("ask"); // wider than its built-in read-only, not than the user's ask
    expect(loaded.config.agents.verify?.permissionMode).toBe("read-only");
    expect(loaded.ignoredPermissions.map((entry) => [entry.keyPath, entry.value, entry.line])).toEqual([
      ["agents.x.permissionMode", "full-access", 3],
      ["agents.build.permissionMode", "accept-edits", 4],
    ]);
    expect(loaded.ignoredPermissions[0]!.message).toContain("a project file may not give an agent a wider permission mode than your default (ask)");

    const userAgent = load(`{ "agents": { "x": { "permissionMode": "full-access" } } }`, `{ "agents": { "x": { "permissionMode": "full-access" } } }`);
    expect(userAgent.config.agents.x?.permissionMode).toBe("full-access");
    expect(userAgent.ignoredPermissions).toEqual([]);
  });

  test("a defaultAgent that would run wider than the user's root is ignored", () => {
    const implement = load(`{ "defaultAgent": "implement" }`);
    expect(implement.config.defaultAgent).toBe("build");
    expect(implement.ignoredPermissions.map((entry) => entry.message)).toEqual([
      `${implement.projectFile}:1:19: defaultAgent "implement" ignored: that agent runs in accept-edits, wider than your root agent's mode (ask); choose it in your user config to widen`,
    ]);
    expect(load(`{ "defaultAgent": "plan" }`).config.defaultAgent).toBe("plan");
    const own = load(`{ "defaultAgent": "x", "agents": { "x": { "description": "project root" } } }`);
    expect([own.config.defaultAgent, own.ignoredPermissions]).toEqual(["x", []]);
    const userWide = load(`{ "defaultAgent": "implement" }`, `{ "permissionMode": "accept-edits" }`);
    expect(userWide.config.defaultAgent).toBe("implement");
  });

  test("the user file and ZERO_CLI_CONFIG are the user's own: never limited", () => {
    const { ws, env, write, userFile } = configSandbox();
    userFile(`{ "permissionMode": "full-access" }`);
    expect(loadConfig({ workspace: ws, env }).config.permissionMode).toBe("full-access");
    const explicit = write(join(ws, "..", "mine.jsonc"), `{ "permissionMode": "full-access", "defaultAgent": "implement" }`);
    const loaded = loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_CONFIG: explicit } });
    expect([loaded.config.permissionMode, loaded.config.defaultAgent, loaded.ignoredPermissions]).toEqual(["full-access", "implement", []]);
  });
});
