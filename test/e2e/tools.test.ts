import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

function toolAnswers(index: number): Array<{ tool_call_id: string; content: string }> {
  return fake.requests[index]!.body.messages.filter((m: any) => m.role === "tool");
}

function processesMatching(pattern: string): string {
  return new TextDecoder().decode(Bun.spawnSync(["pgrep", "-f", pattern]).stdout).trim();
}

test("run: denied headless in ask mode, allowed with -y, with exit code and output", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const touch = { toolCalls: [{ name: "run", args: { command: "touch made-by-run && echo hi" }, id: "call_run" }] };
  fake.script([touch, { text: "ok" }]);
  const asked = await runZero(["run", "--json", "make a file"], { sandbox });
  expect(asked.code).toBe(0);
  expect(existsSync(join(sandbox.workspace, "made-by-run"))).toBe(false);
  const events = jsonLines(asked.stdout);
  expect(events.some((e) => e.type === "permission.requested" && e.tool === "run")).toBe(true);
  expect(events.find((e) => e.type === "tool.completed")!.status).toBe("denied");
  expect(toolAnswers(1)[0]!.content).toContain("requires approval");

  fake.reset();
  fake.script([touch, { text: "ok" }]);
  const allowed = await runZero(["run", "-y", "make a file"], { sandbox });
  expect(allowed.code).toBe(0);
  expect(existsSync(join(sandbox.workspace, "made-by-run"))).toBe(true);
  expect(toolAnswers(1)[0]!.content).toBe("exit code 0\nhi\n");

  fake.reset();
  fake.script([touch, { text: "ok" }]);
  const acceptEdits = await runZero(["run", "--permission-mode", "accept-edits", "x"], { sandbox });
  expect(acceptEdits.code).toBe(0);
  expect(toolAnswers(1)[0]!.content).toContain("accept-edits mode requires approval for running commands");

  fake.reset();
  fake.script([touch, { text: "ok" }]);
  const readOnly = await runZero(["run", "--permission-mode", "read-only", "--json", "x"], { sandbox });
  expect(readOnly.code).toBe(0);
  const decided = jsonLines(readOnly.stdout).find((e) => e.type === "permission.decided")!;
  expect(decided).toMatchObject({ decision: "deny", source: "mode" });
  expect(toolAnswers(1)[0]!.content).toContain("read-only mode does not allow running commands");
});

test("run: a timed-out command leaves no process behind", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { toolTimeoutMs: 800 } }));
  const marker = `sleep 37.${process.pid}`;
  fake.script([{ toolCalls: [{ name: "run", args: { command: `(${marker}) & ${marker}` } }] }, { text: "ok" }]);
  const started = performance.now();
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(performance.now() - started).toBeLessThan(8_000);
  expect(toolAnswers(1)[0]!.content).toStartWith("timed out after 800 ms; the process group was terminated");
  expect(processesMatching(marker)).toBe("");
});

test("run: huge output becomes an artifact the model reads back", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  let uri = "";
  fake.script([
    { toolCalls: [{ name: "run", args: { command: "seq 1 200000" } }] },
    (req) => {
      const answer = req.body.messages.filter((m: any) => m.role === "tool").at(-1);
      uri = /artifact:\/\/[0-9a-f]{64}/.exec(answer.content)?.[0] ?? "missing";
      return { toolCalls: [{ name: "read", args: { path: uri, offset: 150000, limit: 2 } }] };
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "-y", "count"], { sandbox });
  expect(result.code).toBe(0);
  const first = toolAnswers(1)[0]!.content;
  expect(first.length).toBeLessThan(70_000);
  expect(first).toContain("exit code 0");
  expect(uri).toMatch(/^artifact:\/\/[0-9a-f]{64}$/);
  expect(toolAnswers(2).at(-1)!.content).toStartWith("150000\t150000\n150001\t150001");
});

test("run: reduced environment, no provider keys", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
  fake.script([{ toolCalls: [{ name: "run", args: { command: "env" } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "x"], { sandbox, env: { FAKE_KEY: "sk-provider-key-123", OPENAI_API_KEY: "sk-openai-999", ZERO_CLI_MODEL: "x/y" } });
  expect(result.code).toBe(0);
  const env = fake.requests[1]!.body.input.find((m: any) => m.type === "function_call_output").output as string;
  expect(env).toContain("PATH=");
  expect(env).not.toContain("sk-provider-key-123");
  expect(env).not.toContain("sk-openai-999");
  expect(env).not.toContain("ZERO_CLI_MODEL");
});

test("write: an edit then a read back sees the change; the human output shows the diff", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([
    { toolCalls: [{ name: "write", args: { operation: "edit", path: "README.md", oldText: "The answer is 42.", newText: "The answer is 43." } }] },
    { toolCalls: [{ name: "read", args: { path: "README.md" } }] },
    { text: "changed" },
  ]);
  const result = await runZero(["run", "--permission-mode", "accept-edits", "change the answer"], { sandbox });
  expect(result.code).toBe(0);
  expect(await Bun.file(join(sandbox.workspace, "README.md")).text()).toContain("The answer is 43.");
  expect(toolAnswers(2).at(-1)!.content).toContain("3\tThe answer is 43.");
  expect(result.stderr).toContain("-The answer is 42.");
  expect(result.stderr).toContain("+The answer is 43.");
});

test("write: denied in ask mode (headless) and in read-only mode; nothing changes", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const create = { toolCalls: [{ name: "write", args: { operation: "write", path: "new.txt", content: "x\n" } }] };
  for (const mode of ["ask", "read-only"]) {
    fake.reset();
    fake.script([create, { text: "ok" }]);
    const result = await runZero(["run", "--permission-mode", mode, "x"], { sandbox });
    expect(result.code).toBe(0);
    expect(existsSync(join(sandbox.workspace, "new.txt"))).toBe(false);
    expect(result.stderr).toContain("(denied:");
  }
});

