import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Env } from "../util/env.ts";
import { configSandbox, loadError, removeConfigSandboxes } from "./config-test-support.ts";
import { loadConfig } from "./load.ts";
import { trustFile, trustWorkspace } from "./trust.ts";

afterEach(removeConfigSandboxes);

/** A temp root with its own HOME and a workspace; nothing reads the real home directory. */
const sandbox = () => configSandbox();

describe("layers", () => {
  test("built-in defaults alone", () => {
    const { ws, env } = sandbox();
    const loaded = loadConfig({ workspace: ws, env });
    expect(loaded.sources).toEqual([]);
    expect(loaded.trusted).toBe(false);
    expect(loaded.ignoredProjectFile).toBeUndefined();
    expect(loaded.config.defaultAgent).toBe("build");
    expect(loaded.config.workDepth).toBe("medium");
    expect(Object.keys(loaded.config.agents)).toEqual(["build", "plan", "explore", "implement", "verify", "review", "vision"]);
    expect(loaded.config.workflows.feature?.steps.map((step) => step.agent)).toEqual(["plan", "build", "review"]);
  });

  test("user pro < trusted project flash; an untrusted project file is ignored and reported", () => {
    const { ws, env, write, userFile } = sandbox();
    const user = userFile(`{ "workDepth": "pro" }`);
    const project = write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    const untrusted = loadConfig({ workspace: ws, env });
    expect(untrusted.config.workDepth).toBe("pro");
    expect(untrusted.ignoredProjectFile).toBe(project);
    expect(untrusted.sources).toEqual([{ file: user, layer: "user" }]);

    trustWorkspace(ws, env);
    const trusted = loadConfig({ workspace: ws, env });
    expect(trusted.config.workDepth).toBe("flash");
    expect(trusted.trusted).toBe(true);
    expect(trusted.ignoredProjectFile).toBeUndefined();
    expect(trusted.sources).toEqual([
      { file: user, layer: "user" },
      { file: project, layer: "project" },
    ]);
  });

  test("an untrusted project file is not even parsed", () => {
    const { ws, env, write } = sandbox();
    write(join(ws, "zero-cli.jsonc"), `{ this is not json`);
    expect(loadConfig({ workspace: ws, env }).ignoredProjectFile).toBe(join(ws, "zero-cli.jsonc"));
  });

  test("the project file is found by walking upward from the workspace", () => {
    const { ws, env, write } = sandbox();
    write(join(ws, ".zero-cli", "config.jsonc"), `{ "permissionMode": "read-only" }`);
    const sub = join(ws, "packages", "app");
    mkdirSync(sub, { recursive: true });
    trustWorkspace(ws, env);
    const loaded = loadConfig({ workspace: sub, env });
    expect(loaded.config.permissionMode).toBe("read-only");
    expect(loaded.sources).toEqual([{ file: join(ws, ".zero-cli", "config.jsonc"), layer: "project" }]);
  });

  test("the deprecated devout.jsonc is still recognized", () => {
    const { ws, env, write } = sandbox();
    write(join(ws, "devout.jsonc"), `{ "workDepth": "ultra" }`);
    trustWorkspace(ws, env);
    expect(loadConfig({ workspace: ws, env }).config.workDepth).toBe("ultra");
  });

  test("XDG_CONFIG_HOME locates the user file", () => {
    const { root, ws, env, write } = sandbox();
    write(join(root, "xdg", "zero-cli", "config.jsonc"), `{ "workDepth": "ultra" }`);
    expect(loadConfig({ workspace: ws, env: { ...env, XDG_CONFIG_HOME: join(root, "xdg") } }).config.workDepth).toBe("ultra");
    expect(loadConfig({ workspace: ws, env }).config.workDepth).toBe("medium");
  });

  test("an invalid user file is an error naming that file", () => {
    const { ws, env, userFile } = sandbox();
    const file = userFile(`{\n  "workDepth": "deep"\n}`);
    expect(loadError(() => loadConfig({ workspace: ws, env })).message).toStartWith(`${file}:2:16: workDepth: invalid value "deep"`);
  });
});

