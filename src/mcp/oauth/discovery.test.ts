import { afterEach, describe, expect, test } from "bun:test";
import type { McpOAuthSettings } from "../../config/schema.ts";
import { connectWithLogin, createFakeAuthorization, freePort, isolatedEnv, printedUrl, serve, serveResourceServer, type FakeAuthorization, type ResourceServerOptions } from "./oauth-test-support.ts";
import { createOAuthSession, type OAuthSession } from "./session.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function sandbox(): Record<string, string> {
  const { env, cleanup } = isolatedEnv({ ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: String(freePort()) });
  cleanups.push(cleanup);
  return env;
}

function session(env: Record<string, string>, url: string, settings: true | McpOAuthSettings, lines: string[]): OAuthSession {
  const created = createOAuthSession({ serverId: "docs", serverUrl: url, settings, env, log: (line) => lines.push(line), interactive: true });
  cleanups.push(created.close);
  return created;
}

/** A separate authorization server, and an MCP server whose metadata names `named(origin)`. */
function separate(authorization: FakeAuthorization, options: Partial<ResourceServerOptions> = {}, named = (origin: string) => origin) {
  const as = serve((request, origin) => authorization.handle(request, origin));
  const mcp = serveResourceServer({ authorization, authorizationServer: named(as.origin), ...options });
  cleanups.push(as.close, mcp.close);
  return { as, mcp };
}

/** A legacy server: no protected-resource metadata, its own origin serves the authorization endpoints. */
function legacy(authorization: FakeAuthorization) {
  const mcp = serveResourceServer({ authorization, metadata: false });
  cleanups.push(mcp.close);
  return mcp;
}

describe("strict discovery", () => {
  test("an authorization server that does not advertise S256 is refused before anything is registered or printed", async () => {
    const authorization = createFakeAuthorization({ s256: false });
    const { mcp } = separate(authorization);
    const lines: string[] = [];
    const oauth = session(sandbox(), mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines)).rejects.toThrow(/does not advertise PKCE S256 \(code_challenge_methods_supported\); refusing to authorize without it/);
    expect(authorization.registrations).toEqual([]);
    expect(lines).toEqual([]);
    expect(oauth.hasTokens()).toBe(false);
  });

  test("a server without protected-resource metadata is refused, and the SDK does not fall back to its origin on its own", async () => {
    const authorization = createFakeAuthorization();
    const mcp = legacy(authorization);
    const lines: string[] = [];
    const oauth = session(sandbox(), mcp.mcpUrl, true, lines);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines)).rejects.toThrow(
      `MCP server "docs" publishes no OAuth protected-resource metadata (RFC 9728); refusing to guess its authorization server. Set oauth.allowLegacyDiscovery only for a trusted older server that is its own authorization server`,
    );
    // Only the resource metadata was probed; the origin's authorization-server metadata was never asked for.
    expect(authorization.requests.map((request) => request.path)).toEqual(["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]);
    expect(lines).toEqual([]);
  });

  test("with allowLegacyDiscovery, the MCP origin is the authorization server and the login works", async () => {
    const authorization = createFakeAuthorization();
    const mcp = legacy(authorization);
    const lines: string[] = [];
    const oauth = session(sandbox(), mcp.mcpUrl, { allowLegacyDiscovery: true }, lines);
    const client = await connectWithLogin(oauth, mcp.mcpUrl, lines);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["whoami"]);
    await client.close();
    const authorize = new URL(printedUrl(lines)!);
    expect(authorize.origin).toBe(mcp.origin);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  });

  test("metadata that names no authorization server is refused unless legacy discovery is allowed", async () => {
    const authorization = createFakeAuthorization();
    const mcp = serveResourceServer({ authorization }); // metadata without authorization_servers; the origin also serves the AS
    cleanups.push(mcp.close);
    const lines: string[] = [];
    await expect(connectWithLogin(session(sandbox(), mcp.mcpUrl, true, lines), mcp.mcpUrl, lines)).rejects.toThrow(
      /MCP server "docs" names no authorization server in its protected-resource metadata; refusing to guess/,
    );
    const client = await connectWithLogin(session(sandbox(), mcp.mcpUrl, { allowLegacyDiscovery: true }, lines), mcp.mcpUrl, lines);
    await client.close();
    // Here the metadata exists, so the resource indicator is sent.
    expect(new URL(printedUrl(lines)!).searchParams.get("resource")).toBe(mcp.mcpUrl);
  });

  test("the resource_metadata URL of the 401 challenge is followed (metadata at a non-standard path)", async () => {
    const authorization = createFakeAuthorization();
    const { as, mcp } = separate(authorization, { metadataPath: "/meta/prm.json" });
    const lines: string[] = [];
    const client = await connectWithLogin(session(sandbox(), mcp.mcpUrl, { allowPrivateNetwork: true }, lines), mcp.mcpUrl, lines);
    await client.close();
    expect(mcp.requests.some((request) => request.path === "/meta/prm.json")).toBe(true);
    expect(new URL(printedUrl(lines)!).origin).toBe(as.origin);
  });

  test("authorization server metadata naming another issuer is refused", async () => {
    const authorization = createFakeAuthorization({ issuer: "https://impostor.example.com" });
    const { mcp } = separate(authorization);
    const lines: string[] = [];
    await expect(connectWithLogin(session(sandbox(), mcp.mcpUrl, { allowPrivateNetwork: true }, lines), mcp.mcpUrl, lines)).rejects.toThrow(
      /names a different issuer \(https:\/\/impostor\.example\.com\)/,
    );
  });

  test("metadata describing another resource is refused", async () => {
    const authorization = createFakeAuthorization();
    // Metadata at the root well-known path, found by the fallback for any path on the server.
    const { mcp } = separate(authorization, { metadataPath: "/.well-known/oauth-protected-resource" });
    const other = mcp.mcpUrl.replace(/\/mcp$/, "/other");
    const oauth = session(sandbox(), other, { allowPrivateNetwork: true }, []);
    await expect(oauth.provider.discoveryState!()).rejects.toThrow(`MCP server "docs": its protected-resource metadata is for ${mcp.mcpUrl}, not ${other}`);
    expect(authorization.requests).toEqual([]);
  });
});

