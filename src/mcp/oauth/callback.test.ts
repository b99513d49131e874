import { afterEach, describe, expect, test } from "bun:test";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listenForCallback, type CallbackListener } from "./callback.ts";
import { connectWithLogin, createFakeAuthorization, freePort, isolatedEnv, printedUrl, serve, serveResourceServer } from "./oauth-test-support.ts";
import { createOAuthSession } from "./session.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function listen(options: { state?: string; timeoutMs?: number } = {}): { listener: CallbackListener; port: number; url: (query: string) => string } {
  const port = freePort();
  const listener = listenForCallback({ serverId: "docs", port, state: options.state ?? "the-state", timeoutMs: options.timeoutMs ?? 10_000 });
  cleanups.push(() => listener.close());
  return { listener, port, url: (query) => `http://127.0.0.1:${port}/oauth/callback?${query}` };
}

/** Settles within `ms`, or says it is still pending. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | "pending"> {
  const timer = Bun.sleep(ms).then(() => "pending" as const);
  return Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), timer]);
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return false;
  } catch {
    return true;
  }
}

describe("the loopback callback", () => {
  test("a callback with a wrong or missing state is answered 400 and ignored; the right one then completes the wait", async () => {
    const { listener, url } = listen();
    const wrong = await fetch(url("code=forged&state=another-state"));
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get("content-type")).toStartWith("text/plain");
    expect((await fetch(url("code=forged"))).status).toBe(400);
    // An error callback with a wrong state cannot cancel the login either.
    expect((await fetch(url("error=access_denied&state=another-state"))).status).toBe(400);
    expect(await settledWithin(listener.code, 50)).toBe("pending");
    const right = await fetch(url("code=the-code&state=the-state"));
    expect(right.status).toBe(200);
    expect(await right.text()).toContain("You can close this tab.");
    expect(await listener.code).toBe("the-code");
  });

  test("after the code arrived the listener is closed", async () => {
    const { listener, url } = listen();
    await fetch(url("code=c&state=the-state"));
    expect(await listener.code).toBe("c");
    await Bun.sleep(20);
    expect(await refused(url("code=c&state=the-state"))).toBe(true);
  });

  test("other paths are 404 and do not settle anything", async () => {
    const { listener, port } = listen();
    expect((await fetch(`http://127.0.0.1:${port}/elsewhere?code=c&state=the-state`)).status).toBe(404);
    expect(await settledWithin(listener.code, 30)).toBe("pending");
  });

  test("an error= callback with the right state rejects with the error, sanitized", async () => {
    const { listener, url } = listen();
    const answer = await fetch(url(`state=the-state&error=access_denied&error_description=${encodeURIComponent("user said no\u001b[31m\nnext line")}`));
    expect(answer.status).toBe(200);
    const outcome = await settledWithin(listener.code, 1_000);
    expect(outcome).toHaveProperty("error");
    const message = ((outcome as { error: Error }).error).message;
    expect(message).toBe(`authorization for MCP server "docs" failed: access_denied: user said no [31m next line`);
  });

  test("no callback: the wait rejects after the bound and the listener closes", async () => {
    const { listener, url } = listen({ timeoutMs: 200 });
    await expect(listener.code).rejects.toThrow(`authorization for MCP server "docs" timed out after 0.2 s`);
    await Bun.sleep(20);
    expect(await refused(url("code=late&state=the-state"))).toBe(true);
  });

  test("the listener is bound to 127.0.0.1 only", async () => {
    const { listener, port } = listen();
    // On Linux all of 127/8 reaches the loopback interface: a wildcard or 127/8 bind would answer here.
    expect(await refused(`http://127.0.0.2:${port}/oauth/callback?code=c&state=the-state`)).toBe(true);
    expect(await refused(`http://[::1]:${port}/oauth/callback?code=c&state=the-state`)).toBe(true);
    expect(await settledWithin(listener.code, 20)).toBe("pending");
    expect(await refused(`http://127.0.0.1:${port}/oauth/callback?state=wrong`)).toBe(false);
  });

  test("a port already in use is a clear error naming the overrides", () => {
    const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    cleanups.push(() => void busy.stop(true));
    expect(() => listenForCallback({ serverId: "docs", port: busy.port!, state: "s", timeoutMs: 1_000 })).toThrow(
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${busy.port} for the OAuth callback .*set ZERO_CLI_MCP_OAUTH_CALLBACK_PORT or oauth\\.callbackPort to a free port`),
    );
  });
});

describe("waiting for the browser", () => {
  function world(extraEnv: Record<string, string> = {}) {
    const authorization = createFakeAuthorization();
    const as = serve((request, origin) => authorization.handle(request, origin));
    const mcp = serveResourceServer({ authorization, authorizationServer: as.origin });
    const port = freePort();
    const sandbox = isolatedEnv({ ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: String(port), ...extraEnv });
    cleanups.push(as.close, mcp.close, sandbox.cleanup);
    return { mcp, port, env: sandbox.env };
  }

  test("not interactive: no URL printed, nothing listening, and the wait says to run zero mcp login", async () => {
    const { mcp, port, env } = world();
    const lines: string[] = [];
    const oauth = createOAuthSession({ serverId: "docs", serverUrl: mcp.mcpUrl, settings: { allowPrivateNetwork: true }, env, log: (line) => lines.push(line), interactive: false });
    const transport = new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), { authProvider: oauth.provider, fetch: oauth.fetch });
    await expect(new Client({ name: "t", version: "1" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(lines).toEqual([]);
    await expect(oauth.waitForAuthorizationCode()).rejects.toThrow(`MCP server "docs" needs authorization: run 'zero mcp login docs'`);
    expect(await refused(`http://127.0.0.1:${port}/oauth/callback`)).toBe(true);
  });

  test("waiting without an authorization started rejects at once", async () => {
    const { mcp, env } = world();
    const oauth = createOAuthSession({ serverId: "docs", serverUrl: mcp.mcpUrl, settings: true, env, log: () => {}, interactive: true });
    await expect(oauth.waitForAuthorizationCode()).rejects.toThrow(/no authorization was started/);
  });

  test("ZERO_CLI_MCP_OAUTH_TIMEOUT_MS bounds the wait; the listener closes and the verifier is forgotten", async () => {
    const { mcp, port, env } = world({ ZERO_CLI_MCP_OAUTH_TIMEOUT_MS: "300" });
    const lines: string[] = [];
    const oauth = createOAuthSession({ serverId: "docs", serverUrl: mcp.mcpUrl, settings: { allowPrivateNetwork: true }, env, log: (line) => lines.push(line), interactive: true });
    cleanups.push(oauth.close);
    await expect(connectWithLogin(oauth, mcp.mcpUrl, lines, async () => {})).rejects.toThrow(`authorization for MCP server "docs" timed out after 0.3 s`);
    expect(printedUrl(lines)).toBeDefined();
    expect(await refused(`http://127.0.0.1:${port}/oauth/callback`)).toBe(true);
    expect(() => oauth.provider.codeVerifier()).toThrow(/no authorization is in progress/);
  });

  test("an aborted wait rejects with the signal's reason and closes the listener", async () => {
    const { mcp, port, env } = world();
    const lines: string[] = [];
    const oauth = createOAuthSession({ serverId: "docs", serverUrl: mcp.mcpUrl, settings: { allowPrivateNetwork: true }, env, log: (line) => lines.push(line), interactive: true });
    cleanups.push(oauth.close);
    const controller = new AbortController();
    const connecting = connectWithLogin(oauth, mcp.mcpUrl, lines, async () => controller.abort(new Error("user pressed escape")), controller.signal);
    await expect(connecting).rejects.toThrow("user pressed escape");
    await Bun.sleep(20);
    expect(await refused(`http://127.0.0.1:${port}/oauth/callback`)).toBe(true);
  });
});
