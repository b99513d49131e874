import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { McpOAuthSettings } from "../../config/schema.ts";
import { connectWithLogin, createFakeAuthorization, freePort, isolatedEnv, printedUrl, serve, serveResourceServer, type AuthorizationServerOptions } from "./oauth-test-support.ts";
import { createOAuthSession, forgetServer, type OAuthSession } from "./session.ts";
import { MAX_TOKEN_LIFETIME_SECONDS } from "./provider.ts";
import { oauthStoreFile, readServerEntry, updateServerEntry } from "./store.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** An authorization server on its own port (cross-origin and private: hence allowPrivateNetwork) and a protected MCP server naming it. */
function world(asOptions: AuthorizationServerOptions = {}, scopesSupported?: string[]) {
  const authorization = createFakeAuthorization(asOptions);
  const as = serve((request, origin) => authorization.handle(request, origin));
  const mcp = serveResourceServer({ authorization, authorizationServer: as.origin, ...(scopesSupported ? { scopesSupported } : {}) });
  const port = freePort();
  const sandbox = isolatedEnv({ ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: String(port) });
  cleanups.push(as.close, mcp.close, sandbox.cleanup);
  return { authorization, as, mcp, port, env: sandbox.env };
}

function session(env: Record<string, string>, url: string, settings: true | McpOAuthSettings, lines: string[], interactive = true): OAuthSession {
  const created = createOAuthSession({ serverId: "issues", serverUrl: url, settings, env, log: (line) => lines.push(line), interactive });
  cleanups.push(created.close);
  return created;
}

async function callWhoami(client: Awaited<ReturnType<typeof connectWithLogin>>): Promise<string> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  await client.close();
  return (result.content as { type: string; text: string }[])[0]!.text;
}

describe("login", () => {
  test("oauth with DCR: discovery, registration, S256 + state + resource in the authorize URL, callback, then the tools work", async () => {
    const { authorization, as, mcp, port, env } = world();
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    const client = await connectWithLogin(oauth, mcp.mcpUrl, lines);
    expect(await callWhoami(client)).toBe("an authorized client");

    expect(lines[0]).toBe(`zero: MCP server "issues" needs authorization; open this URL in a browser:`);
    const authorize = new URL(printedUrl(lines)!);
    expect(authorize.origin).toBe(as.origin);
    expect(authorize.pathname).toBe("/authorize");
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get("resource")).toBe(mcp.mcpUrl);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${port}/oauth/callback`);
    expect(authorize.searchParams.get("client_id")).toBe("registered-1");
    expect(authorize.searchParams.get("scope")).toBeNull(); // none configured, none suggested

    // Registered as a public client for exactly our callback.
    expect(authorization.registrations).toHaveLength(1);
    expect(authorization.registrations[0]).toMatchObject({ redirect_uris: [`http://127.0.0.1:${port}/oauth/callback`], token_endpoint_auth_method: "none" });
    const exchange = authorization.tokenRequests[0]!.form;
    expect(exchange.get("grant_type")).toBe("authorization_code");
    expect(exchange.get("resource")).toBe(mcp.mcpUrl);
    expect(exchange.get("code_verifier")).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(oauth.hasTokens()).toBe(true);

    // The store is private and holds what a later process needs; the verifier is gone.
    const file = oauthStoreFile(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    expect(Object.keys(stored.servers.issues)).toEqual([mcp.mcpUrl]);
    const entry = stored.servers.issues[mcp.mcpUrl];
    expect(entry.tokens.access_token).toStartWith("at-");
    expect(entry.tokens.refresh_token).toStartWith("rt-");
    expect(entry.tokens.expires_at).toBeGreaterThan(Date.now() + 3_500_000);
    expect(entry.client.information.client_id).toBe("registered-1");
    expect(entry.discovery.authorizationServerUrl).toBe(as.origin);
    expect(entry.codeVerifier).toBeUndefined();
    // Nothing secret reached the terminal.
    expect(lines.join("\n")).not.toContain(entry.tokens.access_token);
    expect(lines).toHaveLength(2);

    // A later process with the stored token connects without any login.
    const later = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    const requestsBefore = authorization.requests.length;
    expect(await callWhoami(await connectWithLogin(later, mcp.mcpUrl, lines))).toBe("an authorized client");
    expect(authorization.requests.length).toBe(requestsBefore);
    expect(lines).toHaveLength(2);
  });
});

