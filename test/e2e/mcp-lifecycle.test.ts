import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { isRunning } from "../support/delegation.ts";
import { completion, describeRun, everythingServer, fixtureServer, pidsMatching, toolMessages, uniqueTag } from "../fixtures/mcp/support.ts";

// A stdio server's life within a run: Ctrl-C ends it with the run, a server that dies fails the
// call it was in and is started again for the next one, and a server that floods or litters
// stdout cannot take zero down with it.

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(45_000);

// Whatever a failed test left running is killed (each test's processes carry its own tag or pid).
let strays: { tags: string[]; pids: number[] } = { tags: [], pids: [] };
afterEach(() => {
  const pids = [...strays.pids, ...strays.tags.flatMap(pidsMatching)];
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  strays = { tags: [], pids: [] };
});

function startedPids(marker: string): number[] {
  return [...readFileSync(marker, "utf8").matchAll(/^started (\d+)$/gm)].map((match) => Number(match[1]));
}

function fixtureConfig(env: Record<string, string>) {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer(env) }, agents: { build: { mcpServers: ["fx"] } } }));
}

test("Ctrl-C during a long MCP call: exit 130 within seconds, and the server process is gone", async () => {
  const tag = uniqueTag("zero-mcp-ctrlc");
  strays.tags.push(tag);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { everything: everythingServer({ tag }) }, agents: { build: { mcpServers: ["everything"] } } }));
  fake.script([{ toolCalls: [{ name: "mcp__everything__trigger_u2d_long_u2d_running_u2d_operation", args: { duration: 30, steps: 30 }, id: "call_long" }] }, { text: "never" }]);
  const run = spawnZero(["run", "-y", "--json", "wait"], { sandbox, timeoutMs: 40_000 });
  // The server reports progress while the call runs: wait for the first report.
  await waitUntil("the first progress report", () => run.stdoutSoFar().includes('"type":"tool.progress"'), 20_000);
  expect(pidsMatching(tag).length).toBeGreaterThan(0);
  const progress = jsonLines(run.stdoutSoFar().slice(0, run.stdoutSoFar().lastIndexOf("\n"))).find((e) => e.type === "tool.progress")!;
  expect(progress).toMatchObject({ callId: "call_long", tool: "mcp__everything__trigger_u2d_long_u2d_running_u2d_operation" });
  expect(progress.message).toMatch(/\b1\/30$/);
  const interruptedAt = performance.now();
  run.proc.kill("SIGINT");
  const result = await run.result;
  expect(result.code, describeRun(result)).toBe(130);
  expect(performance.now() - interruptedAt).toBeLessThan(10_000); // the call had ~29 s to go
  await waitUntil("the server process to be gone", () => pidsMatching(tag).length === 0, 5_000);
  expect(fake.requests).toHaveLength(1);
});

test("a server that dies mid-call fails that call naming the server; the next call starts it again and works", async () => {
  const marker = join(sandbox.root, "starts.txt");
  fixtureConfig({ FIXTURE_MARKER: marker });
  fake.script([
    { toolCalls: [{ name: "mcp__fx__die", args: {}, id: "call_die" }] },
    { toolCalls: [{ name: "mcp__fx__create_u2d_issue", args: { title: "after the crash" }, id: "call_after" }] },
    { text: "recovered" },
  ]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  const starts = startedPids(marker);
  strays.pids.push(...starts);
  expect(result.code, describeRun(result)).toBe(0);
  const events = jsonLines(result.stdout);
  const died = completion(events, "call_die");
  expect(died.status).toBe("failed");
  expect(died.output).toContain('MCP server "fx"');
  expect(died.output).toContain("exited with code 3");
  expect(died.output).toContain("fixture: dying on purpose"); // the tail of its stderr explains it
  expect(completion(events, "call_after").status).toBe("completed");
  expect(toolMessages(fake, 2)).toEqual([died.output, "created issue: after the crash"]);
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "completed", text: "recovered" });
  // Two processes: the one that died, and the one the second call started.
  expect(starts).toHaveLength(2);
  expect(isRunning(starts[0]!)).toBe(false);
});

