import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, ZERO_BIN, type Sandbox } from "../support/cli.ts";

// `acpx` (npm) as an independent, real ACP client driving `zero acp` end to end.

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const ACPX = resolve(import.meta.dir, "../../node_modules/acpx/dist/cli.js");

async function acpx(args: string[]): Promise<{ code: number; lines: any[]; stderr: string }> {
  // acpx keeps its own state under ~/.acpx: the sandbox's HOME isolates it.
  const child = Bun.spawn([process.execPath, ACPX, "--agent", `${ZERO_BIN} acp`, ...args], { cwd: sandbox.workspace, env: sandbox.env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { code, lines: stdout.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line)), stderr };
}

test("acpx exec: initialize, session/new and a streamed prompt against zero acp", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: "hello from zero" }]);
  const result = await acpx(["--format", "json", "exec", "say hi"]);
  expect(result.code, result.stderr).toBe(0);
  const fromAgent = result.lines.filter((line) => line.result !== undefined || line.method === "session/update");
  expect(fromAgent[0].result.agentInfo.name).toBe("zero-cli");
  const text = result.lines.filter((line) => line.params?.update?.sessionUpdate === "agent_message_chunk").map((line) => line.params.update.content.text).join("");
  expect(text).toBe("hello from zero");
  expect(result.lines.find((line) => line.result?.stopReason)?.result.stopReason).toBe("end_turn");
  expect(fake.requests[0]!.body.messages.at(-1).content).toBe("say hi");
});

test("acpx exec --approve-all: a command that needs permission is asked for, approved by the client, and runs", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "run", args: { command: "touch made-by-acp" }, id: "call_run" }] }, { text: "made it" }]);
  const result = await acpx(["--approve-all", "--format", "json", "exec", "make the file"]);
  expect(result.code, result.stderr).toBe(0);
  expect(result.lines.some((line) => line.method === "session/request_permission")).toBe(true);
  expect(existsSync(join(sandbox.workspace, "made-by-acp"))).toBe(true);
  const tool = fake.requests[1]!.body.messages.find((m: any) => m.role === "tool");
  expect(tool.content).toContain("exit code 0");
});