describe("clients and scopes", () => {
  test("a dynamic registration is reused by the next login, but not for another callback port", async () => {
    const { authorization, mcp, env } = world();
    const lines: string[] = [];
    const first = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    await (await connectWithLogin(first, mcp.mcpUrl, lines)).close();
    await first.provider.invalidateCredentials!("tokens");
    authorization.expireAccessTokens();
    await (await connectWithLogin(first, mcp.mcpUrl, lines)).close();
    expect(authorization.registrations).toHaveLength(1);
    expect(lines).toHaveLength(4); // two logins

    const otherPort = freePort();
    const moved = session(env, mcp.mcpUrl, { allowPrivateNetwork: true, callbackPort: otherPort }, lines);
    await moved.provider.invalidateCredentials!("tokens");
    await (await connectWithLogin(moved, mcp.mcpUrl, lines)).close();
    expect(authorization.registrations).toHaveLength(2);
    expect(authorization.registrations[1]).toMatchObject({ redirect_uris: [`http://127.0.0.1:${otherPort}/oauth/callback`] });
    expect(new URL(printedUrl(lines.slice(4))!).searchParams.get("client_id")).toBe("registered-2");
  });

  test("a confidential pre-registered client: the secret comes from the named env var, the configured scopes are requested, nothing is registered or stored of it", async () => {
    for (const method of ["client_secret_post", "client_secret_basic"]) {
      // The server's metadata suggests other scopes: the configured ones still win.
      const { authorization, mcp, env } = world({ clients: { "registered-client-id": "s3cret-value" }, tokenAuthMethods: [method] }, ["everything"]);
      env.ENTERPRISE_MCP_CLIENT_SECRET = "s3cret-value";
      const lines: string[] = [];
      const settings = { clientId: "registered-client-id", clientSecretEnv: "ENTERPRISE_MCP_CLIENT_SECRET", scopes: ["tools.read", "tools.write"], allowPrivateNetwork: true };
      const oauth = session(env, mcp.mcpUrl, settings, lines);
      expect(await callWhoami(await connectWithLogin(oauth, mcp.mcpUrl, lines))).toBe("an authorized client");
      const authorize = new URL(printedUrl(lines)!);
      expect(authorize.searchParams.get("client_id")).toBe("registered-client-id");
      expect(authorize.searchParams.get("scope")).toBe("tools.read tools.write");
      expect(authorization.registrations).toEqual([]);
      const { form, headers } = authorization.tokenRequests[0]!;
      if (method === "client_secret_post") {
        expect(form.get("client_secret")).toBe("s3cret-value");
      } else {
        expect(headers.get("authorization")).toBe(`Basic ${btoa("registered-client-id:s3cret-value")}`);
        expect(form.get("client_secret")).toBeNull();
      }
      expect(readFileSync(oauthStoreFile(env), "utf8")).not.toContain("s3cret-value");
    }
  });

  test("a public pre-registered client sends its client_id and no secret", async () => {
    const { authorization, mcp, env } = world({ clients: { "public-client": undefined } });
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { clientId: "public-client", allowPrivateNetwork: true }, lines);
    expect(await callWhoami(await connectWithLogin(oauth, mcp.mcpUrl, lines))).toBe("an authorized client");
    const { form, headers } = authorization.tokenRequests[0]!;
    expect(form.get("client_id")).toBe("public-client");
    expect(form.get("client_secret")).toBeNull();
    expect(headers.get("authorization")).toBeNull();
    expect(authorization.registrations).toEqual([]);
  });

  test("a clientSecretEnv naming an unset variable is a clear error, and nothing is sent to the token endpoint", async () => {
    const { authorization, mcp, env } = world({ clients: { "registered-client-id": "x" } });
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { clientId: "registered-client-id", clientSecretEnv: "MISSING_MCP_SECRET", allowPrivateNetwork: true }, lines);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines)).rejects.toThrow(`MCP server "issues": oauth.clientSecretEnv names MISSING_MCP_SECRET, which is not set`);
    expect(authorization.tokenRequests).toEqual([]);
    expect(lines).toEqual([]);
  });

  test("without clientId, an authorization server without registration is a clear error", async () => {
    const { mcp, env } = world({ registration: false });
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines)).rejects.toThrow(/offers no dynamic client registration; register a client with redirect URI http:\/\/127\.0\.0\.1:\d+\/oauth\/callback and set oauth\.clientId/);
  });
});