describe("cross-origin rules", () => {
  test("a private authorization server on another origin is refused unless allowPrivateNetwork: plain http", async () => {
    const authorization = createFakeAuthorization();
    const { as, mcp } = separate(authorization);
    const lines: string[] = [];
    await expect(connectWithLogin(session(sandbox(), mcp.mcpUrl, true, lines), mcp.mcpUrl, lines)).rejects.toThrow(
      `MCP server "docs": refused OAuth request to ${as.origin}/.well-known/oauth-authorization-server (not https)`,
    );
    expect(authorization.requests).toEqual([]);
  });

  test("a private authorization server on another origin is refused unless allowPrivateNetwork: https to a loopback address", async () => {
    const authorization = createFakeAuthorization();
    const { mcp } = separate(authorization, {}, (origin) => origin.replace("http:", "https:"));
    const lines: string[] = [];
    await expect(connectWithLogin(session(sandbox(), mcp.mcpUrl, true, lines), mcp.mcpUrl, lines)).rejects.toThrow(/refused OAuth request to https:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-authorization-server \(127\.0\.0\.1 is loopback: not a public address\)/);
    expect(authorization.requests).toEqual([]);
  });

  test("headers configured for the MCP server are not sent to another origin", async () => {
    const authorization = createFakeAuthorization();
    const { mcp } = separate(authorization);
    const lines: string[] = [];
    const oauth = session(sandbox(), mcp.mcpUrl, { allowPrivateNetwork: true }, lines);
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const transport = new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), { authProvider: oauth.provider, fetch: oauth.fetch, requestInit: { headers: { "X-Api-Key": "server-only" } } });
    await expect(new Client({ name: "t", version: "1" }).connect(transport)).rejects.toThrow("Unauthorized");
    expect(authorization.requests.length).toBeGreaterThan(0);
    for (const request of authorization.requests) expect(request.headers.get("x-api-key")).toBeNull();
    expect(mcp.requests.find((request) => request.path === "/mcp")!.headers.get("x-api-key")).toBe("server-only");
  });
});
