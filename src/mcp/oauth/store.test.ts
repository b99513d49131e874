import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { McpAuthError } from "./errors.ts";
import { isolatedEnv } from "./oauth-test-support.ts";
import { oauthStoreFile, readServerEntry, removeServerEntry, updateServerEntry } from "./store.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const URL_A = "https://mcp.example.com/mcp";

function sandbox() {
  const created = isolatedEnv();
  cleanups.push(created.cleanup);
  return created;
}

function failure(run: () => unknown): McpAuthError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(McpAuthError);
    return error as McpAuthError;
  }
  throw new Error("expected a failure");
}

describe("the MCP OAuth store", () => {
  test("lives in the config dir as mcp-oauth.json: directory 0700, file 0600, no temp or lock files left", () => {
    const { env, home } = sandbox();
    updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, codeVerifier: "v" }));
    const file = oauthStoreFile(env);
    expect(file).toBe(join(home, ".config", "zero-cli", "mcp-oauth.json"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(readdirSync(dirname(file))).toEqual(["mcp-oauth.json"]);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 1, servers: { issues: { url: URL_A, codeVerifier: "v" } } });
  });

  test("entries of other servers are kept by an update", () => {
    const { env } = sandbox();
    updateServerEntry(env, "a", URL_A, (entry) => ({ ...entry, codeVerifier: "1" }));
    updateServerEntry(env, "b", URL_A, (entry) => ({ ...entry, codeVerifier: "2" }));
    expect(readServerEntry(env, "a", URL_A)?.codeVerifier).toBe("1");
    expect(readServerEntry(env, "b", URL_A)?.codeVerifier).toBe("2");
    expect(removeServerEntry(env, "a")).toBe(true);
    expect(readServerEntry(env, "a", URL_A)).toBeUndefined();
    expect(readServerEntry(env, "b", URL_A)?.codeVerifier).toBe("2");
  });

  test("a symlinked file is refused, for reading and writing, and its target is untouched", () => {
    const { env, home } = sandbox();
    const file = oauthStoreFile(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const target = join(home, "elsewhere.json");
    writeFileSync(target, JSON.stringify({ version: 1, servers: {} }));
    symlinkSync(target, file);
    expect(failure(() => readServerEntry(env, "issues", URL_A)).message).toBe(`MCP OAuth store: ${file} is a symlink; refusing to follow it`);
    expect(failure(() => updateServerEntry(env, "issues", URL_A, (entry) => entry)).file).toBe(file);
    expect(readFileSync(target, "utf8")).toBe(JSON.stringify({ version: 1, servers: {} }));
  });

  test("a symlinked config directory is refused for reading and writing", () => {
    const { env, home } = sandbox();
    const dir = dirname(oauthStoreFile(env));
    mkdirSync(join(home, "real-config"), { recursive: true });
    mkdirSync(dirname(dir), { recursive: true });
    symlinkSync(join(home, "real-config"), dir);
    const message = `MCP OAuth store: ${dir} is a symlink; private files are only kept in a real directory`;
    expect(failure(() => updateServerEntry(env, "issues", URL_A, (entry) => entry)).message).toBe(message);
    expect(failure(() => readServerEntry(env, "issues", URL_A)).message).toBe(message);
    expect(readdirSync(join(home, "real-config"))).toEqual([]);
  });

  test("a corrupt file is a clear error naming it, and is never overwritten by a save", () => {
    const { env } = sandbox();
    const file = oauthStoreFile(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const bad = [
      ["{not json", "it is not valid JSON"],
      [`{"version": 2, "servers": {}}`, "unexpected content at version"],
      [`{"version": 1, "servers": {"issues": {"url": "${URL_A}", "tokens": {"token_type": "Bearer"}}}}`, "unexpected content at servers.issues.tokens.access_token"],
      [`{"version": 1, "servers": {"issues": {"url": "${URL_A}", "extra": 1}}}`, "unexpected content at servers.issues"],
    ] as const;
    for (const [content, why] of bad) {
      writeFileSync(file, content, { mode: 0o600 });
      const error = failure(() => readServerEntry(env, "issues", URL_A));
      expect(error.message).toBe(`${file}: corrupt MCP OAuth store (${why}); fix or delete it, then run "zero mcp login <server>" again`);
      expect(error.file).toBe(file);
      failure(() => updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, codeVerifier: "new" })));
      expect(readFileSync(file, "utf8")).toBe(content);
    }
  });

  test("an entry bound to another URL reads as absent and is replaced whole by the next write", () => {
    const { env } = sandbox();
    updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, tokens: { access_token: "old", token_type: "Bearer" } }));
    const moved = "https://other.example.com/mcp";
    expect(readServerEntry(env, "issues", moved)).toBeUndefined();
    updateServerEntry(env, "issues", moved, (entry) => ({ ...entry, codeVerifier: "v" }));
    expect(readServerEntry(env, "issues", moved)).toEqual({ url: moved, codeVerifier: "v" });
    expect(readServerEntry(env, "issues", URL_A)).toBeUndefined();
  });

  test("removing from a store that does not exist creates nothing", () => {
    const { env } = sandbox();
    expect(removeServerEntry(env, "issues")).toBe(false);
    expect(() => statSync(dirname(oauthStoreFile(env)))).toThrow();
  });
});
