import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, runZero, type Sandbox } from "../support/cli.ts";
import { EVERYTHING, describeRun, everythingServer, fixtureServer } from "../fixtures/mcp/support.ts";

// `zero mcp list` for scripts and CI: every configured server with its transport, status, tool
// count (names in --json), the agents that may use it, and why it is unavailable.
// (OAuth servers' sign-in state: mcp-oauth-cli.test.ts.)

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(45_000);

const MISSING = "zero-no-such-mcp-server";

test("zero mcp list shows each server's status and tool count, human and --json; a disabled server is never started", async () => {
  const marker = join(sandbox.root, "disabled-started.txt");
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: {
        everything: everythingServer(),
        gone: { type: "stdio", command: MISSING },
        off: fixtureServer({ FIXTURE_MARKER: marker }, { enabled: false }),
        spare: fixtureServer(),
      },
      agents: { build: { mcpServers: ["everything", "gone"] } },
    }),
  );
  const json = await runZero(["mcp", "list", "--json"], { sandbox });
  expect(json.code, describeRun(json)).toBe(0);
  const rows = new Map((JSON.parse(json.stdout).servers as Array<Record<string, any>>).map((row) => [row.id, row]));
  expect([...rows.keys()]).toEqual(["everything", "gone", "off", "spare"]);
  const everything = rows.get("everything")!;
  expect(everything).toMatchObject({ transport: "stdio", status: "connected", enabled: true, agents: ["build"], target: `node ${EVERYTHING} stdio` });
  expect(everything.tools).toContain("get-sum");
  expect(everything.tools).toContain("get-tiny-image");
  // A task-only tool is listed as left out, with the reason, not counted.
  expect(everything.tools).not.toContain("simulate-research-query");
  expect(everything.leftOut).toEqual([{ name: "simulate-research-query", reason: "requires task-based execution, which zero does not implement" }]);
  expect(rows.get("gone")).toMatchObject({ status: "unavailable", tools: [], problem: `command "${MISSING}" was not found on PATH` });
  expect(rows.get("off")).toMatchObject({ status: "disabled", enabled: false, tools: [] });
  // Listed and tried although no agent may use it yet.
  expect(rows.get("spare")).toMatchObject({ status: "connected", agents: [] });
  expect(rows.get("spare")!.tools).toContain("create-issue");

  const human = await runZero(["mcp", "list"], { sandbox });
  expect(human.code, describeRun(human)).toBe(0);
  const lines = human.stdout.split("\n");
  expect(lines).toContain(`everything  stdio  connected, ${everything.tools.length} tools`);
  expect(lines).toContain("  left out: simulate-research-query (requires task-based execution, which zero does not implement)");
  expect(lines).toContain("gone  stdio  unavailable");
  expect(lines).toContain(`  problem: command "${MISSING}" was not found on PATH`);
  expect(lines).toContain("off  stdio  disabled");
  expect(lines).toContain(`spare  stdio  connected, ${rows.get("spare")!.tools.length} tools`);
  expect(lines).toContain("  agents: none (list it in an agent's mcpServers)");
  expect(existsSync(marker)).toBe(false);
  // Listing never asks the model anything.
  expect(fake.requests).toHaveLength(0);
});
