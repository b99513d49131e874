import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** Tool messages of a Chat Completions request body. */
function toolMessages(body: any): Array<{ tool_call_id: string; content: string }> {
  return body.messages.filter((m: any) => m.role === "tool");
}

test("the runtime runs a tool and sends its result back", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_readme" }] }, { text: "The answer is 42." }]);
  const result = await runZero(["run", "what is the answer?"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("The answer is 42.\n");
  expect(result.stderr).toContain("• read README.md");
  expect(fake.requests).toHaveLength(2);
  const [first, second] = fake.requests;
  // The six tools of the build profile, plus the todo ledger every run above flash depth gets.
  expect(first!.body.tools.map((t: any) => t.function.name)).toEqual(["read", "write", "run", "find", "search", "delegate", "todo"]);
  const results = toolMessages(second!.body);
  expect(results).toHaveLength(1);
  expect(results[0]!.tool_call_id).toBe("call_readme");
  expect(results[0]!.content).toContain("3\tThe answer is 42.");
});

test("several calls in one step are all answered, in call order", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([
    {
      toolCalls: [
        { name: "read", args: { path: "README.md" }, id: "call_a" },
        { name: "read", args: { path: "src/main.ts" }, id: "call_b" },
        { name: "read", args: { path: "../secret.txt" }, id: "call_c" },
      ],
    },
    { text: "done" },
  ]);
  writeFileSync(join(sandbox.root, "secret.txt"), "TOP-SECRET-VALUE\n");
  const result = await runZero(["run", "read both"], { sandbox });
  expect(result.code).toBe(0);
  const results = toolMessages(fake.requests[1]!.body);
  expect(results.map((r) => r.tool_call_id)).toEqual(["call_a", "call_b", "call_c"]);
  expect(results[0]!.content).toContain("Sample project");
  expect(results[1]!.content).toContain("export const main");
  expect(results[2]!.content).toContain("is outside the allowed roots");
  expect(results[2]!.content).not.toContain("TOP-SECRET-VALUE");
});

test("maxSteps stops a model that never stops calling tools", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { maxSteps: 3 } } }));
  let n = 0;
  fake.script([]);
  const fallback = () => ({ toolCalls: [{ name: "read", args: { path: "README.md", offset: ++n } }] });
  fake.script(Array.from({ length: 6 }, () => fallback));
  const result = await runZero(["run", "--json", "loop forever"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests).toHaveLength(3);
  const events = jsonLines(result.stdout);
  const last = events.at(-1)!;
  expect(last.type).toBe("run.completed");
  expect(last.status).toBe("limit");
  expect(last.reason).toBe("max_steps");
  expect(events.some((e) => e.type === "guard.triggered" && e.guard === "max_steps")).toBe(true);
});

test("maxToolCalls leaves the extra call unexecuted", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { maxToolCalls: 2 } } }));
  fake.script([
    {
      toolCalls: [
        { name: "read", args: { path: "README.md" } },
        { name: "read", args: { path: "src/main.ts" } },
        { name: "read", args: { path: "src" } },
      ],
    },
    { text: "never reached" },
  ]);
  const result = await runZero(["run", "--json", "read three"], { sandbox });
  expect(result.code).toBe(4);
  const events = jsonLines(result.stdout);
  // Read-only calls run in parallel: the refused third call may complete first.
  const completed = events.filter((e) => e.type === "tool.completed");
  expect(completed.map((e) => e.status).sort()).toEqual(["completed", "completed", "failed"]);
  expect(completed.find((e) => e.status === "failed")!.output).toContain("tool-call limit");
  expect(events.filter((e) => e.type === "tool.started")).toHaveLength(2);
  expect(events.at(-1)!.reason).toBe("max_tool_calls");
  expect(fake.requests).toHaveLength(1);
});

test("three identical consecutive calls trip the repetition guard", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const same = () => ({ toolCalls: [{ name: "read", args: { path: "README.md" } }] });
  fake.script([same, same, same, same, same]);
  const result = await runZero(["run", "--json", "repeat"], { sandbox });
  expect(result.code).toBe(4);
  const events = jsonLines(result.stdout);
  expect(events.filter((e) => e.type === "tool.started")).toHaveLength(2);
  expect(events.some((e) => e.type === "guard.triggered" && e.guard === "repetition")).toBe(true);
  expect(events.at(-1)!.reason).toBe("repetition");
  expect(fake.requests).toHaveLength(3);
});

test("a tool outside the agent's allowlist is refused without running", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { tools: ["read"] } } }));
  fake.script([{ toolCalls: [{ name: "run", args: { command: "touch pwned" }, id: "call_run" }] }, { text: "ok" }]);
  const result = await runZero(["run", "--json", "try run"], { sandbox });
  expect(result.code).toBe(0);
  expect(fake.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(["read", "todo"]);
  const answer = toolMessages(fake.requests[1]!.body)[0]!;
  expect(answer.tool_call_id).toBe("call_run");
  expect(answer.content).toContain("not available to agent build");
  const completed = jsonLines(result.stdout).filter((e) => e.type === "tool.completed");
  expect(completed).toHaveLength(1);
  expect(completed[0]!.status).toBe("failed");
});

