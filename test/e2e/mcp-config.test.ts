import { expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { envelope, requestsOf, scriptBySender, spawn, task, toolNames } from "../support/delegation.ts";
import { EVERYTHING, describeRun, everythingServer, fixtureServer, lastToolMessage, offeredTools } from "../fixtures/mcp/support.ts";

// Which servers an agent gets (MCP-03), how a stdio server is started (MCP-01), that a project's
// servers wait for trust (MCP-04 / SEC-02), and the legacy SSE transport refused at config time.

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(45_000);

const CORE = ["read", "write", "run", "find", "search", "delegate"];
const mcpTools = (names: string[]) => names.filter((name) => name.startsWith("mcp__"));

test("MCP-03: an agent is offered only its mcpServers' tools; a delegated child gets its own profile's", async () => {
  // Both servers are in use (build lists a, explore lists b), so both are started: b is kept from build by the allowlist alone.
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { a: everythingServer(), b: fixtureServer() },
      agents: { build: { mcpServers: ["a"] }, explore: { mcpServers: ["b"] } },
    }),
  );
  scriptBySender(fake, {
    root: [spawn("d1", task("look", { agent: "explore" })), { text: "done" }],
    look: [envelope({ summary: "looked", findings: [] })],
  });
  const result = await runZero(["run", "--json", "look around"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const root = toolNames(requestsOf(fake, "root")[0]!);
  expect(root).toContain("mcp__a__get_u2d_sum");
  expect(mcpTools(root).length).toBeGreaterThan(5);
  expect(root.filter((name) => name.startsWith("mcp__b__"))).toEqual([]);
  const child = toolNames(requestsOf(fake, "look")[0]!);
  expect(child).toContain("mcp__b__create_u2d_issue");
  expect(child.filter((name) => name.startsWith("mcp__a__"))).toEqual([]);
});

test("MCP-03: an mcp:<server>:<tool> entry in tools narrows the server to that tool; core tools stay", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { a: everythingServer() },
      agents: { build: { mcpServers: ["a"], tools: [...CORE, "mcp:a:get-sum"] } },
    }),
  );
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const offered = offeredTools(fake, 0);
  expect(mcpTools(offered)).toEqual(["mcp__a__get_u2d_sum"]);
  for (const name of CORE) expect(offered).toContain(name);
});

test("MCP-03: an mcp: tools entry never grants a server the agent does not list", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { a: everythingServer() }, agents: { build: { tools: [...CORE, "mcp:a:*"] } } }));
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('"mcp:a:*" names MCP server "a", which is not in agents.build.mcpServers');
  expect(fake.requests).toHaveLength(0);
});

test("MCP-01: ./bin/srv and a relative cwd resolve from the declaring file; env is the run allowlist plus the configured env", async () => {
  // The server is a script beside the user config, which records where it runs, then becomes everything.
  const script = join(sandbox.configDir, "bin", "srv");
  mkdirSync(join(sandbox.configDir, "bin"), { recursive: true });
  mkdirSync(join(sandbox.configDir, "srvdata"), { recursive: true });
  writeFileSync(script, `#!/bin/sh\npwd > "$PROBE_FILE"\nexec node "${EVERYTHING}" stdio\n`);
  chmodSync(script, 0o755);
  const probe = join(sandbox.root, "srv-cwd.txt");
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { srv: { type: "stdio", command: "./bin/srv", cwd: "./srvdata", env: { LOG_LEVEL: "warn", PROBE_FILE: probe } } },
      agents: { build: { mcpServers: ["srv"] } },
    }),
  );
  fake.script([{ toolCalls: [{ name: "mcp__srv__get_u2d_env", args: {}, id: "call_env" }] }, { text: "seen" }]);
  const token = `ghp_${"A1b2C3d4E5".repeat(4).slice(0, 36)}`;
  // zero itself runs from an unrelated directory (the sandbox root) on the workspace via --cwd,
  // with a secret, one of its own variables and relative PATH entries in its environment.
  const result = await runZero(["run", "-y", "--cwd", sandbox.workspace, "show env"], {
    sandbox,
    cwd: sandbox.root,
    env: { GITHUB_TOKEN: token, ZERO_CLI_PROBE: "zero-own", PATH: `.:bin:${sandbox.env.PATH}` },
  });
  expect(result.code, describeRun(result)).toBe(0);
  expect(readFileSync(probe, "utf8").trim()).toBe(join(sandbox.configDir, "srvdata"));
  const env = JSON.parse(lastToolMessage(fake, 1)) as Record<string, string>;
  expect(env.LOG_LEVEL).toBe("warn");
  expect(env.HOME).toBe(sandbox.home);
  expect(env.GITHUB_TOKEN).toBeUndefined();
  expect(env.ZERO_CLI_PROBE).toBeUndefined();
  expect(JSON.stringify(env)).not.toContain(token.slice(4));
  // A bare name never resolves in the directory zero was started from.
  expect(env.PATH!.split(":")).not.toContain(".");
  expect(env.PATH!.split(":")).not.toContain("bin");
});