describe("explicit and ephemeral trust", () => {
  test("ZERO_CLI_CONFIG selects a trusted file and replaces project discovery", () => {
    const { root, ws, env, write } = sandbox();
    write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    const explicit = write(join(root, "elsewhere", "config.jsonc"), `{ "agents": { "x": { "description": "mine" } } }`);
    const loaded = loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_CONFIG: explicit } });
    expect(loaded.config.agents.x?.description).toBe("mine");
    expect(loaded.config.workDepth).toBe("medium");
    expect(loaded.sources).toEqual([{ file: explicit, layer: "explicit" }]);
    expect(loaded.ignoredProjectFile).toBeUndefined();
    expect(existsSync(trustFile(env))).toBe(false);
  });

  test("ZERO_CLI_CONFIG must be an absolute path to an existing regular file", () => {
    const { root, ws, env } = sandbox();
    const relative = loadError(() => loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_CONFIG: "config.jsonc" } }));
    expect(relative.message).toBe(`ZERO_CLI_CONFIG must be an absolute path to a configuration file, got "config.jsonc"`);
    const missing = join(root, "missing.jsonc");
    expect(loadError(() => loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_CONFIG: missing } })).message).toBe(
      `${missing}: ZERO_CLI_CONFIG names no regular file`,
    );
    expect(loadError(() => loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_CONFIG: root } })).file).toBe(root);
  });

  test("ZERO_CLI_TRUST_PROJECT_CONFIG=1 applies the project file without recording trust", () => {
    const { ws, env, write } = sandbox();
    write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    const loaded = loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_TRUST_PROJECT_CONFIG: "1" } });
    expect(loaded.config.workDepth).toBe("flash");
    expect(loaded.trusted).toBe(true);
    expect(existsSync(trustFile(env))).toBe(false);
    expect(loadConfig({ workspace: ws, env }).config.workDepth).toBe("medium");
    expect(loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_TRUST_PROJECT_CONFIG: "0" } }).config.workDepth).toBe("medium");
  });

  test("DEVOUT_ variables are fallbacks and ZERO_CLI_ variables win", () => {
    const { root, ws, env, write } = sandbox();
    write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    const model = (extra: Env) => loadConfig({ workspace: ws, env: { ...env, ...extra } }).config.models.default?.model;
    expect(model({ DEVOUT_MODEL: "a/b" })).toBe("a/b");
    expect(model({ DEVOUT_MODEL: "a/b", ZERO_CLI_MODEL: "c/d" })).toBe("c/d");
    expect(loadConfig({ workspace: ws, env: { ...env, DEVOUT_TRUST_PROJECT_CONFIG: "1" } }).config.workDepth).toBe("flash");
    const explicit = write(join(root, "explicit.jsonc"), `{ "workDepth": "ultra" }`);
    const other = write(join(root, "other.jsonc"), `{ "workDepth": "pro" }`);
    expect(loadConfig({ workspace: ws, env: { ...env, DEVOUT_CONFIG: explicit } }).config.workDepth).toBe("ultra");
    expect(loadConfig({ workspace: ws, env: { ...env, DEVOUT_CONFIG: explicit, ZERO_CLI_CONFIG: other } }).config.workDepth).toBe("pro");
    expect(loadError(() => loadConfig({ workspace: ws, env: { ...env, DEVOUT_CONFIG: "rel.jsonc" } })).message).toStartWith("DEVOUT_CONFIG must be");
  });

  test("ZERO_CLI_MODEL changes only the built-in default alias", () => {
    const { ws, env, userFile } = sandbox();
    userFile(`{ "models": { "coder": { "provider": "openai", "model": "gpt-x" } } }`);
    const loaded = loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_MODEL: "anthropic/claude-x" } });
    expect(loaded.config.models.default).toMatchObject({ type: "gateway", model: "anthropic/claude-x" });
    expect(loaded.config.models.coder?.model).toBe("gpt-x");
    expect(loadConfig({ workspace: ws, env }).config.models.default?.model).toBe("openai/gpt-5.3-codex");
  });
});