test("invalid tool input is answered with a readable error", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "read", args: { file: "README.md" }, id: "call_bad" }] }, { text: "ok" }]);
  const result = await runZero(["run", "bad input"], { sandbox });
  expect(result.code).toBe(0);
  const answers = toolMessages(fake.requests[1]!.body);
  expect(answers).toHaveLength(1);
  expect(answers[0]!.content).toStartWith("invalid input for read: ");
  expect(answers[0]!.content).toContain("path");

  fake.reset();
  fake.script([{ toolCalls: [{ name: "read", args: '{"path": "README', id: "call_json" }] }, { text: "ok" }]);
  const broken = await runZero(["run", "broken json"], { sandbox });
  expect(broken.code).toBe(0);
  const answer = toolMessages(fake.requests[1]!.body);
  expect(answer.map((a) => a.tool_call_id)).toEqual(["call_json"]);
  expect(answer[0]!.content).toBe("invalid call to read: its arguments are not valid JSON");
  expect(broken.stderr).toContain("(failed: invalid call to read: its arguments are not valid JSON)");
});

test("zero's own config and state directories are never readable by tools", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  await runZero(["trust"], { sandbox });
  const trustFile = join(sandbox.configDir, "trusted-workspaces.json");
  fake.script([{ toolCalls: [{ name: "read", args: { path: trustFile }, id: "call_cfg" }] }, { text: "ok" }]);
  await runZero(["run", "--add-dir", sandbox.home, "x"], { sandbox });
  const answer = toolMessages(fake.requests[1]!.body)[0]!;
  expect(answer.content).not.toContain(sandbox.workspace);
  expect(answer.content).toMatch(/private|not allowed|outside/i);
});

test("reasoning streams separately and never joins the answer", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ reasoning: "THINK", text: "ANS" }]);
  const human = await runZero(["run", "x"], { sandbox });
  expect(human.stdout).toBe("ANS\n");
  fake.script([{ reasoning: ["TH", "INK"], text: "ANS" }]);
  const json = await runZero(["run", "--json", "x"], { sandbox });
  const events = jsonLines(json.stdout);
  expect(events.filter((e) => e.type === "reasoning.delta").map((e) => e.text).join("")).toBe("THINK");
  expect(events.filter((e) => e.type === "message.delta").map((e) => e.text).join("")).toBe("ANS");
  expect(events.at(-1)!.text).toBe("ANS");
});

test("the system prompt carries runtime facts and at most 64 KiB of AGENTS.md", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  writeFileSync(join(sandbox.workspace, "AGENTS.md"), `START\n${"x".repeat(100 * 1024)}\nEND-MARKER\n`);
  writeFileSync(join(sandbox.workspace, "src", "AGENTS.md"), "NESTED-AGENTS-MARKER\n");
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  const system: string = fake.requests[0]!.body.messages[0].content;
  expect(fake.requests[0]!.body.messages[0].role).toBe("system");
  expect(system).toContain(`Workspace root: ${sandbox.workspace}`);
  expect(system).toContain("Permission mode: ask");
  expect(system).toContain("START");
  expect(system).not.toContain("END-MARKER");
  expect(system).not.toContain("NESTED-AGENTS-MARKER");
  const agentsPart = system.slice(system.indexOf("START"));
  expect(new TextEncoder().encode(agentsPart).length).toBeLessThanOrEqual(64 * 1024 + 64);
});

test("--add-dir lets tools reach another directory", async () => {
  const extra = join(sandbox.root, "extra");
  Bun.spawnSync(["mkdir", "-p", extra]);
  writeFileSync(join(extra, "a.txt"), "extra content\n");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const call = { toolCalls: [{ name: "read", args: { path: join(extra, "a.txt") }, id: "call_x" }] };
  fake.script([call, { text: "ok" }]);
  await runZero(["run", "x"], { sandbox });
  expect(toolMessages(fake.requests[1]!.body)[0]!.content).toMatch(/outside|not allowed|allowed roots/i);
  fake.requests.length = 0;
  fake.script([call, { text: "ok" }]);
  await runZero(["run", "--add-dir", extra, "x"], { sandbox });
  expect(toolMessages(fake.requests[1]!.body)[0]!.content).toContain("extra content");
});

test("tool names and guard messages from the model cannot drive the terminal", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const evil = { toolCalls: [{ name: "evil\x1b]0;PWNED\x07\x1b[2J", args: { path: "x" } }] };
  fake.script([evil, evil, evil]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(4);
  expect(result.stderr).toContain("• evil");
  expect(result.stderr).toContain("zero: stopped: the model made the same evil");
  expect(result.stderr).not.toContain("\x1b");
  expect(result.stderr).not.toContain("\x07");
});

test("AGENTS.md is read through the workspace boundary, never from a device or outside", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agentsMd = join(sandbox.workspace, "AGENTS.md");
  for (const make of [
    () => Bun.spawnSync(["ln", "-s", "/proc/self/environ", agentsMd]),
    () => Bun.spawnSync(["ln", "-s", "/dev/zero", agentsMd]),
    () => Bun.spawnSync(["mkfifo", agentsMd]),
  ]) {
    Bun.spawnSync(["rm", "-f", agentsMd]);
    make();
    fake.reset();
    fake.script([{ text: "ok" }]);
    const result = await runZero(["run", "x"], { sandbox, env: { SECRET_THING_KEY: "sk-live-123456" }, timeoutMs: 10_000 });
    expect(result.code).toBe(0);
    const system: string = fake.requests[0]!.body.messages[0].content;
    expect(system).not.toContain("sk-live-123456");
    expect(system).not.toContain("Repository instructions");
  }
});
