import { expect, test } from "bun:test";
import { resolve } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const EVERYTHING = resolve(import.meta.dir, "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");

function everythingConfig(extra: Record<string, unknown> = {}) {
  return fakeConfig(fake.url, "chat", {
    mcp: { everything: { type: "stdio", command: process.execPath.endsWith("bun") ? "node" : "node", args: [EVERYTHING, "stdio"] } },
    agents: { build: { mcpServers: ["everything"] } },
    ...extra,
  });
}

test("a stdio server's tool is offered under its escaped name and called with -y", async () => {
  sandbox.writeUserConfig(everythingConfig());
  fake.script([{ toolCalls: [{ name: "mcp__everything__get_u2d_sum", args: { a: 2, b: 3 }, id: "call_sum" }] }, { text: "five" }]);
  const result = await runZero(["run", "-y", "--json", "add"], { sandbox });
  expect(result.code).toBe(0);
  const offered = fake.requests[0]!.body.tools.map((t: any) => t.function.name);
  expect(offered).toContain("mcp__everything__get_u2d_sum");
  const answer = fake.requests[1]!.body.messages.find((m: any) => m.role === "tool");
  expect(answer.content).toBe("The sum of 2 and 3 is 5.");
  const completed = jsonLines(result.stdout).find((e) => e.type === "tool.completed")!;
  expect(completed.status).toBe("completed");
});