test("MCP-04 / SEC-02: an untrusted project's stdio server is never spawned; after zero trust it is", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const marker = join(sandbox.root, "spawned.txt");
  sandbox.writeProjectConfig({ mcp: { proj: fixtureServer({ FIXTURE_MARKER: marker }) }, agents: { build: { mcpServers: ["proj"] } } });
  fake.script([{ text: "untrusted run" }]);
  const untrusted = await runZero(["run", "x"], { sandbox });
  expect(untrusted.code, describeRun(untrusted)).toBe(0);
  expect(untrusted.stdout).toBe("untrusted run\n");
  expect(mcpTools(offeredTools(fake, 0))).toEqual([]);
  expect(existsSync(marker)).toBe(false);

  const trust = await runZero(["trust"], { sandbox });
  expect(trust.code, describeRun(trust)).toBe(0);
  expect(trust.stdout).toContain('MCP server "proj" runs node');
  expect(existsSync(marker)).toBe(false); // reviewing is not running

  fake.script([{ text: "trusted run" }]);
  const trusted = await runZero(["run", "x"], { sandbox });
  expect(trusted.code, describeRun(trusted)).toBe(0);
  expect(offeredTools(fake, 1)).toContain("mcp__proj__create_u2d_issue");
  expect(readFileSync(marker, "utf8")).toMatch(/^started \d+\n$/);
});

test('type "sse" is a config error naming the legacy transport (exit 2, nothing started)', async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { old: { type: "sse", url: "http://127.0.0.1:9/sse" } }, agents: { build: { mcpServers: ["old"] } } }));
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('"sse" (the legacy HTTP+SSE transport) is not supported: use "http" (Streamable HTTP)');
  expect(result.stderr).toContain("mcp.old.type");
  expect(jsonLines(result.stdout).filter((e) => e.type === "run.started")).toEqual([]);
  expect(fake.requests).toHaveLength(0);
});

test("a run starts only its own agent's servers: another agent's server starts when that agent runs", async () => {
  const marker = join(sandbox.root, "explore-server-started");
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { a: everythingServer(), b: fixtureServer({ FIXTURE_MARKER: marker }) },
      agents: { build: { mcpServers: ["a"] }, explore: { mcpServers: ["b"] } },
    }),
  );
  fake.script([{ text: "no delegation" }]);
  const plain = await runZero(["run", "--json", "x"], { sandbox });
  expect(plain.code, describeRun(plain)).toBe(0);
  expect(existsSync(marker)).toBe(false);

  scriptBySender(fake, {
    root: [spawn("d1", task("look", { agent: "explore" })), { text: "done" }],
    look: [envelope({ summary: "looked", findings: [] })],
  });
  const delegated = await runZero(["run", "--json", "look around"], { sandbox });
  expect(delegated.code, describeRun(delegated)).toBe(0);
  expect(readFileSync(marker, "utf8")).toMatch(/^started \d+\n$/);
});
