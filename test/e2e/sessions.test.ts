import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

/** The one workspace state directory under the sandbox's XDG_STATE_HOME. */
function stateDirOf(): string {
  const base = join(sandbox.stateHome, "zero-cli");
  const [hash] = readdirSync(base);
  return join(base, hash!);
}

function texts(body: any): Array<[string, string]> {
  return body.messages
    .filter((m: any) => m.role === "user" || m.role === "assistant")
    .map((m: any) => [m.role, typeof m.content === "string" ? m.content : m.content.map((p: any) => p.text ?? "").join("")]);
}

test("--resume latest continues the newest session with its exact history", async () => {
  fake.script([{ text: "Noted: 42." }]);
  const first = await runZero(["run", "remember the number 42"], { sandbox });
  expect(first.code).toBe(0);
  fake.script([{ text: "It was 42." }]);
  const second = await runZero(["run", "--resume", "latest", "what number?"], { sandbox });
  expect(second.code).toBe(0);
  expect(texts(fake.requests[1]!.body)).toEqual([
    ["user", "remember the number 42"],
    ["assistant", "Noted: 42."],
    ["user", "what number?"],
  ]);
  const sessions = await runZero(["sessions"], { sandbox });
  const lines = sessions.stdout.trim().split("\n");
  expect(lines).toHaveLength(1); // the resumed run belongs to the same session
  // id, time, status, tokens of both runs (the fake reports 15 per step), title.
  expect(lines[0]).toMatch(/^zero_\d{14}_[0-9a-z]+ {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}completed {4}30 tok +remember the number 42$/);
});

test("zero sessions lists each session, newest first", async () => {
  fake.script([{ text: "a" }, { text: "b" }]);
  const one = jsonLines((await runZero(["run", "--json", "first task"], { sandbox })).stdout)[0]!;
  const two = jsonLines((await runZero(["run", "--json", "second task"], { sandbox })).stdout)[0]!;
  const listed = (await runZero(["sessions"], { sandbox })).stdout.trim().split("\n").map((line) => line.split("  ")[0]);
  expect(listed).toEqual([two.sessionId, one.sessionId]);
});

test("resume is refused with the reason: unknown id, other workspace, changed model (unless --model)", async () => {
  fake.script([{ text: "ok" }]);
  const first = jsonLines((await runZero(["run", "--json", "hello"], { sandbox })).stdout)[0]!;
  const unknown = await runZero(["run", "--resume", "zero_20200101000000_nope", "x"], { sandbox });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("no session 'zero_20200101000000_nope' in this workspace");
  const elsewhere = join(sandbox.root, "elsewhere");
  mkdirSync(elsewhere);
  const other = await runZero(["run", "--cwd", elsewhere, "--resume", first.sessionId, "x"], { sandbox });
  expect(other.code).toBe(2);
  expect(other.stderr).toContain("in this workspace");
  // The alias now points at another model id: refused, unless a replacement is named.
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { fake: { provider: "fake", model: "fake-2" } } }));
  const drifted = await runZero(["run", "--resume", "latest", "x"], { sandbox });
  expect(drifted.code).toBe(2);
  expect(drifted.stderr).toContain("was openai-compatible fake-1 and is now openai-compatible fake-2");
  expect(fake.requests).toHaveLength(1);
  fake.script([{ text: "ok" }]);
  const replaced = await runZero(["run", "--resume", "latest", "--model", "fake", "x"], { sandbox });
  expect(replaced.code).toBe(0);
  expect(fake.requests[1]!.body.model).toBe("fake-2");
});

test("every event a client saw is in the store, in order; files are private", async () => {
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }] }, { text: "done" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  const seen = jsonLines(result.stdout);
  const dir = stateDirOf();
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  expect(statSync(join(dir, "zero-cli.db")).mode & 0o777).toBe(0o600);
  const db = new Database(join(dir, "zero-cli.db"), { readonly: true });
  try {
    const stored = db.query("SELECT * FROM events ORDER BY rowid").all() as Array<Record<string, unknown>>;
    expect(stored).toHaveLength(seen.length);
  } finally {
    db.close();
  }
});

