import { afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { browse, createFakeAuthorization, freePort, serve, serveResourceServer } from "../../src/mcp/oauth/oauth-test-support.ts";

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** An authorization server and a protected MCP server on two 127.0.0.1 ports (cross-origin and private: allowPrivateNetwork). */
function world() {
  const authorization = createFakeAuthorization();
  const as = serve((request, origin) => authorization.handle(request, origin));
  const mcp = serveResourceServer({ authorization, authorizationServer: as.origin });
  closers.push(as.close, mcp.close);
  const port = freePort();
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { issues: { type: "http", url: mcp.mcpUrl, oauth: { allowPrivateNetwork: true, scopes: ["tools.read"] } } },
      agents: { build: { mcpServers: ["issues"] } },
    }),
  );
  return { authorization, port, env: { ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: String(port) } };
}

/** The authorization URL zero printed, once its whole line has arrived. */
const urlIn = (stderr: string): string | undefined => /open this URL in a browser:\n(https?:\/\/\S+)\n/.exec(stderr)?.[1];

test("zero mcp login signs in through the loopback callback; list, a run and logout use the stored tokens", async () => {
  const { authorization, port, env } = world();
  const store = join(sandbox.configDir, "mcp-oauth.json");
  const configFile = join(sandbox.configDir, "config.jsonc");
  const configBefore = readFileSync(configFile, "utf8");

  const before = await runZero(["mcp", "list", "--json"], { sandbox, env });
  expect(before.code).toBe(0);
  expect(JSON.parse(before.stdout).servers[0]).toMatchObject({ id: "issues", transport: "http", status: "unavailable", oauth: true, signedIn: false, agents: ["build"] });
  expect(JSON.parse(before.stdout).servers[0].problem).toContain("zero mcp login issues");

  const login = spawnZero(["mcp", "login", "issues"], { sandbox, env, timeoutMs: 30_000 });
  await waitUntil("the authorization URL on stderr", () => urlIn(login.stderrSoFar()) !== undefined);
  const url = new URL(urlIn(login.stderrSoFar())!);
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(url.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(url.searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${port}/oauth/callback`);
  expect(url.searchParams.get("scope")).toBe("tools.read");
  expect(url.searchParams.get("resource")).toEndWith("/mcp");
  // A callback with another state is refused; the login keeps waiting for the right one.
  const forged = await fetch(`http://127.0.0.1:${port}/oauth/callback?code=stolen&state=wrong`);
  expect(forged.status).toBe(400);
  await browse(url.href);
  const done = await login.result;
  expect(done.code, done.stderr).toBe(0);
  expect(done.stdout).toBe("Signed in to issues (1 tools).\n");

  expect(statSync(store).mode & 0o777).toBe(0o600);
  expect(statSync(sandbox.configDir).mode & 0o777).toBe(0o700);
  const stored = readFileSync(store, "utf8");
  expect(stored).toContain("access_token");
  // The configuration never holds a token: signing in leaves it as it was.
  expect(readFileSync(configFile, "utf8")).toBe(configBefore);

  const listed = await runZero(["mcp", "list", "--json"], { sandbox, env });
  expect(JSON.parse(listed.stdout).servers[0]).toMatchObject({ status: "connected", signedIn: true, tools: ["whoami"] });

  // A run uses the stored token: no login, the tool works.
  fake.script([{ toolCalls: [{ name: "mcp__issues__whoami", args: {}, id: "call_who" }] }, { text: "ok" }]);
  const run = await runZero(["run", "-y", "--json", "who am i"], { sandbox, env });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).not.toContain("needs authorization");
  const completed = jsonLines(run.stdout).find((e) => e.type === "tool.completed")!;
  expect(completed).toMatchObject({ status: "completed", output: "an authorized client" });
  expect(authorization.tokenRequests.filter((r) => r.form.get("grant_type") === "authorization_code")).toHaveLength(1);

  const logout = await runZero(["mcp", "logout", "issues"], { sandbox, env });
  expect(logout.stdout).toBe("Signed out of issues: its tokens and registration were removed.\n");
  expect(existsSync(store) ? readFileSync(store, "utf8") : "").not.toContain("access_token");
  const again = await runZero(["mcp", "logout", "issues", "--json"], { sandbox, env });
  expect(JSON.parse(again.stdout)).toEqual({ server: "issues", removed: false });
}, 60_000);

test("a login nobody completes times out with exit 3; bad arguments are usage errors", async () => {
  const { env } = world();
  const login = await runZero(["mcp", "login", "issues"], { sandbox, env: { ...env, ZERO_CLI_MCP_OAUTH_TIMEOUT_MS: "800" }, timeoutMs: 20_000 });
  expect(login.code).toBe(3);
  expect(login.stderr).toContain("could not sign in to 'issues'");
  expect(login.stderr).toMatch(/timed out/);

  const unknown = await runZero(["mcp", "login", "nope"], { sandbox, env });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toBe("zero mcp: unknown MCP server 'nope' (configured: issues)\n");
  const action = await runZero(["mcp", "frobnicate"], { sandbox, env });
  expect(action.code).toBe(2);
  expect(action.stderr).toContain("unknown action 'frobnicate' (allowed: list, login, logout)");
}, 60_000);

test("a headless run that needs a login prints the URL on stderr, waits for the callback, then uses the tool", async () => {
  const { env } = world();
  fake.script([{ toolCalls: [{ name: "mcp__issues__whoami", args: {}, id: "call_who" }] }, { text: "ok" }]);
  const run = spawnZero(["run", "-y", "--json", "who am i"], { sandbox, env, timeoutMs: 30_000 });
  await waitUntil("the authorization URL on stderr", () => urlIn(run.stderrSoFar()) !== undefined);
  // No model request before the server is connected: the run waits for its agent's servers.
  expect(fake.requests).toHaveLength(0);
  await browse(urlIn(run.stderrSoFar())!);
  const done = await run.result;
  expect(done.code, done.stderr).toBe(0);
  expect(jsonLines(done.stdout).find((e) => e.type === "tool.completed")).toMatchObject({ status: "completed", output: "an authorized client" });
}, 60_000);
