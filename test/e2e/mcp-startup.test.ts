import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { FIXTURE, completion, describeRun, eventsOf, everythingServer, fixtureServer, lastToolMessage, offeredTools, pidsMatching, uniqueTag } from "../fixtures/mcp/support.ts";

// Servers start independently (MCP-05): one that is missing, slow or partly broken costs the run
// that server's tools (or one tool) and a notice, never the run.

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(45_000);

const MISSING = "zero-no-such-mcp-server";
const GONE_NOTICE = `MCP server "gone" is unavailable (command "${MISSING}" was not found on PATH); its tools are not offered`;

function withMissingServer() {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { gone: { type: "stdio", command: MISSING }, everything: everythingServer() },
      agents: { build: { mcpServers: ["gone", "everything"] } },
    }),
  );
}

test("MCP-05: a missing command costs only its own tools; human mode says why on stderr", async () => {
  withMissingServer();
  fake.script([{ toolCalls: [{ name: "mcp__everything__get_u2d_sum", args: { a: 20, b: 22 }, id: "call_sum" }] }, { text: "forty-two" }]);
  const result = await runZero(["run", "-y", "add"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout).toBe("forty-two\n");
  expect(result.stderr).toContain(`zero: ${GONE_NOTICE}\n`);
  const offered = offeredTools(fake, 0);
  expect(offered).toContain("mcp__everything__get_u2d_sum");
  expect(offered.filter((name) => name.startsWith("mcp__gone__"))).toEqual([]);
  expect(lastToolMessage(fake, 1)).toBe("The sum of 20 and 22 is 42.");
});

test("MCP-05: --json reports the unavailable server as a notice event right after run.started", async () => {
  withMissingServer();
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stderr).toBe("");
  const events = jsonLines(result.stdout);
  expect(events[0]!.type).toBe("run.started");
  expect(events[1]).toMatchObject({ type: "notice", source: "mcp", message: GONE_NOTICE });
  expect(eventsOf(events, "notice")).toHaveLength(1);
});

test("MCP-05: a server slower than startupTimeoutMs is left out with a notice, the run does not wait for it, and it is stopped", async () => {
  // Found by its tag (pgrep), not a marker it writes: on a loaded machine node may not get as far as
  // writing one within the 1.5 s bound.
  const tag = uniqueTag("zero-mcp-slow");
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { slow: fixtureServer({ FIXTURE_SLOW_START_MS: "30000" }, { startupTimeoutMs: 1500, args: [FIXTURE, tag] }), everything: everythingServer() },
      agents: { build: { mcpServers: ["slow", "everything"] } },
    }),
  );
  fake.script([{ text: "ok" }]);
  const run = spawnZero(["run", "--json", "x"], { sandbox, timeoutMs: 25_000 });
  await waitUntil("the slow server to be started", () => pidsMatching(tag).length > 0, 20_000);
  const result = await run.result;
  expect(result.code, describeRun(result)).toBe(0);
  // Waiting for the server would take 30 s; the bound is 1.5 s (plus start-up on a loaded machine).
  expect(result.ms).toBeLessThan(15_000);
  const offered = offeredTools(fake, 0);
  expect(offered).toContain("mcp__everything__echo");
  expect(offered.filter((name) => name.startsWith("mcp__slow__"))).toEqual([]);
  // The server zero gave up on does not outlive the run.
  await waitUntil("the slow server to be gone", () => pidsMatching(tag).length === 0, 5_000);
  // The notice says what happened: zero stopped waiting (the server was still running, it closed nothing).
  const notice = eventsOf(jsonLines(result.stdout), "notice").map((e) => e.message);
  expect(notice).toEqual([`MCP server "slow" is unavailable (MCP server "slow" did not answer initialize within 1500 ms); its tools are not offered`]);
});

test("a tool with an invalid input schema is left out with a notice; the server's other tools work", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer({ FIXTURE_BAD_SCHEMA: "1" }) }, agents: { build: { mcpServers: ["fx"] } } }),
  );
  fake.script([{ toolCalls: [{ name: "mcp__fx__create_u2d_issue", args: { title: "still works" }, id: "call_issue" }] }, { text: "done" }]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const offered = offeredTools(fake, 0);
  expect(offered).not.toContain("mcp__fx__bad_u2d_schema");
  expect(offered).toContain("mcp__fx__create_u2d_issue");
  const events = jsonLines(result.stdout);
  const notices = eventsOf(events, "notice");
  expect(notices).toHaveLength(1);
  expect(notices[0]).toMatchObject({ source: "mcp" });
  expect(notices[0]!.message).toStartWith('tool "bad-schema" of MCP server "fx" is left out: the input schema of mcp__fx__bad_u2d_schema is invalid');
  expect(completion(events, "call_issue").status).toBe("completed");
  expect(lastToolMessage(fake, 1)).toBe("created issue: still works");
});

test("a server that exits at start: the notice gives its exit code and stderr tail, with secrets redacted", async () => {
  const token = `ghp_${"Kd8Lm2Np4Q".repeat(4).slice(0, 36)}`;
  const crash = { type: "stdio", command: "node", args: ["-e", `console.error("loading config: token=${token}"); process.exit(2)`] };
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { crash }, agents: { build: { mcpServers: ["crash"] } } }));
  fake.script([{ text: "ok" }, { text: "ok" }]);
  const json = await runZero(["run", "--json", "x"], { sandbox });
  expect(json.code, describeRun(json)).toBe(0);
  const [notice] = eventsOf(jsonLines(json.stdout), "notice").map((e) => e.message as string);
  expect(notice).toStartWith('MCP server "crash" is unavailable (');
  expect(notice).toContain("the server exited with code 2; its stderr ended with: loading config: token=");
  const human = await runZero(["run", "x"], { sandbox });
  expect(human.code, describeRun(human)).toBe(0);
  expect(human.stderr).toContain('zero: MCP server "crash" is unavailable (');
  // The server's stderr is the server's text: it is shown and stored (the event log) only redacted.
  expect(notice).toContain("token=[REDACTED:github-token]");
  expect(json.stdout).not.toContain(token);
  expect(human.stderr).not.toContain(token);
});

test("servers connect side by side: two servers that each answer only once the other has started both come up", async () => {
  // Each server waits for the other's marker before it answers initialize. Started one after the
  // other, the first would wait for a server that is not started until it gives up (a notice, its
  // tools missing); started together, both answer at once.
  const markerA = join(sandbox.root, "a-started.txt");
  const markerB = join(sandbox.root, "b-started.txt");
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: {
        a: fixtureServer({ FIXTURE_MARKER: markerA, FIXTURE_AWAIT_FILE: markerB }, { startupTimeoutMs: 8000 }),
        b: fixtureServer({ FIXTURE_MARKER: markerB, FIXTURE_AWAIT_FILE: markerA }, { startupTimeoutMs: 8000 }),
      },
      agents: { build: { mcpServers: ["a", "b"] } },
    }),
  );
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox, timeoutMs: 30_000 });
  expect(result.code, describeRun(result)).toBe(0);
  expect(eventsOf(jsonLines(result.stdout), "notice")).toEqual([]);
  const offered = offeredTools(fake, 0);
  expect(offered).toContain("mcp__a__create_u2d_issue");
  expect(offered).toContain("mcp__b__create_u2d_issue");
});
