import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "./errors.ts";
import { isWorkspaceTrusted, readTrustedWorkspaces, trustFile, trustWorkspace } from "./trust.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function sandbox() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "zero-trust-")));
  roots.push(root);
  const home = join(root, "home");
  mkdirSync(home);
  for (const dir of ["a", "ab", "b", join("a", "sub")]) mkdirSync(join(root, dir), { recursive: true });
  return { root, env: { HOME: home } };
}

describe("workspace trust", () => {
  test("trusting /a trusts exactly /a: not below it, not /b or /ab", () => {
    const { root, env } = sandbox();
    expect(isWorkspaceTrusted(join(root, "a"), env)).toBe(false);
    expect(trustWorkspace(join(root, "a"), env)).toBe(join(root, "a"));
    expect(isWorkspaceTrusted(join(root, "a"), env)).toBe(true);
    expect(isWorkspaceTrusted(join(root, "a", "sub"), env)).toBe(false);
    expect(isWorkspaceTrusted(join(root, "b"), env)).toBe(false);
    expect(isWorkspaceTrusted(join(root, "ab"), env)).toBe(false);
    expect(isWorkspaceTrusted(root, env)).toBe(false);
  });

  test("a symlink to a trusted directory is trusted, and trusting a symlink records its target", () => {
    const { root, env } = sandbox();
    symlinkSync(join(root, "a"), join(root, "link-a"));
    symlinkSync(join(root, "b"), join(root, "link-b"));
    trustWorkspace(join(root, "a"), env);
    expect(isWorkspaceTrusted(join(root, "link-a"), env)).toBe(true);
    expect(trustWorkspace(join(root, "link-b"), env)).toBe(join(root, "b"));
    expect(readTrustedWorkspaces(env)).toEqual([join(root, "a"), join(root, "b")]);
  });

  test("trusting twice records the path once", () => {
    const { root, env } = sandbox();
    trustWorkspace(join(root, "a"), env);
    trustWorkspace(join(root, "a", "..", "a"), env);
    expect(JSON.parse(readFileSync(trustFile(env), "utf8"))).toEqual({ version: 1, workspaces: [join(root, "a")] });
  });

  test("the record is private: directory 0700, file 0600, no temp files left", () => {
    const { root, env } = sandbox();
    trustWorkspace(join(root, "a"), env);
    const dir = join(env.HOME, ".config", "zero-cli");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(trustFile(env)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["trusted-workspaces.json"]);
  });

  test("XDG_CONFIG_HOME decides where the record lives", () => {
    const { root, env } = sandbox();
    const xdgEnv = { ...env, XDG_CONFIG_HOME: join(root, "xdg") };
    trustWorkspace(join(root, "a"), xdgEnv);
    expect(trustFile(xdgEnv)).toBe(join(root, "xdg", "zero-cli", "trusted-workspaces.json"));
    expect(isWorkspaceTrusted(join(root, "a"), xdgEnv)).toBe(true);
    expect(isWorkspaceTrusted(join(root, "a"), env)).toBe(false);
  });

  test("a corrupt trust file is a ConfigError naming the file", () => {
    const { root, env } = sandbox();
    mkdirSync(join(env.HOME, ".config", "zero-cli"), { recursive: true });
    for (const content of ["{not json", `{"version": 1, "workspaces": ["relative/path"]}`, `{"version": 9, "workspaces": []}`]) {
      writeFileSync(trustFile(env), content);
      let caught: unknown;
      try {
        isWorkspaceTrusted(join(root, "a"), env);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).file).toBe(trustFile(env));
      expect((caught as ConfigError).message).toStartWith(`${trustFile(env)}: corrupt trust file`);
    }
  });
});
