import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { McpAuthError } from "./errors.ts";
import { isolatedEnv } from "./oauth-test-support.ts";
import { oauthStoreFile, readServerEntry, removeServerEntry, updateServerEntry, type ServerEntry } from "./store.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const URL_A = "https://mcp.example.com/mcp";
const URL_B = "https://other.example.com/mcp";

function stored(env: Record<string, string>): { version: number; servers: Record<string, unknown> } {
  return JSON.parse(readFileSync(oauthStoreFile(env), "utf8"));
}

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
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 2, servers: { issues: { [URL_A]: { codeVerifier: "v" } } } });
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

  test("a file that is not JSON, or not this shape at the top, is a clear error naming it, and is never overwritten or removed from", () => {
    const { env } = sandbox();
    const file = oauthStoreFile(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const bad = [
      ["{not json", "it is not valid JSON"],
      ["[]", "unexpected content"],
      ["null", "unexpected content"],
      [`{"version": 3, "servers": {}}`, "unexpected content at version"],
      [`{"servers": {}}`, "unexpected content at version"],
      [`{"version": 2, "servers": []}`, "unexpected content at servers"],
      [`{"version": 1}`, "unexpected content at servers"],
      [`{"version": 2, "servers": {}, "extra": 1}`, "unexpected content at extra"],
    ] as const;
    for (const [content, why] of bad) {
      writeFileSync(file, content, { mode: 0o600 });
      const error = failure(() => readServerEntry(env, "issues", URL_A));
      expect(error.message).toBe(`${file}: corrupt MCP OAuth store (${why}); fix or delete it, then run "zero mcp login <server>" again`);
      expect(error.file).toBe(file);
      failure(() => updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, codeVerifier: "new" })));
      failure(() => removeServerEntry(env, "issues"));
      expect(readFileSync(file, "utf8")).toBe(content);
    }
  });

  test("the same id at two URLs keeps two entries: neither reads nor overwrites the other, and logout removes both", () => {
    const { env } = sandbox();
    updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, tokens: { access_token: "user-token", token_type: "Bearer" } }));
    // Another project configures the same id with its own URL: it sees nothing, and its writes stay its own.
    expect(readServerEntry(env, "issues", URL_B)).toBeUndefined();
    updateServerEntry(env, "issues", URL_B, (entry) => ({ ...entry, tokens: { access_token: "project-token", token_type: "Bearer" } }));
    updateServerEntry(env, "issues", URL_B, ({ tokens: _gone, ...entry }) => entry);
    expect(readServerEntry(env, "issues", URL_A)?.tokens?.access_token).toBe("user-token");
    expect(readServerEntry(env, "issues", URL_B)).toBeUndefined();
    updateServerEntry(env, "issues", URL_B, (entry) => ({ ...entry, codeVerifier: "v" }));
    expect(readServerEntry(env, "issues", URL_B)).toEqual({ url: URL_B, codeVerifier: "v" });
    expect(readServerEntry(env, "issues", URL_A)).toEqual({ url: URL_A, tokens: { access_token: "user-token", token_type: "Bearer" } });
    // The same URL spelled differently is the same entry.
    expect(readServerEntry(env, "issues", "HTTPS://MCP.EXAMPLE.COM:443/mcp")?.tokens?.access_token).toBe("user-token");
    expect(Object.keys(stored(env).servers.issues as object).sort()).toEqual([URL_B, URL_A].sort());

    expect(removeServerEntry(env, "issues")).toBe(true);
    expect(readServerEntry(env, "issues", URL_A)).toBeUndefined();
    expect(readServerEntry(env, "issues", URL_B)).toBeUndefined();
    expect(stored(env)).toEqual({ version: 2, servers: {} });
  });

  test("an entry left empty is removed, and its id with it when it was the last", () => {
    const { env } = sandbox();
    updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, codeVerifier: "a" }));
    updateServerEntry(env, "issues", URL_B, (entry) => ({ ...entry, codeVerifier: "b" }));
    updateServerEntry(env, "issues", URL_A, (entry) => ({ url: entry.url }));
    expect(stored(env)).toEqual({ version: 2, servers: { issues: { [URL_B]: { codeVerifier: "b" } } } });
    updateServerEntry(env, "issues", URL_B, (entry) => ({ url: entry.url }));
    expect(stored(env)).toEqual({ version: 2, servers: {} });
    expect(removeServerEntry(env, "issues")).toBe(false);
  });

  test("what the store could not read back is refused with an error naming the server, and nothing is written", () => {
    const { env } = sandbox();
    const file = oauthStoreFile(env);
    const hostile: [string, (entry: ServerEntry) => ServerEntry, string][] = [
      ["an infinite expiry", (entry) => ({ ...entry, tokens: { access_token: "a", token_type: "Bearer", expires_at: Date.now() + 1e306 * 1000 } }), "tokens.expires_at"],
      ["a NaN expiry", (entry) => ({ ...entry, tokens: { access_token: "a", token_type: "Bearer", expires_in: Number.NaN } }), "tokens.expires_in"],
      ["an empty access token", (entry) => ({ ...entry, tokens: { access_token: "", token_type: "Bearer" } }), "tokens.access_token"],
      ["an empty client_id", (entry) => ({ ...entry, client: { information: { client_id: "" }, redirectUrl: "http://127.0.0.1:1/oauth/callback" } }), "client.information.client_id"],
      ["an empty authorization server", (entry) => ({ ...entry, discovery: { authorizationServerUrl: "" } }), "discovery.authorizationServerUrl"],
    ];
    // Into no file at all: none is created.
    for (const [, change, where] of hostile) {
      expect(failure(() => updateServerEntry(env, "evil", URL_B, change)).message).toBe(
        `MCP server "evil": refusing to store invalid OAuth data (unexpected content at ${where}); nothing was saved`,
      );
      expect(existsSync(file)).toBe(false);
    }
    // Into a file holding other entries (and a good one of the same server): the file is unchanged.
    updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, tokens: { access_token: "good", token_type: "Bearer", expires_at: Date.now() + 60_000 } }));
    updateServerEntry(env, "evil", URL_B, (entry) => ({ ...entry, tokens: { access_token: "earlier", token_type: "Bearer" } }));
    const before = readFileSync(file, "utf8");
    for (const [what, change] of hostile) {
      expect(failure(() => updateServerEntry(env, "evil", URL_B, change)).message, what).toContain(`MCP server "evil": refusing to store invalid OAuth data`);
      expect(readFileSync(file, "utf8")).toBe(before);
    }
    expect(readServerEntry(env, "issues", URL_A)?.tokens?.access_token).toBe("good");
    expect(readServerEntry(env, "evil", URL_B)?.tokens?.access_token).toBe("earlier");
    expect(readdirSync(dirname(file)).sort()).toEqual(["mcp-oauth.json"]);
  });

  test("a bad entry written by hand reads as absent, blocks no other entry, is kept by other updates, replaced by its own and removed by logout", () => {
    const { env } = sandbox();
    const file = oauthStoreFile(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const good = { tokens: { access_token: "good", token_type: "Bearer" } };
    const bad = {
      evil: { [URL_B]: { tokens: { access_token: "x", token_type: "Bearer", expires_at: null } } },
      empty: { [URL_B]: { tokens: { access_token: "", token_type: "Bearer" } }, [URL_A]: { client: { information: { client_id: "" }, redirectUrl: "r" } } },
      extra: { [URL_B]: { unknown: 1 } },
      scalar: 5,
      list: { [URL_B]: [] },
    };
    writeFileSync(file, JSON.stringify({ version: 2, servers: { issues: { [URL_A]: good }, ...bad } }), { mode: 0o600 });

    expect(readServerEntry(env, "issues", URL_A)).toEqual({ url: URL_A, ...good });
    for (const id of Object.keys(bad)) {
      expect(readServerEntry(env, id, URL_A)).toBeUndefined();
      expect(readServerEntry(env, id, URL_B)).toBeUndefined();
    }
    // Updating another server keeps the bad entries exactly as they were.
    updateServerEntry(env, "issues", URL_A, (entry) => ({ ...entry, codeVerifier: "v" }));
    expect(stored(env)).toEqual({ version: 2, servers: { issues: { [URL_A]: { ...good, codeVerifier: "v" } }, ...bad } });

    // A new login of the bad entry's server replaces it whole; it starts from an empty entry.
    let seen: ServerEntry | undefined;
    updateServerEntry(env, "evil", URL_B, (entry) => {
      seen = entry;
      return { ...entry, codeVerifier: "w" };
    });
    expect(seen).toEqual({ url: URL_B });
    expect(readServerEntry(env, "evil", URL_B)).toEqual({ url: URL_B, codeVerifier: "w" });
    // Even an id whose value is not an object of entries.
    updateServerEntry(env, "scalar", URL_B, (entry) => ({ ...entry, codeVerifier: "s" }));
    expect(readServerEntry(env, "scalar", URL_B)).toEqual({ url: URL_B, codeVerifier: "s" });

    // Logout removes them, and only them.
    for (const id of ["empty", "extra", "list", "evil", "scalar"]) expect(removeServerEntry(env, id)).toBe(true);
    expect(stored(env)).toEqual({ version: 2, servers: { issues: { [URL_A]: { ...good, codeVerifier: "v" } } } });
  });

  test("the version 1 file (one entry per id, with its url) is read, and written as version 2 by the next update", () => {
    const { env } = sandbox();
    const file = oauthStoreFile(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tokens = { access_token: "kept", token_type: "Bearer", expires_at: 1_900_000_000_000, refresh_token: "r" };
    const client = { information: { client_id: "registered-1" }, redirectUrl: "http://127.0.0.1:53682/oauth/callback" };
    const v1 = {
      version: 1,
      servers: {
        issues: { url: URL_A, tokens, client },
        // What the previous version wrote for `expires_in: 1e306`: it must not block the others.
        evil: { url: URL_B, tokens: { access_token: "x", token_type: "Bearer", expires_in: 1e306, expires_at: null } },
        nourl: { codeVerifier: "lost" },
      },
    };
    const content = JSON.stringify(v1, null, 2);
    writeFileSync(file, content, { mode: 0o600 });

    expect(readServerEntry(env, "issues", URL_A)).toEqual({ url: URL_A, tokens, client });
    expect(readServerEntry(env, "issues", URL_B)).toBeUndefined();
    expect(readServerEntry(env, "evil", URL_B)).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe(content); // reading does not rewrite

    updateServerEntry(env, "other", URL_B, (entry) => ({ ...entry, codeVerifier: "o" }));
    expect(stored(env)).toEqual({
      version: 2,
      servers: {
        issues: { [URL_A]: { tokens, client } },
        evil: { [URL_B]: { tokens: v1.servers.evil.tokens } }, // kept as it was (still unreadable); "nourl" could never be read and is gone
        other: { [URL_B]: { codeVerifier: "o" } },
      },
    });
    expect(readServerEntry(env, "issues", URL_A)).toEqual({ url: URL_A, tokens, client });
    expect(removeServerEntry(env, "evil")).toBe(true);
    expect(readServerEntry(env, "issues", URL_A)?.tokens?.access_token).toBe("kept");
  });

  test("logout of a server with a bad entry in a version 1 file works, and leaves the others readable", () => {
    const { env } = sandbox();
    const file = oauthStoreFile(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const servers = {
      issues: { url: URL_A, tokens: { access_token: "kept", token_type: "Bearer" } },
      evil: { url: URL_B, tokens: { access_token: "x", token_type: "Bearer", expires_at: null } },
    };
    writeFileSync(file, JSON.stringify({ version: 1, servers }), { mode: 0o600 });
    expect(removeServerEntry(env, "evil")).toBe(true);
    expect(removeServerEntry(env, "evil")).toBe(false);
    expect(stored(env)).toEqual({ version: 2, servers: { issues: { [URL_A]: { tokens: { access_token: "kept", token_type: "Bearer" } } } } });
  });

  test("removing from a store that does not exist creates nothing", () => {
    const { env } = sandbox();
    expect(removeServerEntry(env, "issues")).toBe(false);
    expect(() => statSync(dirname(oauthStoreFile(env)))).toThrow();
  });
});
