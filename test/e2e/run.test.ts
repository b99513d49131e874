import { describe, expect, test } from "bun:test";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { ZERO_BIN, fakeConfig, runZero, type Protocol, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

function lastUserText(body: any): string {
  // Chat/Anthropic: messages; Responses: input.
  const list: any[] = body.messages ?? body.input ?? [];
  const user = list.filter((m) => m.role === "user").at(-1);
  if (typeof user?.content === "string") return user.content;
  return (user?.content ?? []).map((p: any) => p.text ?? "").join("");
}

describe("zero run answers through each wire protocol", () => {
  for (const protocol of ["chat", "responses", "anthropic"] as Protocol[]) {
    test(protocol, async () => {
      sandbox.writeUserConfig(fakeConfig(fake.url, protocol));
      fake.script([{ text: ["hello ", "from ", "fake"] }]);
      const result = await runZero(["run", "say hi"], { sandbox, env: { FAKE_KEY: "sk-test-key" } });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("hello from fake\n");
      expect(fake.requests).toHaveLength(1);
      const request = fake.requests[0]!;
      expect(request.protocol).toBe(protocol);
      expect(request.body.model).toBe("fake-1");
      expect(lastUserText(request.body)).toBe("say hi");
      if (protocol === "responses") expect(request.headers.authorization).toBe("Bearer sk-test-key");
      if (protocol === "anthropic") expect(request.headers["x-api-key"]).toBe("sk-test-key");
      if (protocol === "chat") expect(request.headers.authorization).toBeUndefined();
    });
  }
});

test("the task can come from standard input", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run"], { sandbox, stdin: "explain the runtime\n" });
  expect(result.code).toBe(0);
  expect(lastUserText(fake.requests[0]!.body)).toBe("explain the runtime");
});

test("no task is a usage error and sends nothing", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const result = await runZero(["run"], { sandbox, stdin: "" });
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.stderr).toContain("a task is required");
  expect(fake.requests).toHaveLength(0);
});

test("unknown commands and flags are usage errors with empty stdout", async () => {
  const unknownCommand = await runZero(["frobnicate"], { sandbox });
  expect(unknownCommand.code).toBe(2);
  expect(unknownCommand.stdout).toBe("");
  expect(unknownCommand.stderr).toContain("unknown command 'frobnicate'");
  const unknownFlag = await runZero(["run", "--nope", "x"], { sandbox });
  expect(unknownFlag.code).toBe(2);
  expect(unknownFlag.stdout).toBe("");
  expect(unknownFlag.stderr).toContain("unknown option --nope");
  const badMode = await runZero(["run", "--permission-mode", "yolo", "x"], { sandbox });
  expect(badMode.code).toBe(2);
  expect(badMode.stderr).toContain("allowed: read-only, ask, accept-edits, full-access");
  expect(fake.requests).toHaveLength(0);
});

test("--version and --help are plain and fast", async () => {
  const version = await runZero(["--version"], { sandbox });
  expect(version.code).toBe(0);
  expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  const help = await runZero(["--help"], { sandbox });
  expect(help.code).toBe(0);
  for (const command of ["run", "agents", "init", "trust"]) expect(help.stdout).toContain(`zero ${command}`);
  const runHelp = await runZero(["run", "--help"], { sandbox });
  expect(runHelp.stdout).toContain("--permission-mode");
});

test("a missing API key is a clear error before any request", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
  const result = await runZero(["run", "hi"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("FAKE_KEY");
  expect(result.stderr).not.toContain("    at ");
  expect(fake.requests).toHaveLength(0);
  // The built-in default (gateway) names its canonical variable.
  sandbox.writeUserConfig({ version: 2 });
  const builtIn = await runZero(["run", "hi"], { sandbox });
  expect(builtIn.code).toBe(2);
  expect(builtIn.stderr).toContain("AI_GATEWAY_API_KEY");
});

test("an unknown --model alias and unsupported options fail before any request", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      models: { alt: { provider: "fake", model: "fake-2", supportedReasoningEfforts: ["low", "high"], supportedSpeeds: ["standard"] } },
    }),
  );
  const unknown = await runZero(["run", "-m", "nosuch", "x"], { sandbox });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("'nosuch' is not a configured model alias");
  const effort = await runZero(["run", "-m", "alt", "--reasoning-effort", "max", "x"], { sandbox });
  expect(effort.code).toBe(2);
  expect(effort.stderr).toContain("does not support reasoning effort 'max'");
  const speed = await runZero(["run", "-m", "alt", "--speed", "fast", "x"], { sandbox });
  expect(speed.code).toBe(2);
  expect(speed.stderr).toContain("does not support speed 'fast'");
  expect(fake.requests).toHaveLength(0);

  fake.script([{ text: "fine" }]);
  const ok = await runZero(["run", "-m", "alt", "--reasoning-effort", "high", "--speed", "standard", "x"], { sandbox });
  expect(ok.code).toBe(0);
  expect(fake.requests[0]!.body.model).toBe("fake-2");
  expect(fake.requests[0]!.body.reasoning_effort).toBe("high");
});

test("model text cannot drive the terminal in human output", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: ["red \x1b[3", "1mtext\x1b[0m and \x1b]52;c;cHduZWQ=\x07clip"] }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("red text and clip\n");
  expect(result.stdout).not.toContain("\x1b");
});

test("a reader that closes stdout early cancels the run quietly (no bogus error)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  for (const args of [["run", "--json", "x"], ["run", "x"]]) {
    fake.reset();
    fake.script([{ text: Array.from({ length: 40 }, (_, i) => `chunk ${i}\n`), chunkDelayMs: 25 }]);
    const proc = Bun.spawn([ZERO_BIN, ...args], { cwd: sandbox.workspace, env: sandbox.env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const reader = proc.stdout.getReader();
    await reader.read(); // the first output arrived
    await reader.cancel(); // like `| head -1` exiting
    const code = await proc.exited;
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).not.toContain("error");
    expect(code).toBe(130);
  }
});

test("human output redacts a secret the model echoes, even split across deltas", async () => {
  const token = `ghp_${"A1b2C3d4E5".repeat(3)}Z9y8x7`;
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: [`your token is ${token.slice(0, 10)}`, `${token.slice(10)} ok`] }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("your token is [REDACTED:github-token] ok\n");
});

test("a run with denied calls ends with one line naming the flag that would allow them", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const edit = { toolCalls: [{ name: "write", args: { operation: "write", path: "new.txt", content: "x\n" } }] };
  fake.script([edit, { text: "could not write" }]);
  const asked = await runZero(["run", "make a file"], { sandbox });
  expect(asked.code).toBe(0);
  const lines = asked.stderr.split("\n").filter((line) => line !== "");
  expect(lines[0]).toStartWith("• write new.txt (denied: ask mode requires approval for editing files");
  expect(lines[0]).not.toContain("denied: denied");
  expect(lines.at(-1)).toBe("zero: 1 tool call was denied (edits); rerun with --permission-mode accept-edits to allow it");

  fake.reset();
  const command = { toolCalls: [{ name: "run", args: { command: "echo hi" } }] };
  fake.script([edit, command, { text: "done" }]);
  const acceptEdits = await runZero(["run", "--permission-mode", "accept-edits", "x"], { sandbox });
  expect(acceptEdits.code).toBe(0);
  const closing = acceptEdits.stderr.split("\n").filter((line) => line.startsWith("zero:"));
  expect(closing).toEqual(["zero: 1 tool call was denied (commands); rerun with --permission-mode full-access (or --yes) to allow it"]);
});
