import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configDir, existingProjectConfigs, findProjectConfig, stateDir, userConfigFile } from "./paths.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "zero-paths-")));
  roots.push(root);
  return root;
}

function touch(path: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "{}");
}

describe("user directories", () => {
  test("XDG base directories win when absolute", () => {
    const env = { HOME: "/home/u", XDG_CONFIG_HOME: "/xdg/config", XDG_STATE_HOME: "/xdg/state" };
    expect(configDir(env)).toBe("/xdg/config/zero-cli");
    expect(userConfigFile(env)).toBe("/xdg/config/zero-cli/config.jsonc");
    expect(stateDir(env)).toBe("/xdg/state/zero-cli");
  });

  test("relative or missing XDG variables fall back to HOME", () => {
    const env = { HOME: "/home/u", XDG_CONFIG_HOME: "relative/config", XDG_STATE_HOME: "" };
    expect(configDir(env)).toBe("/home/u/.config/zero-cli");
    expect(stateDir(env)).toBe("/home/u/.local/state/zero-cli");
  });

  test("without HOME the operating system's home directory is used", () => {
    expect(configDir({})).toMatch(/\/\.config\/zero-cli$/);
  });
});

describe("project configuration discovery", () => {
  test("walks upward and returns the nearest directory's file", () => {
    const root = tempRoot();
    touch(join(root, "zero-cli.jsonc"));
    const deep = join(root, "a", "b", "c");
    mkdirSync(deep, { recursive: true });
    expect(findProjectConfig(deep)).toBe(join(root, "zero-cli.jsonc"));
    touch(join(root, "a", ".zero-cli", "config.jsonc"));
    expect(findProjectConfig(deep)).toBe(join(root, "a", ".zero-cli", "config.jsonc"));
  });

  test("within one directory the candidates keep their precedence; devout names come last", () => {
    const root = tempRoot();
    touch(join(root, ".devout", "config.jsonc"));
    expect(findProjectConfig(root)).toBe(join(root, ".devout", "config.jsonc"));
    touch(join(root, "devout.jsonc"));
    expect(findProjectConfig(root)).toBe(join(root, "devout.jsonc"));
    touch(join(root, ".zero-cli", "zero-cli.jsonc"));
    expect(findProjectConfig(root)).toBe(join(root, ".zero-cli", "zero-cli.jsonc"));
    touch(join(root, "zero-cli.jsonc"));
    expect(findProjectConfig(root)).toBe(join(root, "zero-cli.jsonc"));
    expect(existingProjectConfigs(root)).toEqual([
      join(root, "zero-cli.jsonc"),
      join(root, ".zero-cli", "zero-cli.jsonc"),
      join(root, "devout.jsonc"),
      join(root, ".devout", "config.jsonc"),
    ]);
  });

  test("only regular files count", () => {
    const root = tempRoot();
    mkdirSync(join(root, "zero-cli.jsonc"));
    writeFileSync(join(root, ".zero-cli"), "not a directory");
    expect(existingProjectConfigs(root)).toEqual([]);
  });

  test("a symlinked workspace is searched from its real location", () => {
    const root = tempRoot();
    touch(join(root, "real", "zero-cli.jsonc"));
    symlinkSync(join(root, "real"), join(root, "link"));
    expect(findProjectConfig(join(root, "link"))).toBe(join(root, "real", "zero-cli.jsonc"));
  });
});
