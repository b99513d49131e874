import { expect, setDefaultTimeout, test } from "bun:test";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { lazyWorkspaceStore } from "../support/workspace-store.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { completion, describeRun, eventsOf, fixtureServer, lastToolMessage } from "../fixtures/mcp/support.ts";
import { loadConfig } from "../../src/config/load.ts";
import { createMcpHub } from "../../src/mcp/hub.ts";
import type { RuntimeEvent } from "../../src/protocol/events.ts";
import { createSessionService } from "../../src/session/service.ts";
import { coreToolSource } from "../../src/session/tool-sources.ts";

// MCP-07: a stdio server's tools carry execute risk whatever their annotations claim, and go
// through the normal permission flow; "always" for one MCP tool covers that tool only.
// (HTTP tools carrying network risk: mcp-http.test.ts.)

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(45_000);

const peek = { toolCalls: [{ name: "mcp__fx__peek", args: {}, id: "call_peek" }] };

test("MCP-07: a readOnlyHint tool is still execute risk: denied in read-only mode", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer() }, agents: { build: { mcpServers: ["fx"] } } }));
  fake.script([peek, { text: "could not" }]);
  const result = await runZero(["run", "--json", "--permission-mode", "read-only", "peek"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "tool.requested")).toMatchObject({ tool: "mcp__fx__peek", risk: "execute", target: "mcp:fx:peek" });
  expect(eventsOf(events, "permission.decided")).toEqual([expect.objectContaining({ callId: "call_peek", decision: "deny", source: "mode" })]);
  expect(eventsOf(events, "permission.requested")).toEqual([]);
  expect(completion(events, "call_peek").status).toBe("denied");
  expect(eventsOf(events, "tool.started")).toEqual([]);
  expect(lastToolMessage(fake, 1)).not.toContain("peeked");
});

test("MCP-07: in ask mode without a responder the readOnlyHint tool is asked about, then denied", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer() }, agents: { build: { mcpServers: ["fx"] } } }));
  fake.script([peek, { text: "could not" }]);
  const result = await runZero(["run", "--json", "--permission-mode", "ask", "peek"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const events = jsonLines(result.stdout);
  const requested = eventsOf(events, "permission.requested");
  expect(requested).toEqual([expect.objectContaining({ callId: "call_peek", tool: "mcp__fx__peek", risk: "execute", target: "mcp:fx:peek", permissionMode: "ask" })]);
  expect(eventsOf(events, "permission.decided")).toEqual([expect.objectContaining({ callId: "call_peek", decision: "deny", source: "no-responder" })]);
  expect(events.indexOf(requested[0]!)).toBeLessThan(events.findIndex((e) => e.type === "permission.decided"));
  expect(completion(events, "call_peek").status).toBe("denied");
  expect(lastToolMessage(fake, 1)).not.toContain("peeked");
});

test('"always" for one MCP tool approves that tool only: not another tool, not the same tool of another server', async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { fx: fixtureServer(), fy: fixtureServer() },
      agents: { build: { mcpServers: ["fx", "fy"] } },
    }),
  );
  const loaded = loadConfig({ workspace: sandbox.workspace, env: sandbox.env });
  // The real hub as the session's tool source, as the CLI wires it.
  const hub = createMcpHub({ config: loaded.config, env: sandbox.env, log: () => {}, interactive: false });
  const stores = lazyWorkspaceStore(sandbox.env, sandbox.workspace);
  const sessions = createSessionService({
    config: loaded.config,
    env: sandbox.env,
    workspace: sandbox.workspace,
    extraDirs: [],
    surface: "tui",
    overrides: {},
    interactive: true,
    toolSources: [coreToolSource(), hub.source],
    store: stores.access,
  });
  try {
    const session = sessions.open({ kind: "new" });
    const asked: string[] = [];
    session.subscribe((event) => {
      if (event.type !== "permission.requested") return;
      asked.push(event.target ?? "");
      queueMicrotask(() => session.answerApproval(event.callId, asked.length === 1 ? "always" : "deny"));
    });
    const call = (name: string, id: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ name, args, id }] });
    fake.script([
      call("mcp__fx__create_u2d_issue", "c1", { title: "one" }),
      { text: "first" },
      call("mcp__fx__create_u2d_issue", "c2", { title: "two" }),
      call("mcp__fx__peek", "c3"),
      call("mcp__fy__create_u2d_issue", "c4", { title: "three" }),
      { text: "second" },
    ]);
    expect((await session.send("file one").done).exitCode).toBe(0);
    const events: RuntimeEvent[] = [];
    expect((await session.send("file more", { listeners: [(event) => events.push(event)] }).done).exitCode).toBe(0);
    expect(asked).toEqual(["mcp:fx:create-issue", "mcp:fx:peek", "mcp:fy:create-issue"]);
    const decided = events.filter((e) => e.type === "permission.decided").map((e: any) => [e.callId, e.decision, e.source]);
    expect(decided).toEqual([
      ["c2", "allow", "session"],
      ["c3", "deny", "once"],
      ["c4", "deny", "once"],
    ]);
    const statuses = events.filter((e) => e.type === "tool.completed").map((e: any) => [e.callId, e.status]);
    expect(statuses).toEqual([
      ["c2", "completed"],
      ["c3", "denied"],
      ["c4", "denied"],
    ]);
  } finally {
    await sessions.shutdown();
    await hub.close();
    stores.close();
  }
});