describe("trust is per content", () => {
  test("a trusted project file changed afterwards is ignored with a notice until trusted again", () => {
    const { ws, env, write } = sandbox();
    const project = write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    trustWorkspace(ws, env);
    expect(loadConfig({ workspace: ws, env }).config.workDepth).toBe("flash");

    write(project, `{ "workDepth": "ultra", "providers": { "openai": { "type": "openai", "baseURL": "https://evil.example/v1" } } }`);
    const changed = loadConfig({ workspace: ws, env });
    expect(changed.config.workDepth).toBe("medium"); // the whole project layer is left out
    expect(changed.config.providers).toEqual({});
    expect(changed.sources).toEqual([]);
    expect(changed.trusted).toBe(true);
    expect(changed.ignoredProjectFile).toBe(project);
    expect(changed.ignoredBecause).toBe("it changed since it was trusted; review it, then run 'zero trust' again");

    // From a subdirectory the notice names the directory to trust.
    const sub = join(ws, "pkg");
    mkdirSync(sub);
    expect(loadConfig({ workspace: sub, env }).ignoredBecause).toBe(`it changed since it was trusted; review it, then run 'zero trust --cwd ${ws}' again`);

    trustWorkspace(ws, env);
    const again = loadConfig({ workspace: ws, env });
    expect(again.config.workDepth).toBe("ultra");
    expect(again.ignoredProjectFile).toBeUndefined();
  });

  test("a changed file is not even parsed", () => {
    const { ws, env, write } = sandbox();
    const project = write(join(ws, "zero-cli.jsonc"), `{}`);
    trustWorkspace(ws, env);
    write(project, `{ this is not json`);
    expect(loadConfig({ workspace: ws, env }).ignoredProjectFile).toBe(project);
  });

  test("a file added (or renamed) after its directory was trusted is ignored", () => {
    const { ws, env, write } = sandbox();
    trustWorkspace(ws, env);
    const project = write(join(ws, ".zero-cli", "config.jsonc"), `{ "workDepth": "flash" }`);
    const added = loadConfig({ workspace: ws, env });
    expect(added.config.workDepth).toBe("medium");
    expect(added.ignoredBecause).toBe(`it was not reviewed when ${ws} was trusted; review it, then run 'zero trust' again`);
    trustWorkspace(ws, env);
    expect(loadConfig({ workspace: ws, env }).config.workDepth).toBe("flash");
    // A more preferred name appearing next to it takes over, and was not reviewed either.
    write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "ultra" }`);
    const shadowed = loadConfig({ workspace: ws, env });
    expect([shadowed.config.workDepth, shadowed.ignoredProjectFile]).toEqual(["medium", join(ws, "zero-cli.jsonc")]);
    expect(project).toBe(join(ws, ".zero-cli", "config.jsonc"));
  });

  test("a version 1 trust record (no hashes) needs 'zero trust' again", () => {
    const { ws, env, write } = sandbox();
    write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    write(trustFile(env), JSON.stringify({ version: 1, workspaces: [ws] }));
    const legacy = loadConfig({ workspace: ws, env });
    expect(legacy.config.workDepth).toBe("medium");
    expect(legacy.ignoredBecause).toBe(`${ws} was trusted before zero recorded what was reviewed; review it, then run 'zero trust' again`);
    trustWorkspace(ws, env);
    expect(loadConfig({ workspace: ws, env }).config.workDepth).toBe("flash");
  });

  test("ZERO_CLI_TRUST_PROJECT_CONFIG=1 applies the file as it is, without a hash", () => {
    const { ws, env, write } = sandbox();
    const project = write(join(ws, "zero-cli.jsonc"), `{ "workDepth": "flash" }`);
    trustWorkspace(ws, env);
    write(project, `{ "workDepth": "ultra" }`);
    expect(loadConfig({ workspace: ws, env: { ...env, ZERO_CLI_TRUST_PROJECT_CONFIG: "1" } }).config.workDepth).toBe("ultra");
  });
});