test("kill -9 mid-run: the run is listed as interrupted and --resume-run continues it", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { runTimeoutMs: 600_000 } }));
  fake.script([
    { reasoning: "first look", toolCalls: [{ name: "read", args: { path: "README.md" } }], usage: { input: 100, output: 10 } },
    { text: ["partial ", "never finished"], stallAfterChunks: 1 },
  ]);
  const { proc, result } = spawnZero(["run", "--json", "long task"], { sandbox });
  await fake.waitForRequests(2, 10_000);
  await Bun.sleep(300);
  proc.kill("SIGKILL");
  const killed = await result;
  const started = jsonLines(killed.stdout)[0]!;

  const listed = await runZero(["sessions", "--interrupted"], { sandbox });
  expect(listed.stdout).toContain(started.runId);
  fake.script([{ text: "finished now", usage: { input: 50, output: 5 } }]);
  const resumed = await runZero(["run", "--json", "--resume-run", "latest", "please continue"], { sandbox });
  expect(resumed.code).toBe(0);
  const events = jsonLines(resumed.stdout);
  expect(new Set(events.map((e) => e.runId))).toEqual(new Set([started.runId]));
  expect(events[0]!.sequence).toBeGreaterThan(jsonLines(killed.stdout).at(-1)!.sequence);
  const last = events.at(-1)!;
  expect(last.usage.inputTokens).toBe(100 + 50); // spent budget carried over (the stalled step never reported usage)
  // The continued request holds the earlier turns verbatim, then the new task.
  const roles = fake.requests.at(-1)!.body.messages.map((m: any) => m.role);
  expect(roles.slice(1)).toEqual(["user", "assistant", "tool", "user"]);
  expect((await runZero(["sessions", "--interrupted"], { sandbox })).stdout).not.toContain(started.runId);
});

test("--resume-run refuses --add-dir (a continued run keeps its roots) with exit 2, before touching the store or the model", async () => {
  const extra = join(sandbox.root, "extra");
  mkdirSync(extra);
  const result = await runZero(["run", "--resume-run", "latest", "--add-dir", extra, "go on"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("--add-dir cannot widen them");
  expect(result.stderr).not.toContain("    at ");
  expect(fake.requests).toHaveLength(0);
});

test("--resume-run with a passed deadline stops at once", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { runTimeoutMs: 1500 } }));
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }] }, { kind: "stall" }]);
  const { proc, result } = spawnZero(["run", "x"], { sandbox });
  await fake.waitForRequests(2, 10_000);
  proc.kill("SIGKILL");
  await result;
  await Bun.sleep(1600); // the absolute deadline passes
  const resumed = await runZero(["run", "--json", "--resume-run", "latest", "go on"], { sandbox });
  expect(resumed.code).toBe(4);
  expect(jsonLines(resumed.stdout).at(-1)!).toMatchObject({ type: "run.completed", status: "limit", reason: "deadline" });
  expect(fake.requests).toHaveLength(2); // no new model request
});

test("storage.enabled: false keeps nothing, and resume says why", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { storage: { enabled: false } }));
  fake.script([{ text: "ok" }]);
  expect((await runZero(["run", "x"], { sandbox })).code).toBe(0);
  expect(existsSync(join(sandbox.stateHome, "zero-cli"))).toBe(false);
  const resumed = await runZero(["run", "--resume", "latest", "x"], { sandbox });
  expect(resumed.code).toBe(2);
  expect(resumed.stderr).toContain("persistence is disabled (storage.enabled: false)");
});

test("a corrupted database is set aside with a notice, and zero still runs", async () => {
  fake.script([{ text: "first" }, { text: "second" }]);
  await runZero(["run", "x"], { sandbox });
  const db = join(stateDirOf(), "zero-cli.db");
  await Bun.write(db, "this is not a sqlite database at all".repeat(200));
  const result = await runZero(["run", "y"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("second\n");
  expect(result.stderr).toContain("corrupt");
  expect(readdirSync(stateDirOf()).some((name) => name.startsWith("zero-cli.db.corrupt-"))).toBe(true);
  expect((await runZero(["sessions"], { sandbox })).stdout.trim().split("\n")).toHaveLength(1);
});

test("ZERO_CLI_STATE_DIR must be absolute and a directory the user owns", async () => {
  fake.script([{ text: "ok" }]);
  const relative = await runZero(["run", "x"], { sandbox, env: { ZERO_CLI_STATE_DIR: "relative/state" } });
  expect(relative.code).toBe(2);
  expect(relative.stderr).toContain("ZERO_CLI_STATE_DIR must be an absolute path");
  const file = join(sandbox.root, "a-file");
  await Bun.write(file, "x");
  const notDir = await runZero(["run", "x"], { sandbox, env: { ZERO_CLI_STATE_DIR: file } });
  expect(notDir.code).toBe(2);
  expect(notDir.stderr).toContain("must be a directory");
  const custom = join(sandbox.root, "custom-state");
  const ok = await runZero(["run", "x"], { sandbox, env: { ZERO_CLI_STATE_DIR: custom } });
  expect(ok.code).toBe(0);
  expect(readdirSync(custom)).toHaveLength(1); // the workspace's hashed directory
  expect(existsSync(join(sandbox.stateHome, "zero-cli"))).toBe(false);
});