test("a line over 16 MiB fails the call cleanly (the server is stopped), and the run goes on", async () => {
  const marker = join(sandbox.root, "starts.txt");
  fixtureConfig({ FIXTURE_MARKER: marker });
  fake.script([
    { toolCalls: [{ name: "mcp__fx__flood", args: {}, id: "call_flood" }] },
    { toolCalls: [{ name: "mcp__fx__create_u2d_issue", args: { title: "after the flood" }, id: "call_after" }] },
    { text: "survived" },
  ]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox, timeoutMs: 40_000 });
  const starts = startedPids(marker);
  strays.pids.push(...starts);
  expect(result.code, describeRun(result)).toBe(0);
  const events = jsonLines(result.stdout);
  const flood = completion(events, "call_flood");
  expect(flood.status).toBe("failed");
  expect(flood.output).toContain('MCP server "fx"');
  expect(flood.output).toContain(`the server sent a message over ${16 * 1024 * 1024} bytes; the connection was closed`);
  expect(flood.output.length).toBeLessThan(5_000);
  expect(completion(events, "call_after").status).toBe("completed");
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "completed", text: "survived" });
  expect(starts).toHaveLength(2);
  await waitUntil("the flooding server to be stopped", () => !isRunning(starts[0]!), 5_000);
});

test("a line on stdout that is not JSON-RPC does not break the connection", async () => {
  const marker = join(sandbox.root, "starts.txt");
  fixtureConfig({ FIXTURE_MARKER: marker });
  fake.script([
    { toolCalls: [{ name: "mcp__fx__noisy", args: {}, id: "call_noisy" }] },
    { toolCalls: [{ name: "mcp__fx__create_u2d_issue", args: { title: "same process" }, id: "call_after" }] },
    { text: "fine" },
  ]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  const starts = startedPids(marker);
  strays.pids.push(...starts);
  expect(result.code, describeRun(result)).toBe(0);
  const events = jsonLines(result.stdout);
  expect(completion(events, "call_noisy")).toMatchObject({ status: "completed", output: "still here" });
  expect(completion(events, "call_after")).toMatchObject({ status: "completed", output: "created issue: same process" });
  expect(starts).toHaveLength(1);
});

test("what a stdio server started goes with it: its process group is ended when the run ends", async () => {
  const tag = uniqueTag("zero-mcp-grandchild");
  strays.tags.push(tag);
  // A server that leaves a helper running in the background, then becomes the fixture.
  const script = join(sandbox.root, "srv.sh");
  await Bun.write(script, `#!/bin/sh\nnode -e "setTimeout(() => {}, 600000)" ${tag} &\nexec node "${fixtureServer().args[0]}"\n`);
  Bun.spawnSync(["chmod", "+x", script]);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: { type: "stdio", command: script } }, agents: { build: { mcpServers: ["fx"] } } }));
  fake.script([{ toolCalls: [{ name: "mcp__fx__create_u2d_issue", args: { title: "x" }, id: "call_issue" }] }, { text: "done" }]);
  const run = spawnZero(["run", "-y", "--json", "x"], { sandbox });
  await waitUntil("the background helper to run", () => pidsMatching(tag).length > 0, 20_000);
  const result = await run.result;
  expect(result.code, describeRun(result)).toBe(0);
  expect(completion(jsonLines(result.stdout), "call_issue").status).toBe("completed");
  await waitUntil("the background helper to be gone", () => pidsMatching(tag).length === 0, 5_000);
});

test("a call past limits.toolTimeoutMs fails as timed out; the same server process answers the next call", async () => {
  const tag = uniqueTag("zero-mcp-timeout");
  strays.tags.push(tag);
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", { limits: { toolTimeoutMs: 1500 }, mcp: { everything: everythingServer({ tag }) }, agents: { build: { mcpServers: ["everything"] } } }),
  );
  // The server processes alive when the model is asked after the timed-out call, and after the next call.
  const seen: number[][] = [];
  fake.script([
    { toolCalls: [{ name: "mcp__everything__trigger_u2d_long_u2d_running_u2d_operation", args: { duration: 20, steps: 20 }, id: "call_long" }] },
    () => (seen.push(pidsMatching(tag)), { toolCalls: [{ name: "mcp__everything__get_u2d_sum", args: { a: 1, b: 1 }, id: "call_sum" }] }),
    () => (seen.push(pidsMatching(tag)), { text: "done" }),
  ]);
  const run = spawnZero(["run", "-y", "--json", "x"], { sandbox, timeoutMs: 30_000 });
  await waitUntil("the server to run", () => pidsMatching(tag).length > 0, 20_000);
  const pids = pidsMatching(tag);
  const result = await run.result;
  expect(result.code, describeRun(result)).toBe(0);
  const events = jsonLines(result.stdout);
  const long = completion(events, "call_long");
  expect(long.status).toBe("failed");
  expect(long.output).toContain("timed out");
  expect(result.ms).toBeLessThan(20_000); // the operation itself would take 20 s
  expect(completion(events, "call_sum")).toMatchObject({ status: "completed", output: "The sum of 1 and 1 is 2." });
  expect(pids).toHaveLength(1);
  expect(seen).toEqual([pids, pids]);
});
