import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { makeSandbox, spawnZero } from "../../test/support/cli.ts";
import { ConfigError } from "./errors.ts";
import { contentHash, isWorkspaceTrusted, readTrustedWorkspaces, readTrustEntries, trustEntryFor, trustFile, trustWorkspace, untrustedContent } from "./trust.ts";

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
    expect(JSON.parse(readFileSync(trustFile(env), "utf8"))).toEqual({ version: 2, workspaces: [{ path: join(root, "a"), files: {} }] });
  });

  test("the hash of the directory's own project file is recorded, and replaced when trusted again", () => {
    const { root, env } = sandbox();
    const file = join(root, "a", "zero-cli.jsonc");
    writeFileSync(file, `{ "workDepth": "pro" }`);
    trustWorkspace(join(root, "a"), env);
    expect(readTrustEntries(env)).toEqual([{ path: join(root, "a"), files: { [file]: contentHash(`{ "workDepth": "pro" }`) } }]);
    expect(contentHash("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    trustWorkspace(join(root, "b"), env);
    writeFileSync(file, `{ "workDepth": "flash" }`);
    const entry = trustEntryFor(join(root, "a"), env)!;
    expect(untrustedContent(entry, file, contentHash(`{ "workDepth": "flash" }`))).toBe("changed");
    expect(untrustedContent(entry, join(root, "a", ".zero-cli", "config.jsonc"), contentHash("{}"))).toBe("new");
    trustWorkspace(join(root, "a"), env);
    // Still one entry per directory, in its place.
    expect(readTrustEntries(env)).toEqual([
      { path: join(root, "a"), files: { [file]: contentHash(`{ "workDepth": "flash" }`) } },
      { path: join(root, "b"), files: {} },
    ]);
    expect(untrustedContent(trustEntryFor(join(root, "a"), env)!, file, contentHash(`{ "workDepth": "flash" }`))).toBeUndefined();
    // A file above the directory is not its own: nothing of it is recorded.
    writeFileSync(join(root, "zero-cli.jsonc"), "{}");
    trustWorkspace(join(root, "ab"), env);
    expect(trustEntryFor(join(root, "ab"), env)).toEqual({ path: join(root, "ab"), files: {} });
  });

  test("a version 1 record still reads, needs re-trust for its files, and keeps its entries when rewritten", () => {
    const { root, env } = sandbox();
    mkdirSync(join(env.HOME, ".config", "zero-cli"), { recursive: true });
    writeFileSync(trustFile(env), JSON.stringify({ version: 1, workspaces: [join(root, "a")] }));
    expect(isWorkspaceTrusted(join(root, "a"), env)).toBe(true);
    const legacy = trustEntryFor(join(root, "a"), env)!;
    expect(legacy).toEqual({ path: join(root, "a") });
    expect(untrustedContent(legacy, join(root, "a", "zero-cli.jsonc"), contentHash("{}"))).toBe("legacy");
    trustWorkspace(join(root, "b"), env);
    expect(JSON.parse(readFileSync(trustFile(env), "utf8"))).toEqual({
      version: 2,
      workspaces: [{ path: join(root, "a") }, { path: join(root, "b"), files: {} }],
    });
    trustWorkspace(join(root, "a"), env);
    expect(trustEntryFor(join(root, "a"), env)).toEqual({ path: join(root, "a"), files: {} });
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
    const badRecords = [
      "{not json",
      `{"version": 1, "workspaces": ["relative/path"]}`,
      `{"version": 9, "workspaces": []}`,
      `{"version": 2, "workspaces": [{"path": "/a", "files": {"/a/zero-cli.jsonc": "not-a-hash"}}]}`,
      `{"version": 2, "workspaces": [{"path": "/a", "extra": true}]}`,
    ];
    for (const content of badRecords) {
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

describe("concurrent trust", () => {
  function writeLock(env: { HOME: string }, holder: unknown): string {
    const lock = `${trustFile(env)}.lock`;
    mkdirSync(join(env.HOME, ".config", "zero-cli"), { recursive: true });
    writeFileSync(lock, JSON.stringify(holder));
    return lock;
  }

  test("a lock left by a process that no longer runs is broken at once", () => {
    const { root, env } = sandbox();
    const dead = Bun.spawnSync(["true"]).pid;
    const lock = writeLock(env, { pid: dead, host: hostname(), token: "old" });
    const started = performance.now();
    trustWorkspace(join(root, "a"), env);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(readTrustedWorkspaces(env)).toEqual([join(root, "a")]);
    expect(existsSync(lock)).toBe(false);
    expect(readdirSync(join(env.HOME, ".config", "zero-cli"))).toEqual(["trusted-workspaces.json"]);
  });

  test("a lock older than 30 s is broken whoever holds it", () => {
    const { root, env } = sandbox();
    const lock = writeLock(env, { pid: process.ppid, host: "elsewhere", token: "old" });
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    trustWorkspace(join(root, "a"), env);
    expect(readTrustedWorkspaces(env)).toEqual([join(root, "a")]);
    expect(existsSync(lock)).toBe(false);
  });

  test("a live lock is waited for, then taken", async () => {
    const { root, env } = sandbox();
    const lock = `${trustFile(env)}.lock`;
    mkdirSync(join(env.HOME, ".config", "zero-cli"), { recursive: true });
    const holder = Bun.spawn(
      [process.execPath, "-e", `const fs = require("node:fs"); fs.writeFileSync(${JSON.stringify(lock)}, JSON.stringify({ pid: process.pid, host: require("node:os").hostname(), token: "t" }), { flag: "wx" }); setTimeout(() => fs.rmSync(${JSON.stringify(lock)}), 400);`],
      { stdout: "ignore", stderr: "inherit" },
    );
    for (let i = 0; i < 500 && !existsSync(lock); i++) await Bun.sleep(10);
    expect(existsSync(lock)).toBe(true);
    const started = performance.now();
    trustWorkspace(join(root, "a"), env);
    expect(performance.now() - started).toBeGreaterThan(100);
    expect(readTrustedWorkspaces(env)).toEqual([join(root, "a")]);
    expect(await holder.exited).toBe(0);
  });

  test("eight 'zero trust' processes started at once all get recorded, each with its file's hash", async () => {
    const sandbox = makeSandbox();
    roots.push(sandbox.root);
    const dirs = Array.from({ length: 8 }, (_, i) => join(sandbox.root, `project-${i}`));
    const texts = dirs.map((_, i) => `{ "agents": { "a${i}": { "description": "project ${i}" } } }\n`);
    for (const [i, dir] of dirs.entries()) {
      mkdirSync(dir);
      // Half have a project file, half are trusted empty.
      if (i % 2 === 0) writeFileSync(join(dir, "zero-cli.jsonc"), texts[i]!);
    }
    const runs = dirs.map((dir) => spawnZero(["trust", "--cwd", dir], { sandbox, timeoutMs: 30_000 }).result);
    const results = await Promise.all(runs);
    for (const [i, result] of results.entries()) expect({ i, code: result.code, stderr: result.stderr }).toEqual({ i, code: 0, stderr: "" });
    const env = { HOME: sandbox.home, XDG_CONFIG_HOME: join(sandbox.home, ".config") };
    expect(readTrustedWorkspaces(env).toSorted()).toEqual(dirs);
    for (const [i, dir] of dirs.entries()) {
      const files = i % 2 === 0 ? { [join(dir, "zero-cli.jsonc")]: contentHash(texts[i]!) } : {};
      expect(trustEntryFor(dir, env)).toEqual({ path: dir, files });
    }
    expect(readdirSync(join(sandbox.home, ".config", "zero-cli")).filter((name) => name !== "config.jsonc")).toEqual(["trusted-workspaces.json"]);
  }, 60_000);
});