describe("callback port", () => {
  test("53682 by default; ZERO_CLI_MCP_OAUTH_CALLBACK_PORT overrides it; oauth.callbackPort overrides both", () => {
    const { env, cleanup } = isolatedEnv();
    cleanups.push(cleanup);
    const url = "https://mcp.example.com/mcp";
    expect(session(env, url, true, []).redirectUrl).toBe("http://127.0.0.1:53682/oauth/callback");
    expect(session({ ...env, ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: "40001" }, url, true, []).redirectUrl).toBe("http://127.0.0.1:40001/oauth/callback");
    expect(session({ ...env, ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: "40001" }, url, { callbackPort: 40002 }, []).redirectUrl).toBe("http://127.0.0.1:40002/oauth/callback");
    expect(() => session({ ...env, ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: "99999" }, url, true, [])).toThrow("ZERO_CLI_MCP_OAUTH_CALLBACK_PORT must be a port number from 1 to 65535");
  });

  test("the configured port is the one in redirect_uri and the one the callback reaches", async () => {
    const { mcp, env } = world();
    const configured = freePort();
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { callbackPort: configured, allowPrivateNetwork: true }, lines);
    expect(await callWhoami(await connectWithLogin(oauth, mcp.mcpUrl, lines))).toBe("an authorized client");
    expect(new URL(printedUrl(lines)!).searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${configured}/oauth/callback`);
  });
});

describe("refresh and the stored state", () => {
  test("an expired access token is refreshed with the refresh_token grant, without a new login", async () => {
    const { authorization, mcp, env } = world();
    const lines: string[] = [];
    await (await connectWithLogin(session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines), mcp.mcpUrl, lines)).close();
    const before = JSON.parse(readFileSync(oauthStoreFile(env), "utf8")).servers.issues[mcp.mcpUrl].tokens;
    authorization.expireAccessTokens();

    const later = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    expect(await callWhoami(await connectWithLogin(later, mcp.mcpUrl, lines, async () => {
      throw new Error("no browser step expected");
    }))).toBe("an authorized client");
    expect(lines).toHaveLength(2); // only the first login printed a URL
    const refresh = authorization.tokenRequests.at(-1)!.form;
    expect(refresh.get("grant_type")).toBe("refresh_token");
    expect(refresh.get("refresh_token")).toBe(before.refresh_token);
    expect(refresh.get("resource")).toBe(mcp.mcpUrl);
    const after = JSON.parse(readFileSync(oauthStoreFile(env), "utf8")).servers.issues[mcp.mcpUrl].tokens;
    expect(after.access_token).not.toBe(before.access_token);
  });

  test("tokens() reports the remaining lifetime from the stored expiry", async () => {
    const { env, cleanup } = isolatedEnv();
    cleanups.push(cleanup);
    const oauth = session(env, "https://mcp.example.com/mcp", true, []);
    await oauth.provider.saveTokens({ access_token: "a", token_type: "Bearer", expires_in: 100, refresh_token: "r" });
    const stored = JSON.parse(readFileSync(oauthStoreFile(env), "utf8")).servers.issues["https://mcp.example.com/mcp"].tokens;
    expect(stored.expires_at).toBeGreaterThan(Date.now() + 98_000);
    const tokens = await oauth.provider.tokens();
    expect(tokens?.expires_in).toBeGreaterThanOrEqual(98);
    expect(tokens?.expires_in).toBeLessThanOrEqual(100);
    expect(tokens).not.toHaveProperty("expires_at");
  });

  test("entries are bound to the server URL, the same id at another URL keeps its own, and forgetServer removes every one", async () => {
    const { env, cleanup } = isolatedEnv();
    cleanups.push(cleanup);
    const first = session(env, "https://mcp.example.com/mcp", true, []);
    await first.provider.saveTokens({ access_token: "a", token_type: "Bearer" });
    expect(first.hasTokens()).toBe(true);
    // The same id pointed at another URL (another project's config) sees nothing, and its writes leave the first alone.
    const moved = session(env, "https://elsewhere.example.com/mcp", true, []);
    expect(moved.hasTokens()).toBe(false);
    expect(await moved.provider.tokens()).toBeUndefined();
    await moved.provider.saveTokens({ access_token: "b", token_type: "Bearer" });
    await moved.provider.invalidateCredentials!("all");
    expect((await first.provider.tokens())?.access_token).toBe("a");
    await moved.provider.saveTokens({ access_token: "b", token_type: "Bearer" });
    expect((await moved.provider.tokens())?.access_token).toBe("b");
    expect((await first.provider.tokens())?.access_token).toBe("a");
    expect(forgetServer(env, "issues")).toBe(true);
    expect(first.hasTokens()).toBe(false);
    expect(moved.hasTokens()).toBe(false);
    expect(forgetServer(env, "issues")).toBe(false);
  });
});

/** `world()` with an authorization server whose JSON answers on `path` are rewritten by `rewrite`. */
function hostileWorld(path: "/token" | "/register", rewrite: (body: Record<string, unknown>) => Record<string, unknown>) {
  const authorization = createFakeAuthorization();
  const as = serve(async (request, origin) => {
    const answer = await authorization.handle(request, origin);
    if (answer === undefined || new URL(request.url).pathname !== path || !answer.ok) return answer;
    return Response.json(rewrite((await answer.json()) as Record<string, unknown>), { status: answer.status });
  });
  const mcp = serveResourceServer({ authorization, authorizationServer: as.origin });
  const sandbox = isolatedEnv({ ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: String(freePort()) });
  cleanups.push(as.close, mcp.close, sandbox.cleanup);
  // Another server signed in before: whatever the hostile one does must leave it readable.
  updateServerEntry(sandbox.env, "other", OTHER_URL, (entry) => ({ ...entry, tokens: { access_token: "other-token", token_type: "Bearer" } }));
  return { authorization, mcp, env: sandbox.env };
}

const OTHER_URL = "https://other.example.com/mcp";

describe("a hostile authorization server", () => {
  test("an absurd expires_in is bounded to a year: the login works and the store stays readable", async () => {
    for (const expiresIn of [1e306, Number.MAX_VALUE]) {
      const { mcp, env } = hostileWorld("/token", (body) => ({ ...body, expires_in: expiresIn }));
      const lines: string[] = [];
      const started = Date.now();
      expect(await callWhoami(await connectWithLogin(session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines), mcp.mcpUrl, lines))).toBe("an authorized client");
      const tokens = readServerEntry(env, "issues", mcp.mcpUrl)!.tokens!;
      expect(tokens.expires_in).toBe(MAX_TOKEN_LIFETIME_SECONDS);
      expect(tokens.expires_at).toBeGreaterThanOrEqual(started + MAX_TOKEN_LIFETIME_SECONDS * 1000);
      expect(tokens.expires_at).toBeLessThanOrEqual(Date.now() + MAX_TOKEN_LIFETIME_SECONDS * 1000);
      expect(readServerEntry(env, "other", OTHER_URL)?.tokens?.access_token).toBe("other-token");
      expect(forgetServer(env, "issues")).toBe(true);
    }
  });

  test("an empty access token is refused with a clear error; nothing is stored and the other server's entry stays readable", async () => {
    const { authorization, mcp, env } = hostileWorld("/token", (body) => ({ ...body, access_token: "" }));
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines)).rejects.toThrow(`MCP server "issues": its authorization server issued an empty access token; nothing was saved`);
    expect(authorization.tokenRequests).toHaveLength(1);
    expect(oauth.hasTokens()).toBe(false);
    expect(readServerEntry(env, "issues", mcp.mcpUrl)?.tokens).toBeUndefined();
    expect(readServerEntry(env, "other", OTHER_URL)?.tokens?.access_token).toBe("other-token");
    expect(forgetServer(env, "issues")).toBe(true); // the registration and discovery that were kept
    expect(readServerEntry(env, "other", OTHER_URL)?.tokens?.access_token).toBe("other-token");
  });

  test("a registration with an empty client_id is refused with a clear error before any authorization URL", async () => {
    const { mcp, env } = hostileWorld("/register", (body) => ({ ...body, client_id: "" }));
    const lines: string[] = [];
    const oauth = session(env, mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines)).rejects.toThrow(`MCP server "issues": its authorization server registered a client without a client_id; nothing was saved`);
    expect(lines).toEqual([]);
    expect(readServerEntry(env, "issues", mcp.mcpUrl)?.client).toBeUndefined();
    expect(readServerEntry(env, "other", OTHER_URL)?.tokens?.access_token).toBe("other-token");
  });

  test("saveTokens: a negative, NaN or missing expires_in is an unknown expiry; a finite one is kept as sent", async () => {
    const { env, cleanup } = isolatedEnv();
    cleanups.push(cleanup);
    const url = "https://mcp.example.com/mcp";
    const oauth = session(env, url, true, []);
    for (const expiresIn of [-5, Number.NaN, undefined, "3600" as unknown as number]) {
      await oauth.provider.saveTokens({ access_token: "a", token_type: "Bearer", ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}) });
      const tokens = readServerEntry(env, "issues", url)!.tokens!;
      expect(tokens).not.toHaveProperty("expires_in");
      expect(tokens).not.toHaveProperty("expires_at");
      expect(await oauth.provider.tokens()).toEqual({ access_token: "a", token_type: "Bearer" });
    }
    await oauth.provider.saveTokens({ access_token: "a", token_type: "Bearer", expires_in: 0 });
    expect(readServerEntry(env, "issues", url)!.tokens!.expires_in).toBe(0);
    expect((await oauth.provider.tokens())?.expires_in).toBe(0);
  });
});