test("write: a diff that does not apply is refused and changes nothing", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const before = await Bun.file(join(sandbox.workspace, "README.md")).text();
  const patch = ["--- a/README.md", "+++ b/README.md", "@@ -1,3 +1,3 @@", " # Not this project", " ", "-The answer is 41.", "+The answer is 40.", ""].join("\n");
  fake.script([{ toolCalls: [{ name: "write", args: { operation: "patch", patch } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code).toBe(0);
  const answer = toolAnswers(1)[0]!.content;
  expect(answer).toMatch(/patch|apply/i);
  expect(await Bun.file(join(sandbox.workspace, "README.md")).text()).toBe(before);
  const events = await runZero(["agents"], { sandbox }); // the workspace is still usable
  expect(events.code).toBe(0);
});

test("find: hides .env and other secret-like files even when asked for them", async () => {
  await Bun.write(join(sandbox.workspace, ".env"), "API_TOKEN=super-secret-value\n");
  await Bun.write(join(sandbox.workspace, ".env.example"), "API_TOKEN=\n");
  await Bun.write(join(sandbox.workspace, "src", "config.ts"), "export const token = process.env.API_TOKEN;\n");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([
    { toolCalls: [{ name: "find", args: { pattern: "API_TOKEN", glob: [".env", "**/.env*"] } }] },
    { toolCalls: [{ name: "find", args: { pattern: "API_TOKEN" } }] },
    { text: "ok" },
  ]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  const withGlob = toolAnswers(1).at(-1)!.content;
  expect(withGlob).not.toContain("super-secret-value");
  expect(withGlob).toContain(".env.example");
  const plain = toolAnswers(2).at(-1)!.content;
  expect(plain).toContain("src/config.ts:1:");
  expect(plain).not.toContain("super-secret-value");
});

test("read: a direct read of a secret-like file asks (denied headless), full-access reads it", async () => {
  await Bun.write(join(sandbox.workspace, ".env"), "API_TOKEN=abc\n");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const readEnv = { toolCalls: [{ name: "read", args: { path: ".env" } }] };
  fake.script([readEnv, { text: "ok" }]);
  const asked = await runZero(["run", "--json", "x"], { sandbox });
  const events = jsonLines(asked.stdout);
  expect(events.find((e) => e.type === "permission.requested")).toMatchObject({ tool: "read", operation: "read-secret" });
  expect(events.find((e) => e.type === "tool.completed")!.status).toBe("denied");
  fake.reset();
  fake.script([readEnv, { text: "ok" }]);
  await runZero(["run", "-y", "x"], { sandbox });
  expect(toolAnswers(1).at(-1)!.content).toContain("API_TOKEN=");
});

test("find: symbol mode lists definitions of a name, not its uses", async () => {
  await Bun.write(join(sandbox.workspace, "src", "config.ts"), "export function loadSettings(path: string) {\n  return path;\n}\n");
  await Bun.write(join(sandbox.workspace, "src", "use.ts"), "import { loadSettings } from './config';\nloadSettings('a');\n");
  await Bun.write(join(sandbox.workspace, "tools", "settings.py"), "def load_settings():\n    return load_settings()\n");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([
    { toolCalls: [{ name: "find", args: { name: "loadSettings" } }] },
    { toolCalls: [{ name: "find", args: { mode: "symbol", name: "load_settings" } }] },
    { toolCalls: [{ name: "find", args: { name: "load settings()" } }] },
    { text: "ok" },
  ]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(toolAnswers(1).at(-1)!.content).toBe("1 definition of loadSettings in 1 file in .\nsrc/config.ts:1: export function loadSettings(path: string) {");
  expect(toolAnswers(2).at(-1)!.content).toBe("1 definition of load_settings in 1 file in .\ntools/settings.py:1: def load_settings():");
  expect(toolAnswers(3).at(-1)!.content).toContain('name "load settings()" is not an identifier');
  const statuses = jsonLines(result.stdout).filter((e) => e.type === "tool.completed").map((e) => e.status);
  expect(statuses).toEqual(["completed", "completed", "failed"]);
  // The model is told about the mode in the tool's schema.
  const declared = fake.requests[0]!.body.tools.find((t: any) => t.function.name === "find").function.parameters;
  expect(declared.properties.mode.enum).toContain("symbol");
  expect(declared.properties.name.type).toBe("string");
});
