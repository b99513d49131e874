import { describe, expect, test } from "bun:test";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpAuthError } from "./errors.ts";
import { createGuardedFetch, isLoopbackHost, type GuardedFetchOptions } from "./guarded-fetch.ts";

type Call = { url: string; init: RequestInit & { tls?: { serverName?: string }; proxy?: unknown } };

/** A base fetch that records what it was asked and answers `respond` (no network involved). */
function recorder(respond: () => Response = () => new Response("{}")): { calls: Call[]; fetch: FetchLike } {
  const calls: Call[] = [];
  return {
    calls,
    fetch: async (url, init) => {
      calls.push({ url: String(url), init: (init ?? {}) as Call["init"] });
      return respond();
    },
  };
}

const DNS: Record<string, string[]> = {
  "as.example.com": ["93.184.216.34"],
  "intranet.example.com": ["10.0.0.5"],
  "mixed.example.com": ["93.184.216.34", "192.168.1.9"],
};

function guarded(base: FetchLike, overrides: Partial<GuardedFetchOptions> = {}) {
  return createGuardedFetch({
    serverId: "issues",
    serverUrl: "https://mcp.example.com/mcp",
    allowPrivateNetwork: false,
    fetch: base,
    resolve: async (name) => DNS[name] ?? [],
    ...overrides,
  });
}

async function refusal(promise: Promise<unknown>): Promise<McpAuthError> {
  try {
    await promise;
  } catch (error) {
    // Not a TypeError: the SDK's discovery takes a TypeError for CORS and quietly tries elsewhere.
    expect(error).not.toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(McpAuthError);
    return error as McpAuthError;
  }
  throw new Error("expected a refusal");
}

describe("the guarded fetch", () => {
  test("same origin as the MCP server: passed on with its headers, never following redirects; a challenge's resource_metadata is reported", async () => {
    const base = recorder(() => new Response("no", { status: 401, headers: { "www-authenticate": `Bearer resource_metadata="https://mcp.example.com/prm"` } }));
    const challenges: string[] = [];
    const fetch = guarded(base.fetch, { onChallenge: (url) => challenges.push(url.href) });
    const response = await fetch("https://mcp.example.com/mcp", { method: "POST", headers: { "x-api-key": "k", authorization: "Bearer t" } });
    expect(response.status).toBe(401);
    expect(base.calls).toHaveLength(1);
    expect(base.calls[0]!.url).toBe("https://mcp.example.com/mcp");
    expect(base.calls[0]!.init.redirect).toBe("manual");
    expect(new Headers(base.calls[0]!.init.headers).get("x-api-key")).toBe("k");
    expect(challenges).toEqual(["https://mcp.example.com/prm"]);
  });

  test("another origin on a public https name: connects to the checked address, with Host and SNI for the name, no proxy, only OAuth headers", async () => {
    const base = recorder();
    const headers = { accept: "application/json", "content-type": "application/x-www-form-urlencoded", authorization: "Basic Y2lkOnNlY3JldA==", "x-api-key": "server-only" };
    await guarded(base.fetch)("https://as.example.com/token", { method: "POST", headers, body: "grant_type=refresh_token" });
    expect(base.calls).toHaveLength(1);
    const { url, init } = base.calls[0]!;
    expect(url).toBe("https://93.184.216.34/token");
    const sent = new Headers(init.headers);
    expect(sent.get("host")).toBe("as.example.com");
    expect(sent.get("authorization")).toBe("Basic Y2lkOnNlY3JldA==");
    expect(sent.get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(sent.get("x-api-key")).toBeNull();
    expect(init.tls?.serverName).toBe("as.example.com");
    expect(init.proxy).toBe(false);
    expect(init.redirect).toBe("manual");
    expect(init.body).toBe("grant_type=refresh_token");
  });

  test("a bearer token is never sent to another origin", async () => {
    const base = recorder();
    await guarded(base.fetch)("https://as.example.com/.well-known/oauth-authorization-server", { headers: { authorization: "Bearer secret-token" } });
    expect(new Headers(base.calls[0]!.init.headers).get("authorization")).toBeNull();
  });

  test("another origin that resolves to a private address, even partly, is refused before connecting", async () => {
    const base = recorder();
    expect((await refusal(guarded(base.fetch)("https://intranet.example.com/token"))).message).toBe(
      `MCP server "issues": refused OAuth request to https://intranet.example.com/token (intranet.example.com resolves to 10.0.0.5 is private: not a public address); ` +
        "a host other than the MCP server's must be publicly routable https; set oauth.allowPrivateNetwork only for a trusted private authorization server",
    );
    expect((await refusal(guarded(base.fetch)("https://mixed.example.com/token"))).message).toContain("192.168.1.9");
    expect((await refusal(guarded(base.fetch)("https://localhost:8443/token"))).message).toContain("localhost is a local name");
    expect(base.calls).toEqual([]);
  });

  test("plain http to another origin is refused even on a public address; credentials in the URL too", async () => {
    const base = recorder();
    expect((await refusal(guarded(base.fetch)("http://as.example.com/token"))).message).toContain("(not https)");
    expect((await refusal(guarded(base.fetch)("https://user:pw@as.example.com/token"))).message).toContain("URLs with credentials are refused");
    // The same host over http is another origin than the https MCP server.
    expect((await refusal(guarded(base.fetch)("http://mcp.example.com/.well-known/oauth-protected-resource"))).message).toContain("(not https)");
    expect(base.calls).toEqual([]);
  });

  test("allowPrivateNetwork: private https and loopback http pass unpinned; plain http elsewhere is still refused", async () => {
    const base = recorder();
    const fetch = guarded(base.fetch, { allowPrivateNetwork: true });
    await fetch("https://intranet.example.com/token");
    await fetch("http://127.0.0.1:9000/token");
    expect(base.calls.map((call) => call.url)).toEqual(["https://intranet.example.com/token", "http://127.0.0.1:9000/token"]);
    expect((await refusal(fetch("http://10.0.0.5/token"))).message).toContain("plain http is only allowed to a loopback host");
  });

  test("a redirect is returned, not followed", async () => {
    const base = recorder(() => new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest" } }));
    const response = await guarded(base.fetch)("https://as.example.com/.well-known/oauth-authorization-server");
    expect(response.status).toBe(302);
    expect(base.calls).toHaveLength(1);
  });

  test("loopback hosts", () => {
    for (const host of ["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "app.localhost"]) expect({ host, loopback: isLoopbackHost(host) }).toEqual({ host, loopback: true });
    for (const host of ["10.0.0.1", "example.com", "[::2]", "128.0.0.1"]) expect({ host, loopback: isLoopbackHost(host) }).toEqual({ host, loopback: false });
  });
});
